#!/usr/bin/env python3
"""A stand-in for an app's own registration API, for the custom-api plugin's tests.

It checks that every call comes from Gatehouse (a bearer secret, or an HMAC-SHA256 signature over
"<timestamp>.<body>" no older than 5 minutes), records each call, and answers by what the client's
custom data asks for (`behaviour`), so tests can drive every kind of answer:

  ok (default)      success with customData.subject (default "customer-1") and customData.claims
  retry             a retryable failure;  retry-once: a retryable failure, then success, per flow
  final             a final failure with error "customer_unknown"
  slow              answers after 30 s;  status500: HTTP 500;  malformed: not JSON
  no-subject        success without a subject;  huge: a 200 kB answer
Two-step: `init` answers a challenge with data {"deepLink": ...} and state {"token": ...}; `finish`
succeeds when customData.code is "1234" and the state came back, else a retryable failure.

Usage: app_api.py --secret S --port-file FILE --log FILE [--port P]   (listens on 127.0.0.1, a free port unless --port)
"""
import argparse, hashlib, hmac, json, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

parser = argparse.ArgumentParser()
parser.add_argument("--secret", required=True)
parser.add_argument("--port-file", required=True)
parser.add_argument("--log", required=True)
parser.add_argument("--port", type=int, default=0, help="a fixed port (to restart the API where it was); 0: a free one")
args = parser.parse_args()
lock = threading.Lock()
retried = set()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, status, payload):
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def authentic(self, body):
        signature = self.headers.get("X-Gatehouse-Signature")
        if signature:
            timestamp = self.headers.get("X-Gatehouse-Timestamp", "")
            if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > 300:
                return "stale or missing timestamp"
            expected = "v1=" + hmac.new(args.secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
            return None if hmac.compare_digest(signature, expected) else "bad signature"
        authorization = self.headers.get("Authorization", "")
        if authorization.startswith("Bearer "):
            return None if hmac.compare_digest(authorization[7:], args.secret) else "bad bearer secret"
        return "no credentials"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        problem = self.authentic(body)
        with lock, open(args.log, "a") as log:
            log.write(json.dumps({"headers": dict(self.headers), "body": body.decode(), "problem": problem}) + "\n")
        if problem:
            return self.answer(401, {"error": problem})
        call = json.loads(body)
        data = call.get("customData") or {}
        behaviour = data.get("behaviour", "ok")
        if call["step"] == "init":
            return self.answer(200, {"result": "challenge", "data": {"deepLink": "bankid:///?token=T-" + call["flow"][:8]},
                                     "state": {"token": "T-" + call["flow"][:8]}})
        if call["step"] == "finish":
            if data.get("code") == "1234" and call.get("state", {}).get("token") == "T-" + call["flow"][:8]:
                return self.answer(200, {"result": "success", "subject": "eid-" + call["flow"][:8], "claims": {"name": "Eva Identity"}})
            return self.answer(200, {"result": "failure", "retryable": True, "error": "wrong_code", "message": "That code is not right."})
        if behaviour == "retry" or (behaviour == "retry-once" and call["flow"] not in retried):
            retried.add(call["flow"])
            return self.answer(200, {"result": "failure", "retryable": True, "error": "try_again", "message": "Please try again."})
        if behaviour == "final":
            return self.answer(200, {"result": "failure", "error": "customer_unknown", "message": "We could not find you as a customer."})
        if behaviour == "slow":
            time.sleep(30)
        if behaviour == "status500":
            return self.answer(500, {"error": "boom"})
        if behaviour == "malformed":
            return self.answer(200, b"this is not json")
        if behaviour == "no-subject":
            return self.answer(200, {"result": "success"})
        if behaviour == "huge":
            return self.answer(200, {"result": "success", "subject": "x", "padding": "x" * 200_000})
        return self.answer(200, {"result": "success", "subject": data.get("subject", "customer-1"), "username": data.get("username"),
                                 "claims": data.get("claims", {})})

    def log_message(self, *_):
        pass


ThreadingHTTPServer.allow_reuse_address = True
server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
with open(args.port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.rename(args.port_file + ".tmp", args.port_file)
server.serve_forever()
