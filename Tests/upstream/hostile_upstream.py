#!/usr/bin/env python3
"""A small OpenID provider that misbehaves on purpose, for Tests/upstream: it does what honest
providers never do, one scenario at a time, so each of the broker's ID token checks is proven to
refuse. Issuers on one port:

  /evil   the main one; `POST /control {"scenario": NAME}` picks how the next answers go wrong
  /liar   a discovery document whose issuer is another one
  /slow   a key set that answers only after 5 seconds

Its token endpoint checks the broker's client assertion (private_key_jwt, ES256) against the public
key it is given, so the broker's assertions are proven too. The authorization endpoint answers with
a page holding a form (response_mode=form_post) or with a redirect (query).
"""
import argparse, base64, hashlib, hmac, html, json, secrets, threading, time, urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa, utils


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
STRANGER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def rsa_jwk(key, kid):
    numbers = key.public_key().public_numbers()
    size = (numbers.n.bit_length() + 7) // 8
    return {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": b64(numbers.n.to_bytes(size, "big")), "e": b64(numbers.e.to_bytes(3, "big"))}


def ec_jwk(key, kid):
    numbers = key.public_key().public_numbers()
    return {"kty": "EC", "kid": kid, "use": "sig", "crv": "P-256", "x": b64(numbers.x.to_bytes(32, "big")), "y": b64(numbers.y.to_bytes(32, "big"))}


def sign(header, claims, key=None, alg="RS256"):
    body = b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())
    if alg == "none":
        return body + "."
    if alg == "HS256":
        return body + "." + b64(hmac.new(key, body.encode(), hashlib.sha256).digest())
    if alg == "ES256":
        der = key.sign(body.encode(), ec.ECDSA(hashes.SHA256()))
        r, s = utils.decode_dss_signature(der)
        return body + "." + b64(r.to_bytes(32, "big") + s.to_bytes(32, "big"))
    return body + "." + b64(key.sign(body.encode(), padding.PKCS1v15(), hashes.SHA256()))


class State:
    scenario = "good"
    codes = {}  # code -> (nonce, code_challenge, redirect_uri)
    tokens = {}  # access token -> sub
    assertion_key = None  # the broker's ES256 public key (PEM), for its client assertions
    client_id = "gatehouse"
    seen_assertions = set()
    lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def base(self):
        return f"http://{self.headers['Host']}"

    def send_json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        parts = url.path.strip("/").split("/")
        if len(parts) < 2:
            return self.send_json(404, {"error": "not_found"})
        name, rest = parts[0], "/".join(parts[1:])
        issuer = f"{self.base()}/{name}"
        if rest == ".well-known/openid-configuration":
            return self.send_json(200, {
                "issuer": f"{self.base()}/somebody-else" if name == "liar" else issuer,
                "authorization_endpoint": f"{issuer}/authorize", "token_endpoint": f"{issuer}/token",
                "userinfo_endpoint": f"{issuer}/userinfo", "jwks_uri": f"{issuer}/jwks",
                "response_types_supported": ["code"], "response_modes_supported": ["query", "form_post"],
                "id_token_signing_alg_values_supported": ["RS256", "ES256"], "subject_types_supported": ["public"],
            })
        if rest == "jwks":
            if name == "slow":
                time.sleep(5)
            return self.send_json(200, {"keys": [rsa_jwk(RSA_KEY, "rsa-1"), ec_jwk(EC_KEY, "ec-1")]})
        if rest == "authorize":
            code = secrets.token_urlsafe(24)
            with State.lock:
                State.codes[code] = (query.get("nonce"), query.get("code_challenge"), query.get("redirect_uri"), issuer)
            answer = {"code": code, "state": query.get("state", "")}
            if State.scenario == "mixup":
                answer["iss"] = f"{self.base()}/somebody-else"
            if State.scenario == "deny":
                answer = {"error": "access_denied", "error_description": "<script>raw upstream text</script>", "state": query.get("state", "")}
            if State.scenario == "server_error":
                answer = {"error": "server_error", "error_description": "raw upstream text", "state": query.get("state", "")}
            if query.get("response_mode") == "form_post":
                fields = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">' for k, v in answer.items())
                page = f'<!doctype html><title>hostile</title><form method="post" action="{html.escape(query["redirect_uri"])}">{fields}<button id="go">Continue</button></form>'
                data = page.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                return self.wfile.write(data)
            self.send_response(302)
            self.send_header("Location", query["redirect_uri"] + "?" + urllib.parse.urlencode(answer))
            self.send_header("Content-Length", "0")
            return self.end_headers()
        if rest == "userinfo":
            token = self.headers.get("Authorization", "").removeprefix("Bearer ")
            sub = State.tokens.get(token)
            if sub is None:
                return self.send_json(401, {"error": "invalid_token"})
            if State.scenario == "userinfo_sub_mismatch":
                sub = "someone-else"
            return self.send_json(200, {"sub": sub, "email": "eve@evil.test", "email_verified": True, "name": "Eve Upstream"})
        return self.send_json(404, {"error": "not_found"})

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length).decode()
        if url.path == "/control":
            body = json.loads(raw)
            State.scenario = body.get("scenario", State.scenario)
            if "assertionKey" in body:
                State.assertion_key = serialization.load_pem_public_key(body["assertionKey"].encode())
            if "clientID" in body:
                State.client_id = body["clientID"]
            return self.send_json(200, {"scenario": State.scenario})
        if url.path.endswith("/token"):
            form = dict(urllib.parse.parse_qsl(raw))
            issuer = f"{self.base()}{url.path.removesuffix('/token')}"
            problem = self.check_assertion(form, f"{issuer}/token")
            if problem:
                return self.send_json(401, {"error": "invalid_client", "error_description": problem})
            with State.lock:
                entry = State.codes.pop(form.get("code", ""), None)
            if entry is None:
                return self.send_json(400, {"error": "invalid_grant"})
            nonce, challenge, redirect_uri, _ = entry
            verifier = form.get("code_verifier", "")
            if b64(hashlib.sha256(verifier.encode()).digest()) != challenge or form.get("redirect_uri") != redirect_uri:
                return self.send_json(400, {"error": "invalid_grant", "error_description": "PKCE or redirect_uri mismatch"})
            access = secrets.token_urlsafe(24)
            State.tokens[access] = "eve"
            return self.send_json(200, {"access_token": access, "token_type": "Bearer", "expires_in": 300, "id_token": self.id_token(issuer, nonce, access)})
        return self.send_json(404, {"error": "not_found"})

    def check_assertion(self, form, audience):
        """RFC 7523 section 3: signature, iss = sub = client id, aud = token endpoint, exp, single use."""
        if State.assertion_key is None or not audience.endswith("/evil/token"):
            return None
        if form.get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer":
            return "no client assertion"
        token = form.get("client_assertion", "")
        try:
            head, body, signature = token.split(".")
            header, claims = json.loads(unb64(head)), json.loads(unb64(body))
            raw = unb64(signature)
            der = utils.encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
            State.assertion_key.verify(der, f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
        except Exception as error:  # noqa: BLE001 - any failure is a refusal
            return f"bad assertion: {error}"
        if header.get("alg") != "ES256" or claims.get("iss") != State.client_id or claims.get("sub") != State.client_id:
            return "wrong iss/sub/alg"
        if claims.get("aud") != audience or claims.get("exp", 0) < time.time() or claims.get("jti") in State.seen_assertions:
            return "wrong aud, expired or replayed"
        State.seen_assertions.add(claims.get("jti"))
        return None

    def id_token(self, issuer, nonce, access):
        now = int(time.time())
        scenario = State.scenario
        claims = {"iss": issuer, "sub": "eve", "aud": State.client_id, "iat": now, "exp": now + 300, "nonce": nonce,
                  "email": "eve@evil.test", "email_verified": True, "name": "Eve Upstream",
                  "at_hash": b64(hashlib.sha256(access.encode()).digest()[:16])}
        header = {"alg": "RS256", "kid": "rsa-1", "typ": "JWT"}
        if scenario == "wrong_iss":
            claims["iss"] = issuer + "-not"
        if scenario == "wrong_aud":
            claims["aud"] = "another-client"
        if scenario == "extra_aud":
            claims["aud"] = [State.client_id, "another-client"]
        if scenario == "expired":
            claims["iat"], claims["exp"] = now - 3600, now - 1800
        if scenario == "missing_nonce":
            del claims["nonce"]
        if scenario == "wrong_nonce":
            claims["nonce"] = "not-the-nonce"
        if scenario == "wrong_at_hash":
            claims["at_hash"] = b64(b"0" * 16)
        if scenario == "alg_none":
            return sign({"alg": "none", "typ": "JWT"}, claims, alg="none")
        if scenario == "hs256_rsa_public_key":
            pem = RSA_KEY.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
            return sign({"alg": "HS256", "kid": "rsa-1", "typ": "JWT"}, claims, key=pem, alg="HS256")
        if scenario == "unknown_kid":
            return sign({"alg": "RS256", "kid": "stranger", "typ": "JWT"}, claims, STRANGER_KEY)
        if scenario == "es256":
            return sign({"alg": "ES256", "kid": "ec-1", "typ": "JWT"}, claims, EC_KEY, alg="ES256")
        return sign(header, claims, RSA_KEY)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
