#!/usr/bin/env python3
"""An independent client of the device-attestation plugin, written against the documented wire
contract and the platforms' formats only: Play Integrity tokens are made here as Google makes them
(an ES256 JWS by PyJWT with the published test key, encrypted A256KW + A256GCM with Python's
cryptography under the published AES key); a DeviceCheck stand-in (a real HTTP server on loopback)
checks the broker's developer JWT and answers as Apple documents; test registration keys come from
the admin API. Prints one line per check; exits with the failures.

usage: attestation_client.py BASE_URL ADMIN_TOKEN DEVICECHECK_PORT DEVICECHECK_PUBLIC_PEM VECTORS_DIR
"""
import base64, hashlib, http.server, json, os, sys, threading, time, urllib.error, urllib.request, uuid

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.keywrap import aes_key_wrap

base, admin_token, dc_port, dc_public_pem, vectors = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
failures = 0


def check(description, ok):
    global failures
    print(("  ok   " if ok else "  FAIL ") + description)
    if not ok:
        failures += 1


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def call(method, path, body=None, headers=None):
    headers = dict(headers or {})
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request) as response:
            text = response.read()
            return response.status, (json.loads(text) if text else {})
    except urllib.error.HTTPError as error:
        text = error.read()
        return error.code, (json.loads(text) if text else {})


def admin(method, path, body=None):
    return call(method, "/admin/v1" + path, body, {"Authorization": "Bearer " + admin_token})


# --- Apple's DeviceCheck server, as documented --------------------------------------------------
dc_key = serialization.load_pem_public_key(open(dc_public_pem, "rb").read())
dc_seen = []


class DeviceCheck(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, text=""):
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != "/v1/validate_device_token":
            return self.answer(404)
        try:
            token = self.headers.get("Authorization", "").removeprefix("Bearer ")
            header = jwt.get_unverified_header(token)
            claims = jwt.decode(token, dc_key, algorithms=["ES256"], options={"verify_aud": False})
            assert header.get("kid") == "KEY1234567" and claims.get("iss") == "ABCDE12345" and "iat" in claims
        except Exception:
            return self.answer(401, "Unable to verify authorization token")
        try:
            payload = json.loads(body)
            assert payload["transaction_id"] and isinstance(payload["timestamp"], (int, float))
            device_token = payload["device_token"]
        except Exception:
            return self.answer(400, "Missing or incorrectly formatted device token payload")
        dc_seen.append(device_token)
        if device_token.startswith("genuine-device"):
            return self.answer(200)
        if device_token == "busy":
            return self.answer(429)
        return self.answer(400, "Missing or incorrectly formatted device token payload")


server = http.server.ThreadingHTTPServer(("127.0.0.1", dc_port), DeviceCheck)
threading.Thread(target=server.serve_forever, daemon=True).start()

issuer = call("GET", "/.well-known/openid-configuration")[1]["issuer"]
play = os.path.join(vectors, "play-integrity", "worldcoin-attestation-gateway-2024-token")
aes_key = base64.b64decode(open(os.path.join(play, "decryption_key.b64")).read().strip())
signing_pem = open(os.path.join(play, "jws_signing_private_key.TESTKEY.pem"), "rb").read()
certificate = bytes(range(32))


class Phone:
    def __init__(self, platform="android"):
        self.key = ec.generate_private_key(ec.SECP256R1())
        numbers = self.key.public_key().public_numbers()
        self.jwk = {"kty": "EC", "crv": "P-256", "x": b64(numbers.x.to_bytes(32, "big")), "y": b64(numbers.y.to_bytes(32, "big"))}
        canonical = json.dumps({"crv": "P-256", "kty": "EC", "x": self.jwk["x"], "y": self.jwk["y"]}, separators=(",", ":"), sort_keys=True)
        self.thumbprint = b64(hashlib.sha256(canonical.encode()).digest())
        self.platform = platform
        self.installation = "install-" + uuid.uuid4().hex

    def answer(self, nonce, attestation):
        proof = jwt.encode({"nonce": nonce, "aud": issuer}, self.key, algorithm="ES256")
        body = {"publicKey": self.jwk, "proof": proof, "installationID": self.installation, "platform": self.platform}
        if attestation is not None:
            body["attestation"] = attestation
        return body


def register(phone, attestation_for, app="phone"):
    status, started = call("POST", "/v1/flows", {"app": app, "provider": "device", "purpose": "register"})
    if status != 201:
        return status, started, None
    nonce = started["challenge"]["nonce"]
    status, body = call("POST", "/v1/flows/" + started["flow"], {"answer": phone.answer(nonce, attestation_for(nonce))})
    return status, body, started


def integrity_token(request_hash, package="com.example.phone", age=0):
    verdict = {
        "requestDetails": {"requestPackageName": package, "requestHash": request_hash, "timestampMillis": str(int((time.time() - age) * 1000))},
        "appIntegrity": {"appRecognitionVerdict": "PLAY_RECOGNIZED", "packageName": package, "certificateSha256Digest": [b64(certificate)], "versionCode": "7"},
        "deviceIntegrity": {"deviceRecognitionVerdict": ["MEETS_DEVICE_INTEGRITY"]},
        "accountDetails": {"appLicensingVerdict": "LICENSED"},
    }
    jws = jwt.encode(verdict, signing_pem, algorithm="ES256")
    header = b64(json.dumps({"alg": "A256KW", "enc": "A256GCM"}).encode())
    content_key, iv = os.urandom(32), os.urandom(12)
    sealed = AESGCM(content_key).encrypt(iv, jws.encode(), header.encode())
    return ".".join([header, b64(aes_key_wrap(aes_key, content_key)), b64(iv), b64(sealed[:-16]), b64(sealed[-16:])])


def binding(nonce, phone):
    return b64(hashlib.sha256((nonce + "." + phone.thumbprint).encode()).digest())


# --- Administration -------------------------------------------------------------------------------
status, _ = admin("POST", "/apps/phone/secrets", {"name": "play-integrity-decryption-key", "value": open(os.path.join(play, "decryption_key.b64")).read()})
check("the admin API sets the Play Integrity decryption key", status in (200, 201))
status, _ = admin("POST", "/apps/phone/secrets", {"name": "play-integrity-verification-key", "value": open(os.path.join(play, "verification_key.spki.b64")).read()})
check("the admin API sets the Play Integrity verification key", status in (200, 201))
status, body = admin("POST", "/apps/phone/secrets", {"name": "play-integrity-decryption-key", "value": "c2hvcnQ="})
check("a decryption key that is not 32 bytes is refused when set (invalid_request)", status == 400 and body.get("error") == "invalid_request")
status, listing = admin("GET", "/apps/phone/secrets")
check("secrets are listed by name only, never by value", status == 200 and "7d5b44298bf959af" not in json.dumps(listing) and "play-integrity-decryption-key" in json.dumps(listing))
status, _ = admin("POST", "/apps/phone/fingerprints", {"sha256": ":".join("%02X" % b for b in certificate)})
check("the admin API adds the app's signing-certificate fingerprint", status in (200, 201))
status, body = admin("POST", "/apps/phone/fingerprints", {"sha256": "AB:CD"})
check("a fingerprint that is not SHA-256 is refused (invalid_request)", status == 400)
status, created = admin("POST", "/apps/phone/test-keys")
test_kid = (created.get("item") or created).get("key", {}).get("kid") if status in (200, 201) else None
test_key = serialization.load_pem_private_key(((created.get("item") or created).get("private_key_pem") or "").encode(), None) if test_kid else None
check("the admin API makes a test registration key and shows its private key once", test_key is not None)

# --- Registrations ----------------------------------------------------------------------------------
status, body, started = register(Phone(), lambda nonce: None)
check("a required attestation refuses a plain registration (attestation_required)", status == 400 and body.get("error") == "attestation_required")
check("the register_key challenge says attestation is required and lists the formats",
      started is not None and started["challenge"].get("attestation") == "required" and "play-integrity" in started["challenge"].get("attestationFormats", []))

phone = Phone()
status, body, _ = register(phone, lambda nonce: {"format": "play-integrity", "integrityToken": integrity_token(binding(nonce, phone))})
check("a Play Integrity token made as Google makes them registers the key", status == 200 and body.get("status") == "completed")
stale = Phone()
status, body, _ = register(stale, lambda nonce: {"format": "play-integrity", "integrityToken": integrity_token(binding(nonce, stale), age=600)})
check("a ten-minute-old verdict is refused (verdict_stale)", status == 400 and body.get("reason") == "verdict_stale")
other = Phone()
status, body, _ = register(other, lambda nonce: {"format": "play-integrity", "integrityToken": integrity_token(binding(nonce, other), package="com.evil.clone")})
check("a verdict for another package is refused (app_mismatch)", status == 400 and body.get("reason") == "app_mismatch")
thief = Phone()
status, body, _ = register(thief, lambda nonce: {"format": "play-integrity", "integrityToken": integrity_token(binding(nonce, phone))})
check("a verdict asked for another key is refused (challenge_mismatch)", status == 400 and body.get("reason") == "challenge_mismatch")
garbled = Phone()
status, body, _ = register(garbled, lambda nonce: {"format": "play-integrity", "integrityToken": "a.b.c.d.e"})
check("a token that is not a JWE is refused with invalid_attestation, never a 5xx", status == 400 and body.get("error") == "invalid_attestation")

iphone = Phone("ios")
status, body, _ = register(iphone, lambda nonce: {"format": "apple-devicecheck", "deviceToken": "genuine-device"})
check("a DeviceCheck token Apple validates registers the key (the stand-in checked the broker's ES256 JWT)", status == 200 and "genuine-device" in dc_seen)
status, body, _ = register(Phone("ios"), lambda nonce: {"format": "apple-devicecheck", "deviceToken": "genuine-device"})
check("a DeviceCheck token is good once: the same token again is refused (invalid_token)", status == 400 and body.get("reason") == "invalid_token")
status, body, _ = register(Phone("ios"), lambda nonce: {"format": "apple-devicecheck", "deviceToken": "forged"})
check("a DeviceCheck token Apple rejects is refused (invalid_token)", status == 400 and body.get("reason") == "invalid_token")
status, body, _ = register(Phone("ios"), lambda nonce: {"format": "apple-devicecheck", "deviceToken": "busy"})
check("Apple's rate limit answers 503 provider_unavailable (service_rate_limited)", status == 503 and body.get("reason") == "service_rate_limited")
status, body, _ = register(Phone("android"), lambda nonce: {"format": "apple-devicecheck", "deviceToken": "genuine-device-2"})
check("an iOS attestation from a device that says android is refused (invalid_answer)", status == 400 and body.get("error") == "invalid_answer")

tester = Phone("web")
def test_token(nonce):
    return {"format": "test", "token": jwt.encode({"aud": issuer, "nonce": nonce, "jkt": tester.thumbprint, "iat": int(time.time())}, test_key, algorithm="ES256", headers={"kid": test_kid})}
status, body, _ = register(tester, test_token)
check("a test registration key registers a test account", status == 200 and body.get("status") == "completed")
test_account = (body.get("account") or {}).get("id")
if test_account:
    status, user = admin("GET", "/users/" + test_account)
    check("the account a test key registered is a test account", status == 200 and user.get("testAccount") is True)
status, _ = admin("DELETE", "/apps/phone/test-keys/" + str(test_kid))
revoked = Phone("web")
status, body, _ = register(revoked, lambda nonce: {"format": "test", "token": jwt.encode({"aud": issuer, "nonce": nonce, "jkt": revoked.thumbprint, "iat": int(time.time())}, test_key, algorithm="ES256", headers={"kid": test_kid})})
check("a revoked test key registers nothing (unknown_test_key)", status == 400 and body.get("reason") == "unknown_test_key")

server.shutdown()
print(json.dumps({"failures": failures}))
sys.exit(1 if failures else 0)
