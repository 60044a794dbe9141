#!/usr/bin/env python3
"""Three broker nodes on one PostgreSQL: any node continues any flow.

Starts a throw-away PostgreSQL (Tests/postgres/postgres.sh) and three `gatehouse serve` processes on
one database, with the same issuer and key-encryption key (as behind a load balancer), then proves
over HTTP that nothing a second node needs lives in one node's memory:

- a flow started on node A is answered (wrongly) on B and completed on C; a browser sign-in whose
  page came from A is posted to B and its code redeemed on C;
- a jti used on A is refused on B; a lockout earned on A holds on B and C;
- a rotated refresh token reused on C revokes the family issued on A (and rotated on B);
- a policy toggle (stateless on) made through B's admin API is in force on A within the bound;
- the same authorization code redeemed on two nodes at the same instant succeeds exactly once
  (repeated many times);
- a key rotated with the CLI is published by every node's JWKS before any node signs with it;
- PostgreSQL killed: OAuth endpoints and the flow API answer 503 temporarily_unavailable, /readyz is
  not ready, a node started meanwhile waits for its database; PostgreSQL back: everything recovers
  without a restart.

    Tests/multinode/run.sh     (builds nothing: needs .build/debug/gatehouse)
"""
import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from html import unescape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlencode, urlsplit

import jwt
import pyotp
import requests
from soft_webauthn import SoftWebauthnDevice
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("GATEHOUSE_BIN", os.path.join(REPO, ".build", "debug", "gatehouse"))
POSTGRES = os.path.join(REPO, "Tests", "postgres", "postgres.sh")
ISSUER = "https://login.example.test"
CALLBACK = "https://web.example.test/callback"
CUSTOM_SECRET = "multinode-custom-api-secret-" + secrets.token_hex(8)
PASSWORD = "correct horse battery staple"
WEB_SECRET = "multinode-web-secret-" + secrets.token_hex(8)
ADMIN_TOKEN = "multinode-admin-token-" + secrets.token_hex(16)
KEK = None  # set in main (gatehouse keys generate-kek)
TIMEOUT = 10
# The documented bound: an app's policy changed on one node is in force on every node within a
# second (AppCache.lifetime); allow for scheduling on a loaded 2-core machine.
POLICY_BOUND = 2.5

failures = []


def check(description, condition, detail=""):
    print(f"  {'ok  ' if condition else 'FAIL'} {description}" + ("" if condition or not detail else f": {detail}"))
    if not condition:
        failures.append(description)


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from free_port import free_port  # noqa: E402  (a port outside the kernel's ephemeral range)


class Node:
    def __init__(self, name, work, config):
        self.name, self.port = name, free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = os.path.join(work, f"node-{name}.log")
        self.config = config
        self.process = None

    def start(self, wait=True):
        env = {**os.environ, "GATEHOUSE_KEK": KEK, "GATEHOUSE_ADMIN_TOKEN": ADMIN_TOKEN, "WEB_SECRET": WEB_SECRET, "CUSTOM_SECRET": CUSTOM_SECRET}
        self.process = subprocess.Popen(
            [BIN, "serve", "--config", self.config, "--listen", f"127.0.0.1:{self.port}"],
            stdout=open(self.log, "a"), stderr=subprocess.STDOUT, env=env,
        )
        if wait:
            self.wait_ready()

    def wait_ready(self, seconds=30):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"node {self.name} exited: {open(self.log).read()[-2000:]}")
            try:
                if requests.get(self.base + "/readyz", timeout=1).status_code == 200:
                    return True
            except requests.RequestException:
                pass
            time.sleep(0.1)
        return False

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()

    def post(self, path, **kwargs):
        return requests.post(self.base + path, timeout=TIMEOUT, **kwargs)

    def get(self, path, **kwargs):
        return requests.get(self.base + path, timeout=TIMEOUT, **kwargs)

    def token(self, **form):
        return self.post("/oauth2/token", data=form, auth=("web", WEB_SECRET))

    def flow(self, body):
        return self.post("/v1/flows", json=body, auth=("web", WEB_SECRET))

    def answer(self, flow, answer):
        return self.post(f"/v1/flows/{flow}", json={"answer": answer}, auth=("web", WEB_SECRET))


def error_of(response):
    try:
        return response.json().get("error")
    except ValueError:
        return f"(status {response.status_code}, not JSON)"


def sign_in(node, username, password=PASSWORD):
    started = node.flow({"app": "web", "provider": "local"})
    assert started.status_code == 201, started.text
    return node.answer(started.json()["flow"], {"username": username, "password": password})


def pkce():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def browser_code(page_node, post_node, username="alice"):
    """The sign-in page from one node, the form posted to another (the browser cookie travels)."""
    verifier, challenge = pkce()
    state = secrets.token_urlsafe(12)
    query = urlencode({
        "response_type": "code", "client_id": "web", "redirect_uri": CALLBACK, "scope": "openid", "state": state,
        "code_challenge": challenge, "code_challenge_method": "S256", "nonce": secrets.token_urlsafe(8),
    })
    session = requests.Session()
    page = session.get(f"{page_node.base}/oauth2/authorize?{query}", allow_redirects=False, timeout=TIMEOUT)
    assert page.status_code == 200, (page.status_code, page.text[:300])
    action = unescape(re.search(r'<form method="post" action="([^"]+)"', page.text).group(1))
    hidden = {name: unescape(value) for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.text)}
    # The browser cookie is scoped to the page's host; the load balancer is one host for the browser.
    cookies = {cookie.name: cookie.value for cookie in session.cookies}
    answer = requests.post(
        post_node.base + urlsplit(action).path + (("?" + urlsplit(action).query) if urlsplit(action).query else ""),
        data={**hidden, "username": username, "password": PASSWORD}, cookies=cookies, allow_redirects=False, timeout=TIMEOUT,
    )
    assert answer.status_code == 303, (answer.status_code, answer.text[:300])
    params = dict(parse_qsl(urlsplit(answer.headers["Location"]).query))
    assert params.get("state") == state, params
    return params["code"], verifier


def exchange(node, code, verifier):
    return node.token(grant_type="authorization_code", code=code, redirect_uri=CALLBACK, code_verifier=verifier)


def kid_of(token):
    head = token.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))["kid"]


def write_config(work, url, fsso_public_pem, api_port, hook_port):
    indented = "\n".join("                " + line for line in fsso_public_pem.strip().splitlines())
    config = f"""environment: development
server:
  listen: 127.0.0.1:1
  issuer: {ISSUER}
storage:
  postgres:
    url: {url}
    poolSize: 8
    connectTimeout: 2s
events:
  retryDelays: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
  lease: 15s
providers:
  - id: local
    type: local
    config:
      bcryptCost: 4
  - id: bank
    type: custom-api
    config:
      url: http://127.0.0.1:{api_port}/register
      authentication: hmac
      secret: ${{CUSTOM_SECRET}}
  - id: app-code
    type: totp
    config:
      issuer: Multinode Vault
      period: 15
  - id: passkeys
    type: webauthn
    config:
      rpID: login.example.test
      origins: [{ISSUER}]
  - id: acme-sso
    type: fsso-jwt
    config:
      issuers:
        - issuer: acme
          apps: [partner]
          keys:
            - kid: k1
              pem: |
{indented}
apps:
  - id: web
    name: Web
    secret: ${{WEB_SECRET}}
    redirectURIs: [{CALLBACK}]
    policy:
      identityProviders: [local]
      selfRegistration: true
      lockout:
        maxFailedAttemptsPerAccount: 3
        maxFailedAttemptsPerFlow: 10
        lockoutDuration: 10m
  - id: bankapp
    name: Bank
    secret: ${{WEB_SECRET}}
    policy:
      identityProviders: [bank]
  - id: partner
    name: Partner
    policy:
      identityProviders: [acme-sso]
  - id: passkeyapp
    name: Passkeys
    secret: ${{WEB_SECRET}}
    policy:
      identityProviders: [passkeys]
      selfRegistration: true
  - id: hooked
    name: Hooked
    secret: ${{WEB_SECRET}}
    policy:
      identityProviders: [local]
      webhook:
        url: http://127.0.0.1:{hook_port}/hook
        events: [signin.success]
  - id: tv
    name: Living-room TV
    policy:
      identityProviders: [local]
      deviceAuthorizationGrant: true
      devicePollingInterval: 1
  - id: vault
    name: Vault
    secret: ${{WEB_SECRET}}
    policy:
      identityProviders: [local]
      authenticators: [app-code]
      secondFactor: app-code
      selfRegistration: true
      lockout:
        maxFailedAttemptsPerAccount: 50
        maxFailedAttemptsPerFlow: 20
"""
    path = os.path.join(work, "gatehouse.yaml")
    with open(path, "w") as handle:
        handle.write(config)
    return path


def oathtool(secret, period, at):
    """The code OATH Toolkit computes for a Base32 secret at a Unix time."""
    return subprocess.run(["oathtool", "--totp", "--base32", f"--time-step-size={period}s", f"--now=@{int(at)}", secret],
                          check=True, capture_output=True, text=True).stdout.strip()


def check_totp_across_nodes(a, b, c):
    """A `totp` second factor through the flow API on three nodes: set up with pyotp reading the
    otpauth URI, codes from pyotp and oathtool, one code given to two nodes at once passes once, a
    replay is refused on the third, and wrong codes on several nodes lock everywhere."""
    vault = ("vault", WEB_SECRET)

    def flow(node, body):
        return node.post("/v1/flows", json=body, auth=vault)

    def answer(node, flow_id, fields):
        return node.post(f"/v1/flows/{flow_id}", json={"answer": fields}, auth=vault)

    def at_totp(node, username):
        started = flow(node, {"app": "vault", "provider": "local"})
        step = answer(node, started.json()["flow"], {"username": username, "password": PASSWORD})
        return started.json()["flow"], step.json().get("challenge", {}).get("type")

    registered = flow(a, {"app": "vault", "provider": "local", "purpose": "register"})
    setup = answer(a, registered.json()["flow"], {"username": "tess", "password": PASSWORD}).json()
    challenge = setup.get("challenge", {})
    uri = challenge.get("otpauthURI", "")
    totp = pyotp.parse_uri(uri) if uri.startswith("otpauth://") else None
    check("registering where the app needs an authenticator app answers totp_setup with an otpauth URI pyotp reads",
          challenge.get("type") == "totp_setup" and totp is not None and totp.interval == 15 and totp.issuer == "Multinode Vault"
          and totp.name == "tess" and challenge.get("qrCode", "").startswith("data:image/svg+xml;base64,"), json.dumps(setup)[:300])
    secret = totp.secret if totp else ""
    now = time.time()
    check("pyotp and oathtool agree on the code", totp is not None and totp.at(now) == oathtool(secret, 15, now))
    codes = answer(b, registered.json()["flow"], {"code": oathtool(secret, 15, time.time())}).json()
    recovery = codes.get("challenge", {}).get("recoveryCodes", [])
    check("the first code (oathtool), answered on B, sets the app up and shows ten recovery codes",
          codes.get("challenge", {}).get("type") == "totp_recovery_codes" and len(recovery) == 10, json.dumps(codes)[:300])
    done = answer(c, registered.json()["flow"], {})
    check("... and the registration completes on C", done.json().get("status") == "completed", done.text[:200])

    # The code of the next step is inside the one-step window and after the step just used.
    flows = [at_totp(node, "tess") for node in (a, b)]
    check("sign-ins on A and B ask for the app's code", [kind for _, kind in flows] == ["totp", "totp"], str(flows))
    code = totp.at(time.time() + 15)
    barrier, results = threading.Barrier(2), {}

    def give(node, flow_id):
        barrier.wait()
        results[node.name] = answer(node, flow_id, {"code": code})

    threads = [threading.Thread(target=give, args=(node, flow_id)) for node, (flow_id, _) in zip((a, b), flows)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    outcomes = sorted((r.json().get("status") or r.json().get("error")) for r in results.values())
    check("one code given to A and B at the same instant passes exactly once", outcomes == ["completed", "invalid_code"], str(outcomes))
    third, _ = at_totp(c, "tess")
    replayed = answer(c, third, {"code": code})
    check("... and is refused on C too", error_of(replayed) == "invalid_code", replayed.text[:200])
    used = answer(c, third, {"use_recovery_code": True})
    with_code = answer(c, third, {"recoveryCode": recovery[0].lower()})
    check("a recovery code signs in instead of the app's code", used.json().get("challenge", {}).get("type") == "totp_recovery"
          and with_code.json().get("status") == "completed", with_code.text[:200])
    again, _ = at_totp(a, "tess")
    answer(a, again, {"use_recovery_code": True})
    reused = answer(a, again, {"recoveryCode": recovery[0]})
    check("... once: on A it is refused", error_of(reused) == "invalid_code", reused.text[:200])

    near = {totp.at(time.time() + offset) for offset in (-30, -15, 0, 15, 30)}
    wrong = next(candidate for candidate in ("000000", "111111", "222222", "333333") if candidate not in near)
    # The replay on C and the reused recovery code on A were wrong answers too: one more than these
    # three reaches the limit of five.
    errors = []
    for node in (a, b, c):
        flow_id, _ = at_totp(node, "tess")
        errors.append(error_of(answer(node, flow_id, {"code": wrong})))
    flow_id, _ = at_totp(b, "tess")
    last = answer(b, flow_id, {"code": wrong})
    check("wrong codes and recovery codes on A, B and C count together: the fifth locks the account's codes",
          errors == ["invalid_code"] * 3 and error_of(last) == "locked_out" and last.json().get("lockedUntil"), f"{errors} {last.text[:150]}")
    started = flow(c, {"app": "vault", "provider": "local"})
    locked = answer(c, started.json()["flow"], {"username": "tess", "password": PASSWORD})
    check("... and on C the app's code is not even asked while locked (locked_out after the password)",
          error_of(locked) == "locked_out" and locked.json().get("lockedUntil"), locked.text[:300])


def b64d(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64e(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def soft_options(public_key):
    """The broker's options JSON (base64url members) as soft-webauthn takes them (bytes)."""
    options = dict(public_key, challenge=b64d(public_key["challenge"]))
    if "user" in options:
        options["user"] = dict(options["user"], id=b64d(options["user"]["id"]))
        options["pubKeyCredParams"] = [{"type": p["type"], "alg": int(p["alg"])} for p in options["pubKeyCredParams"]]
    return {"publicKey": options}


def credential_json(credential):
    """soft-webauthn's answer as the RegistrationResponseJSON / AuthenticationResponseJSON a browser sends."""
    return {"id": b64e(credential["rawId"]), "rawId": b64e(credential["rawId"]), "type": "public-key",
            "response": {name: b64e(value) for name, value in credential["response"].items() if value is not None}}


def check_passkeys_across_nodes(a, b, c):
    """A passkey over the flow API with an independent software authenticator (soft-webauthn, from
    PyPI): made on A, B and C in turn, used on another node; an assertion replayed into another
    node's flow and a counter that went back are refused there."""
    app = ("passkeyapp", WEB_SECRET)
    device = SoftWebauthnDevice()

    def answer(node, flow_id, fields):
        return node.post(f"/v1/flows/{flow_id}", json={"answer": fields}, auth=app)

    started = a.post("/v1/flows", json={"app": "passkeyapp", "provider": "passkeys", "purpose": "register"}, auth=app).json()
    create = answer(b, started["flow"], {"username": "pia"}).json().get("challenge", {})
    options = create.get("publicKey", {})
    check("a passkey registration asks a name, then answers webauthn_create with the options JSON",
          started.get("challenge", {}).get("type") == "webauthn_username" and create.get("type") == "webauthn_create"
          and options.get("rp", {}).get("id") == "login.example.test" and options.get("authenticatorSelection", {}).get("residentKey") == "required", json.dumps(create)[:300])
    made = answer(c, started["flow"], {"credential": credential_json(device.create(soft_options(options), ISSUER))}).json()
    check("soft-webauthn's new credential, answered on C, makes the account", made.get("status") == "completed" and made.get("account"), json.dumps(made)[:300])

    def sign_in(start, finish, origin=ISSUER):
        flow = start.post("/v1/flows", json={"app": "passkeyapp", "provider": "passkeys"}, auth=app).json()
        assertion = device.get(soft_options(flow["challenge"]["publicKey"]), origin)
        return flow, assertion, answer(finish, flow["flow"], {"credential": credential_json(assertion)})

    flow, assertion, signed = sign_in(b, a)
    check("a sign-in started on B and answered on A identifies the same account with no username",
          signed.json().get("status") == "completed" and signed.json().get("account") == made.get("account"), signed.text[:200])
    other = c.post("/v1/flows", json={"app": "passkeyapp", "provider": "passkeys"}, auth=app).json()
    replayed = answer(c, other["flow"], {"credential": credential_json(assertion)})
    check("that assertion replayed into a flow of C is refused (challenge_mismatch)",
          error_of(replayed) == "invalid_credentials" and replayed.json().get("reason") == "challenge_mismatch", replayed.text[:200])
    _, _, foreign = sign_in(a, b, origin="https://evil.example")
    check("an assertion made for another origin is refused (origin_not_allowed)", foreign.json().get("reason") == "origin_not_allowed", foreign.text[:200])
    device.sign_count = 0
    _, _, cloned = sign_in(a, c)
    check("a counter that went back (a cloned authenticator) is refused on C (counter_regressed)", cloned.json().get("reason") == "counter_regressed", cloned.text[:200])


def page_form(text):
    """The action and hidden fields of the page's first POST form."""
    action = unescape(re.search(r'<form method="post" action="([^"]+)"', text).group(1))
    hidden = {name: unescape(value) for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', text)}
    return urlsplit(action).path, hidden


def check_device_grant_across_nodes(a, b, c):
    """RFC 8628 on three nodes: codes from A, polls on B and C, the verification page split over all three."""
    grant = "urn:ietf:params:oauth:grant-type:device_code"
    codes = a.post("/oauth2/device_authorization", data={"client_id": "tv", "scope": "openid"}).json()
    check("A hands out a device code and a user code", "device_code" in codes and "user_code" in codes, codes)

    def poll(node):
        response = node.post("/oauth2/token", data={"grant_type": grant, "device_code": codes["device_code"], "client_id": "tv"})
        return response.json().get("error") or ("tokens" if "access_token" in response.json() else response.text[:200])

    check("a poll on B hears authorization_pending", poll(b) == "authorization_pending")
    check("a poll on C at once after it hears slow_down (the last poll is shared)", poll(c) == "slow_down")
    session = requests.Session()
    page = session.get(f"{b.base}/oauth2/device", params={"user_code": codes["user_code"]}, timeout=TIMEOUT)
    cookies = {cookie.name: cookie.value for cookie in session.cookies}
    path, hidden = page_form(page.text)
    confirm = requests.post(c.base + path, data={**hidden, "username": "alice", "password": PASSWORD}, cookies=cookies, timeout=TIMEOUT, allow_redirects=False)
    check("the sign-in page from B, posted to C, leads to the confirmation", confirm.status_code == 200 and codes["user_code"] in confirm.text, confirm.text[:200])
    path, hidden = page_form(confirm.text)
    allowed = requests.post(a.base + path, data=hidden, cookies=cookies, timeout=TIMEOUT, allow_redirects=False)
    check("... which A approves", allowed.status_code == 303 and allowed.headers.get("Location", "").endswith("/device?result=approved"), allowed.status_code)
    again = requests.get(f"{c.base}/oauth2/device", params={"user_code": codes["user_code"]}, timeout=TIMEOUT)
    check("the user code is spent on every node", again.status_code == 400, again.status_code)
    time.sleep(11)
    check("C hands the tokens to the polling device", poll(c) == "tokens")
    time.sleep(2)
    check("the device code is spent on every node", poll(b) == "invalid_grant")


def check_pushed_requests_across_nodes(a, b, c):
    """RFC 9126 on three nodes: pushed to A, carried to B, signed in on C, used once everywhere."""
    verifier, challenge = pkce()
    pushed = a.post("/oauth2/par", data={
        "response_type": "code", "redirect_uri": CALLBACK, "scope": "openid", "state": "pushed", "code_challenge": challenge, "code_challenge_method": "S256",
    }, auth=("web", WEB_SECRET))
    reference = pushed.json().get("request_uri", "")
    check("A takes a pushed request", pushed.status_code == 201 and reference.startswith("urn:ietf:params:oauth:request_uri:"), pushed.text[:200])
    session = requests.Session()
    page = session.get(f"{b.base}/oauth2/authorize", params={"client_id": "web", "request_uri": reference}, timeout=TIMEOUT)
    check("B opens its sign-in page", page.status_code == 200, page.status_code)
    path, hidden = page_form(page.text)
    cookies = {cookie.name: cookie.value for cookie in session.cookies}
    answer = requests.post(c.base + path, data={**hidden, "username": "alice", "password": PASSWORD}, cookies=cookies, allow_redirects=False, timeout=TIMEOUT)
    params = dict(parse_qsl(urlsplit(answer.headers.get("Location", "")).query))
    check("C signs in and sends the pushed state back with a code", answer.status_code == 303 and params.get("state") == "pushed" and "code" in params, answer.status_code)
    check("... which A redeems", exchange(a, params.get("code", ""), verifier).status_code == 200)
    again = requests.get(f"{c.base}/oauth2/authorize", params={"client_id": "web", "request_uri": reference}, timeout=TIMEOUT)
    check("the request_uri is spent on every node", again.status_code == 400 and "invalid_request_uri" in again.text, again.status_code)


class WebhookReceiver:
    """A back end's webhook endpoint: verifies each delivery's signature (HMAC-SHA256 over "t.body",
    as Stripe's receivers do), answers 503 to the first `fail_first` deliveries, can hold its
    answers (so that a node is killed mid-delivery), and can be stopped and started again."""

    def __init__(self, port):
        self.port, self.secret, self.fail_first = port, None, 0
        self.lock = threading.Lock()
        self.received, self.acked, self.bad_signatures, self.held = [], [], [], set()
        self.hold = threading.Event()
        self.hold.set()  # set: answer at once
        self.server = None

    def start(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                items = [part.split("=", 1) for part in self.headers.get("Gatehouse-Signature", "").split(",") if "=" in part]
                signature = {"t": next((value for name, value in items if name == "t"), "0")}
                expected = hmac.new((receiver.secret or "").encode(), f"{signature['t']}.".encode() + body, hashlib.sha256).hexdigest()
                # Any v1 may be ours (docs/events.md): a rotation's overlap carries one per secret.
                signature["v1"] = next((value for name, value in items if name == "v1" and hmac.compare_digest(expected, value)), "")
                event = json.loads(body or b"{}")
                with receiver.lock:
                    receiver.received.append(event.get("id"))
                    fail = receiver.fail_first > 0
                    if fail:
                        receiver.fail_first -= 1
                if not hmac.compare_digest(expected, signature.get("v1", "")) or abs(time.time() - int(signature.get("t", "0"))) > 300:
                    with receiver.lock:
                        receiver.bad_signatures.append(event.get("id"))
                    self.send_response(400)
                    self.end_headers()
                    return
                if fail:
                    self.send_response(503)
                    self.end_headers()
                    return
                if not receiver.hold.is_set():
                    with receiver.lock:
                        receiver.held.add(event.get("id"))
                    receiver.hold.wait(30)
                try:
                    self.send_response(200)
                    self.end_headers()
                    self.wfile.flush()
                except OSError:
                    return
                with receiver.lock:
                    receiver.acked.append((event.get("id"), event.get("subject")))

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.allow_reuse_address = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def terminate(self):
        self.hold.set()
        self.stop()


def check_webhooks_across_nodes(nodes, receiver):
    """The outbox on three nodes against a real receiver: failures, the receiver stopped and started,
    and every node killed with kill -9 mid-delivery; every event arrives, in order per subject."""
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    a, b, c = nodes
    rotated = a.post("/admin/v1/apps/hooked/webhook/secret", headers=admin)
    check("the admin API makes the app's webhook secret, shown once", rotated.status_code == 200 and rotated.json().get("secret", "").startswith("whsec_"), rotated.text[:200])
    receiver.secret = rotated.json().get("secret")
    receiver.fail_first = 3
    users = ["hook1", "hook2", "hook3"]
    for user in users:
        registered = a.flow({"app": "web", "provider": "local", "purpose": "register"})
        a.answer(registered.json()["flow"], {"username": user, "password": PASSWORD})

    def hooked_sign_in(node, user):
        started = node.post("/v1/flows", json={"app": "hooked", "provider": "local"}, auth=("hooked", WEB_SECRET))
        done = node.post(f"/v1/flows/{started.json()['flow']}", json={"answer": {"username": user, "password": PASSWORD}}, auth=("hooked", WEB_SECRET))
        assert done.status_code == 200, done.text

    for round_ in range(4):
        for index, user in enumerate(users):
            hooked_sign_in(nodes[(round_ + index) % 3], user)
        if round_ == 1:
            # The receiver goes away mid-stream and comes back.
            receiver.stop()
            time.sleep(2.5)
            receiver.start()
    # Every node is killed while a delivery waits for the receiver's answer.
    receiver.hold.clear()
    for user in users:
        hooked_sign_in(a, user)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not receiver.held:
        time.sleep(0.1)
    in_flight = set(receiver.held)
    for node in nodes:
        node.process.kill()
        node.process.wait()
    check("deliveries were in flight when the nodes were killed", bool(in_flight), receiver.received[-5:])
    receiver.hold.set()
    for node in nodes:
        node.start()
    expected = a.get("/admin/v1/audit", params={"app": "hooked", "type": "signin.success", "limit": 100}, headers=admin).json()
    expected_ids = [event["id"] for event in reversed(expected)]  # oldest first
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not set(expected_ids) <= {event for event, _ in receiver.acked}:
        time.sleep(0.25)
    acked = [event for event, _ in receiver.acked]
    check(f"every one of the {len(expected_ids)} events reached the receiver", set(expected_ids) <= set(acked), set(expected_ids) - set(acked))
    # Every delivery the receiver held was answered only after the kill, so no node saw its 200; the
    # snapshot above may be taken before the other nodes' deliveries reach the receiver.
    in_flight |= set(receiver.held)
    twice = {event for event in acked if acked.count(event) > 1} - in_flight
    check("no event acknowledged before was delivered again (only those in flight at the kill may be)", not twice, twice)
    check("every signature verified", not receiver.bad_signatures, receiver.bad_signatures)
    by_subject = {}
    for event in expected:
        by_subject.setdefault(event.get("accountID"), []).insert(0, event["id"])
    first_ack = {}
    for position, event in enumerate(acked):
        first_ack.setdefault(event, position)
    in_order = all([first_ack.get(event, -1) for event in ids] == sorted(first_ack.get(event, -1) for event in ids) for ids in by_subject.values())
    check("each person's events arrived in the order they happened", in_order, {subject: [first_ack.get(event) for event in ids] for subject, ids in by_subject.items()})
    dead = a.get("/admin/v1/apps/hooked/webhook/dead-letters", headers=admin).json()
    check("no delivery was given up", dead == [], dead)


def main():
    global KEK
    work = tempfile.mkdtemp(prefix="gatehouse-multinode-")
    pg_dir = tempfile.mktemp(prefix="gatehouse-multinode-pg-", dir="/tmp")
    nodes, helpers = [], []
    try:
        KEK = subprocess.run([BIN, "keys", "generate-kek"], check=True, capture_output=True, text=True).stdout.strip()
        url = subprocess.run([POSTGRES, "start", pg_dir, str(free_port())], check=True, capture_output=True, text=True).stdout.strip()
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        public_pem = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
        port_file = os.path.join(work, "api.port")
        api = subprocess.Popen([sys.executable, os.path.join(REPO, "Tests", "custom-api", "app_api.py"), f"--secret={CUSTOM_SECRET}",
                                "--port-file", port_file, "--log", os.path.join(work, "calls.jsonl")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        helpers.append(api)
        for _ in range(100):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.05)
        receiver = WebhookReceiver(free_port())
        receiver.start()
        helpers.append(receiver)
        config = write_config(work, url, public_pem, int(open(port_file).read()), receiver.port)
        # Three nodes starting at the same moment migrate the new database once.
        nodes = [Node(name, work, config) for name in "ABC"]
        for node in nodes:
            node.start(wait=False)
        check("three nodes starting together on an empty database all become ready", all(node.wait_ready() for node in nodes))
        a, b, c = nodes
        applied = subprocess.run([POSTGRES, "psql", pg_dir, "-tA", "-c", "SELECT COUNT(*), COUNT(DISTINCT name) FROM gatehouse_migrations"],
                                 capture_output=True, text=True).stdout.strip()
        check("the schema was migrated once (each migration recorded once)", applied.split("|")[0] == applied.split("|")[1] != "0", applied)

        registered = a.flow({"app": "web", "provider": "local", "purpose": "register"})
        done = a.answer(registered.json()["flow"], {"username": "alice", "password": PASSWORD})
        check("alice registers on A", done.status_code == 200 and done.json().get("status") == "completed", done.text[:200])

        print("- flows continue on any node")
        started = a.flow({"app": "web", "provider": "local"})
        flow_id = started.json().get("flow")
        wrong = b.answer(flow_id, {"username": "alice", "password": "not the password"})
        check("a flow started on A is answered on B (wrong password: the flow goes on)",
              wrong.status_code == 400 and error_of(wrong) == "invalid_credentials" and wrong.json().get("flow") in (None, flow_id), wrong.text[:200])
        right = c.answer(flow_id, {"username": "alice", "password": PASSWORD})
        check("... and completed on C", right.status_code == 200 and right.json().get("status") == "completed", right.text[:200])
        family_tokens = right.json().get("tokens", {})

        code, verifier = browser_code(a, b)
        redeemed = exchange(c, code, verifier)
        check("a sign-in page from A, posted to B, gives a code that C redeems", redeemed.status_code == 200 and "access_token" in redeemed.json(), redeemed.text[:200])

        print("- the device authorization grant spans nodes")
        check_device_grant_across_nodes(a, b, c)
        print("- pushed authorization requests span nodes")
        check_pushed_requests_across_nodes(a, b, c)

        print("- webhooks: signed, in order per person, through failures, a restarted receiver and kill -9 of every node")
        check_webhooks_across_nodes([a, b, c], receiver)

        print("- replay, lockouts and refresh families are shared")
        now = int(time.time())
        assertion = jwt.encode({"iss": "acme", "sub": "dana", "aud": "identity-service", "jti": str(uuid.uuid4()), "iat": now, "exp": now + 60},
                               key, algorithm="RS256", headers={"kid": "k1"})
        bearer = {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": assertion, "client_id": "partner"}
        first = a.post("/oauth2/token", data=bearer)
        second = b.post("/oauth2/token", data=bearer)
        check("a jti used on A is refused on B", first.status_code == 200 and second.status_code == 400 and error_of(second) == "invalid_grant",
              f"{first.status_code} {second.status_code} {second.text[:200]}")

        registered = a.flow({"app": "web", "provider": "local", "purpose": "register"})
        a.answer(registered.json()["flow"], {"username": "mallory", "password": PASSWORD})
        for _ in range(3):
            sign_in(a, "mallory", "wrong password")
        on_b, on_c = sign_in(b, "mallory"), sign_in(c, "mallory")
        check("a lockout earned on A holds on B and C (even with the right password)",
              error_of(on_b) == "locked_out" and error_of(on_c) == "locked_out" and on_b.json().get("lockedUntil"),
              f"{on_b.text[:150]} / {on_c.text[:150]}")

        rt_a = family_tokens.get("refresh_token")
        rotated = b.token(grant_type="refresh_token", refresh_token=rt_a)
        rt_b = rotated.json().get("refresh_token")
        # The answer was lost: the client retries on C within the app's reuse grace (5 s).
        retry = c.token(grant_type="refresh_token", refresh_token=rt_a)
        check("a refresh token issued on A rotates on B; retried on C within the grace it answers the same successor",
              rotated.status_code == 200 and retry.status_code == 200 and retry.json().get("refresh_token") == rt_b, f"{rotated.status_code} {retry.text[:150]}")
        newest = a.token(grant_type="refresh_token", refresh_token=rt_b)
        rt_c = newest.json().get("refresh_token")
        reuse = c.token(grant_type="refresh_token", refresh_token=rt_a)
        after = a.token(grant_type="refresh_token", refresh_token=rt_c)
        check("once its successor rotated on A, the first token reused on C is refused",
              newest.status_code == 200 and reuse.status_code == 400 and error_of(reuse) == "invalid_grant", f"{newest.status_code} {reuse.text[:150]}")
        check("... and the whole family is revoked: the newest token fails on A", after.status_code == 400 and error_of(after) == "invalid_grant", after.text[:150])

        print("- authenticator app codes: each time step once, on every node")
        check_totp_across_nodes(a, b, c)

        print("- passkeys: registered on one node, used on another (soft-webauthn as the authenticator)")
        check_passkeys_across_nodes(a, b, c)

        print("- policy changes reach every node within the bound")
        bank = ("bankapp", WEB_SECRET)
        refused = a.post("/v1/flows", json={"app": "bankapp", "provider": "bank", "stateless": True}, auth=bank)
        check("stateless sign-in is refused on A while the policy has it off", error_of(refused) == "stateless_disabled", refused.text[:150])
        patched = requests.patch(b.base + "/admin/v1/apps/bankapp/policy", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
                                 json={"statelessAuthentication": True}, timeout=TIMEOUT)
        toggled_at = time.monotonic()
        in_force = None
        while time.monotonic() - toggled_at < 10:
            attempt = a.post("/v1/flows", json={"app": "bankapp", "provider": "bank", "stateless": True}, auth=bank)
            if attempt.status_code == 201:
                in_force = time.monotonic() - toggled_at
                break
            time.sleep(0.05)
        check(f"stateless on through B's admin API is in force on A within {POLICY_BOUND} s (took {in_force if in_force is None else round(in_force, 2)} s)",
              patched.status_code == 200 and in_force is not None and in_force <= POLICY_BOUND, patched.text[:150])
        stateless = a.post(f"/v1/flows/{attempt.json()['flow']}", json={"answer": {"customData": {"subject": "ghost"}}}, auth=bank) if in_force is not None else None
        check("... and A signs a person in statelessly: no account, no refresh token",
              stateless is not None and stateless.json().get("status") == "completed" and stateless.json().get("account") is None
              and "refresh_token" not in stateless.json().get("tokens", {}), stateless.text[:200] if stateless is not None else "")

        print("- one authorization code, two nodes, the same instant")
        rounds, exactly_once, detail = 30, 0, []
        for _ in range(rounds):
            code, verifier = browser_code(a, a)
            barrier, results = threading.Barrier(2), {}

            def redeem(node, name):
                barrier.wait()
                results[name] = exchange(node, code, verifier)

            threads = [threading.Thread(target=redeem, args=(node, node.name)) for node in (b, c)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            statuses = sorted(response.status_code for response in results.values())
            if statuses == [200, 400] and all(error_of(r) == "invalid_grant" for r in results.values() if r.status_code == 400):
                exactly_once += 1
            else:
                detail.append(statuses)
        check(f"the same code redeemed on B and C at once succeeds exactly once ({exactly_once}/{rounds} rounds)", exactly_once == rounds, str(detail[:5]))

        print("- key rotation: published everywhere before it signs")
        kids_before = {k["kid"] for k in a.get("/oauth2/jwks").json()["keys"]}
        env = {**os.environ, "GATEHOUSE_KEK": KEK, "WEB_SECRET": WEB_SECRET, "CUSTOM_SECRET": CUSTOM_SECRET}
        rotated_out = subprocess.run([BIN, "keys", "rotate", "--config", config], capture_output=True, text=True, env=env)
        new_kids = set(re.findall(r"key (\S+): published now", rotated_out.stdout))
        check("gatehouse keys rotate adds new keys that sign later", rotated_out.returncode == 0 and len(new_kids) == 2, rotated_out.stdout + rotated_out.stderr)
        rotated_at = time.monotonic()
        published = {}
        while time.monotonic() - rotated_at < 15 and len(published) < 3:
            for node in nodes:
                if node.name not in published and new_kids <= {k["kid"] for k in node.get("/oauth2/jwks").json()["keys"]}:
                    published[node.name] = time.monotonic() - rotated_at
            time.sleep(0.1)
        signed_with = kid_of(sign_in(c, "alice").json()["tokens"]["access_token"])
        check(f"every node publishes the new keys within the reload interval ({ {k: round(v, 1) for k, v in published.items()} })",
              len(published) == 3 and max(published.values()) < 8)
        check("... while tokens are still signed with a key every node published before", signed_with in kids_before and signed_with not in new_kids, signed_with)

        print("- the database goes away and comes back")
        spare = sign_in(a, "alice").json()["tokens"]["refresh_token"]
        subprocess.run([POSTGRES, "kill", pg_dir], check=True)
        down_token = a.token(grant_type="refresh_token", refresh_token=spare)
        down_flow = b.flow({"app": "web", "provider": "local"})
        down_ready = c.get("/readyz")
        check("with PostgreSQL down the token endpoint answers 503 temporarily_unavailable",
              down_token.status_code == 503 and error_of(down_token) == "temporarily_unavailable", f"{down_token.status_code} {down_token.text[:150]}")
        check("... the flow API answers 503 temporarily_unavailable (never 500)",
              down_flow.status_code == 503 and error_of(down_flow) == "temporarily_unavailable", f"{down_flow.status_code} {down_flow.text[:150]}")
        check("... /readyz is not ready", down_ready.status_code == 503, down_ready.text[:150])
        late = Node("D", work, config)
        nodes.append(late)
        late.start(wait=False)
        time.sleep(0)  # the node starts while the database is down
        waited = False
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not waited:
            waited = "the database cannot be reached; trying again" in open(late.log).read()
            time.sleep(0.1)
        check("a node started while the database is down says why and keeps trying", waited and late.process.poll() is None, open(late.log).read()[-500:])
        subprocess.run([POSTGRES, "start", pg_dir, url.rsplit(":", 1)[1].split("/")[0]], check=True, capture_output=True)
        recovered = {}
        started_wait = time.monotonic()
        while time.monotonic() - started_wait < 30 and len(recovered) < 4:
            for node in nodes:
                if node.name in recovered:
                    continue
                try:
                    if node.get("/readyz").status_code == 200 and node.flow({"app": "web", "provider": "local"}).status_code == 201:
                        recovered[node.name] = round(time.monotonic() - started_wait, 1)
                except requests.RequestException:
                    pass
            time.sleep(0.2)
        check(f"PostgreSQL back: every node serves again without a restart ({recovered})", len(recovered) == 4)
        final = sign_in(late, "alice")
        check("the node that waited for its database signs alice in", final.status_code == 200 and final.json().get("status") == "completed", final.text[:150])
        for node in nodes:
            log = open(node.log).read()
            check(f"node {node.name}'s log holds no secret and no 500", WEB_SECRET not in log and ADMIN_TOKEN not in log and PASSWORD not in log
                  and CUSTOM_SECRET not in log and "gatehouse-test-password" not in log and "status=500" not in log)
    finally:
        for node in nodes:
            node.stop()
        for helper in helpers:
            helper.terminate()
        subprocess.run([POSTGRES, "remove", pg_dir], capture_output=True)
        logs = os.path.join(REPO, ".build", "test-logs")
        os.makedirs(logs, exist_ok=True)
        for node in nodes:
            shutil.copy(node.log, os.path.join(logs, f"multinode-{node.name}.log"))
        with open(os.path.join(logs, "multinode.secrets"), "w") as handle:
            handle.write("\n".join([WEB_SECRET, ADMIN_TOKEN, PASSWORD, CUSTOM_SECRET, KEK or "", "gatehouse-test-password"]) + "\n")
        if os.environ.get("KEEP_WORK") == "1":
            print(f"work dir kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print()
    if failures:
        print(f"multinode: {len(failures)} failure(s)")
        sys.exit(1)
    print("multinode: all passed")


if __name__ == "__main__":
    main()
