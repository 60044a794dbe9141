#!/usr/bin/env python3
"""An independent device client for the device-key plugin and DPoP (RFC 9449), written against the
documented wire contract only: keys and JWSs come from Python's `cryptography` and PyJWT, never from
the broker's code. It registers sign-in keys, signs assertions and DPoP proofs, uses the account
API, and checks every refusal by its code. Prints one line per check; exits with the failures.

usage: device_client.py BASE_URL
"""
import base64, hashlib, json, sys, time, urllib.error, urllib.request, uuid

import jwt
from cryptography.hazmat.primitives.asymmetric import ec

base = sys.argv[1]
failures = 0


def check(description, ok):
    global failures
    print(("  ok   " if ok else "  FAIL ") + description)
    if not ok:
        failures += 1


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def call(method, path, body=None, headers=None, form=None):
    data = None
    headers = dict(headers or {})
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if form is not None:
        data = urllib.parse.urlencode(form).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    request = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request) as response:
            text = response.read()
            return response.status, (json.loads(text) if text else {}), response.headers
    except urllib.error.HTTPError as error:
        text = error.read()
        return error.code, (json.loads(text) if text else {}), error.headers


import urllib.parse

issuer = call("GET", "/.well-known/openid-configuration")[1]["issuer"]
discovery = call("GET", "/.well-known/openid-configuration")[1]
check("discovery advertises dpop_signing_alg_values_supported with ES256", "ES256" in discovery.get("dpop_signing_alg_values_supported", []))


class Device:
    """A phone: a P-256 key pair made here, an installation id, a vendor id."""

    def __init__(self, vendor=None):
        self.key = ec.generate_private_key(ec.SECP256R1())
        numbers = self.key.public_key().public_numbers()
        self.jwk = {"kty": "EC", "crv": "P-256", "x": b64(numbers.x.to_bytes(32, "big")), "y": b64(numbers.y.to_bytes(32, "big"))}
        canonical = json.dumps({k: self.jwk[k] for k in sorted(self.jwk)}, separators=(",", ":")).encode()
        self.kid = b64(hashlib.sha256(canonical).digest())  # RFC 7638 thumbprint: the key id
        self.installation = "inst-" + uuid.uuid4().hex
        self.vendor = vendor or "vendor-" + uuid.uuid4().hex

    def sign(self, claims, headers=None, key=None):
        return jwt.encode(claims, key or self.key, algorithm="ES256", headers=headers)

    def registration(self, nonce, proof_key=None):
        return {
            "publicKey": self.jwk, "proof": self.sign({"nonce": nonce, "aud": issuer}, key=proof_key), "installationID": self.installation,
            "vendorID": self.vendor, "platform": "android", "model": "Pixel 9", "osVersion": "15", "appVersion": "3.1.0", "buildType": "release",
            "alias": "Test phone",
        }

    def assertion(self, nonce=None, aud=None, **extra):
        claims = {"iss": self.kid, "aud": aud or issuer, "iat": int(time.time()), "jti": str(uuid.uuid4())}
        if nonce:
            claims["nonce"] = nonce
        else:  # the JWT bearer grant: RFC 7523 requires exp
            claims["exp"] = int(time.time()) + 60
        claims.update(extra)
        return self.sign(claims)

    def dpop(self, method, url, token=None, nonce=None, key=None):
        claims = {"htm": method, "htu": url, "iat": int(time.time()), "jti": str(uuid.uuid4())}
        if token:
            claims["ath"] = b64(hashlib.sha256(token.encode()).digest())
        if nonce:
            claims["nonce"] = nonce
        signer = key or self.key
        numbers = signer.public_key().public_numbers()
        jwk = {"kty": "EC", "crv": "P-256", "x": b64(numbers.x.to_bytes(32, "big")), "y": b64(numbers.y.to_bytes(32, "big"))}
        return jwt.encode(claims, signer, algorithm="ES256", headers={"typ": "dpop+jwt", "jwk": jwk})


def start(app, purpose="authenticate", headers=None):
    status, body, _ = call("POST", "/v1/flows", {"app": app, "provider": "device", "purpose": purpose}, headers)
    return body


def answer(flow, fields, headers=None):
    return call("POST", "/v1/flows/" + flow, {"answer": fields}, headers)


def register(device, app="phone", headers=None):
    started = start(app, "register", headers)
    return answer(started["flow"], device.registration(started["challenge"]["nonce"]))


def sign_in(device, **extra):
    started = start("phone")
    return answer(started["flow"], {"assertion": device.assertion(started["challenge"]["nonce"], **extra)})


def refused(device_answer):
    started = start("phone")
    status, body, _ = answer(started["flow"], {"assertion": device_answer(started["challenge"]["nonce"])})
    return status, body.get("error")


# Registration and sign-in.
phone = Device()
started = start("phone", "register")
check("a registration asks for register_key with a nonce and the issuer as audience",
      started["challenge"]["type"] == "register_key" and started["challenge"]["audience"] == issuer)
status, registered, _ = answer(started["flow"], phone.registration(started["challenge"]["nonce"]))
check("the key registers and the flow completes with tokens", status == 200 and registered.get("status") == "completed")
account = registered["account"]["id"]
access = registered["tokens"]["access_token"]
claims = jwt.decode(access, options={"verify_signature": False})
check("the access token names the device key (device_key = the key's RFC 7638 thumbprint)", claims.get("device_key") == phone.kid)
status, body, _ = sign_in(phone)
check("an assertion signed by the registered key signs in to the same account", status == 200 and body["account"]["id"] == account)

# The account API.
status, devices, _ = call("GET", "/v1/account/devices", headers={"Authorization": "Bearer " + access})
check("GET /v1/account/devices lists the device with its installation and key",
      status == 200 and len(devices) == 1 and devices[0]["installations"][0]["installationID"] == phone.installation
      and devices[0]["installations"][0]["keys"][0]["id"] == phone.kid and devices[0]["platform"] == "android")
device_id = devices[0]["id"]
status, renamed, _ = call("PATCH", "/v1/account/devices/" + device_id, {"alias": "Work phone"}, {"Authorization": "Bearer " + access})
check("PATCH renames it", status == 200 and renamed["alias"] == "Work phone")

# Refusals, each with its code.
check("a proof signed by another key: invalid_proof", (lambda s: answer(s["flow"], phone.registration(s["challenge"]["nonce"], proof_key=ec.generate_private_key(ec.SECP256R1())))[1].get("error"))(start("phone", "register")) == "invalid_proof")
check("an assertion signed by another key: invalid_assertion",
      refused(lambda n: jwt.encode({"iss": phone.kid, "aud": issuer, "nonce": n, "iat": int(time.time()), "jti": "x1"}, ec.generate_private_key(ec.SECP256R1()), algorithm="ES256"))[1] == "invalid_assertion")
none_token = b64(json.dumps({"alg": "none"}).encode()) + "." + b64(json.dumps({"iss": phone.kid, "aud": issuer}).encode()) + "."
check("alg none: alg_not_allowed", refused(lambda n: none_token)[1] == "alg_not_allowed")
check("HS256 (the public key as an HMAC secret): alg_not_allowed",
      refused(lambda n: jwt.encode({"iss": phone.kid, "aud": issuer, "nonce": n, "iat": int(time.time()), "jti": "x2"}, "secret-secret-secret-secret-secret", algorithm="HS256"))[1] == "alg_not_allowed")
old = start("phone")["challenge"]["nonce"]
check("another flow's nonce: nonce_mismatch", refused(lambda n: phone.assertion(old))[1] == "nonce_mismatch")
first_jti = refused(lambda n: phone.assertion(n, jti="same-jti"))
check("a reused jti: assertion_replayed", first_jti[0] == 200 and refused(lambda n: phone.assertion(n, jti="same-jti"))[1] == "assertion_replayed")
check("a sub naming another account: account_mismatch", refused(lambda n: phone.assertion(n, sub="someone-else"))[1] == "account_mismatch")

# The JWT bearer grant with a DPoP proof: the tokens are bound to the device key.
token_url = issuer + "/oauth2/token"
form = {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": phone.assertion(aud=token_url), "client_id": "phone", "scope": "openid offline_access"}
status, tokens, _ = call("POST", "/oauth2/token", form=form, headers={"DPoP": phone.dpop("POST", token_url)})
check("the JWT bearer grant with a DPoP proof answers token_type DPoP", status == 200 and tokens.get("token_type") == "DPoP")
bound = tokens["access_token"]
check("the access token carries cnf.jkt = the device key's thumbprint", jwt.decode(bound, options={"verify_signature": False}).get("cnf", {}).get("jkt") == phone.kid)
userinfo = issuer + "/oauth2/userinfo"
status, body, _ = call("GET", "/oauth2/userinfo", headers={"Authorization": "DPoP " + bound, "DPoP": phone.dpop("GET", userinfo, token=bound)})
check("userinfo accepts the bound token with a proof carrying its hash", status == 200 and body.get("sub") == account)
status, body, headers = call("GET", "/oauth2/userinfo", headers={"Authorization": "Bearer " + bound})
check("the bound token presented as a bearer token is refused (401 invalid_token)", status == 401 and body.get("error") == "invalid_token")
challenges = headers.get_all("WWW-Authenticate") or []
check("...with both challenges, DPoP error=\"invalid_token\" first (RFC 9449 section 7.2)",
      len(challenges) == 2 and challenges[0].startswith('DPoP error="invalid_token"') and challenges[1].startswith("Bearer"))
proof = phone.dpop("GET", userinfo, token=bound)
call("GET", "/oauth2/userinfo", headers={"Authorization": "DPoP " + bound, "DPoP": proof})
status, body, headers = call("GET", "/oauth2/userinfo", headers={"Authorization": "DPoP " + bound, "DPoP": proof})
check("a replayed DPoP proof is refused (401 invalid_dpop_proof, WWW-Authenticate: DPoP)",
      status == 401 and body.get("error") == "invalid_dpop_proof" and headers.get("WWW-Authenticate", "").startswith("DPoP"))
status, body, _ = call("GET", "/oauth2/userinfo", headers={"Authorization": "DPoP " + bound, "DPoP": phone.dpop("POST", userinfo, token=bound)})
check("a proof for another method is refused", status == 401 and body.get("error") == "invalid_dpop_proof")
status, body, _ = call("GET", "/oauth2/userinfo", headers={"Authorization": "DPoP " + bound, "DPoP": phone.dpop("GET", issuer + "/oauth2/jwks", token=bound)})
check("a proof for another URL is refused", status == 401 and body.get("error") == "invalid_dpop_proof")
refresh = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": "phone"}
status, body, _ = call("POST", "/oauth2/token", form=refresh)
check("the bound refresh token without its proof is refused (invalid_dpop_proof)", status == 400 and body.get("error") == "invalid_dpop_proof")
status, body, _ = call("POST", "/oauth2/token", form=refresh, headers={"DPoP": phone.dpop("POST", token_url)})
check("with a proof of its key it refreshes, bound again", status == 200 and body.get("token_type") == "DPoP")

# An app that requires DPoP with server nonces.
status, body, headers = call("POST", "/v1/flows", {"app": "strict", "provider": "device", "purpose": "register"})
nonce = headers.get("DPoP-Nonce")
check("an app with dpop: required refuses a flow without a proof and hands out a DPoP-Nonce", status == 400 and body.get("error") == "invalid_dpop_proof" and nonce)
strict = Device()
status, body, headers = call("POST", "/v1/flows", {"app": "strict", "provider": "device", "purpose": "register"}, {"DPoP": strict.dpop("POST", issuer + "/v1/flows")})
check("a proof without the nonce: use_dpop_nonce", status == 400 and body.get("error") == "use_dpop_nonce")
status, body, _ = call("POST", "/v1/flows", {"app": "strict", "provider": "device", "purpose": "register"}, {"DPoP": strict.dpop("POST", issuer + "/v1/flows", nonce=nonce)})
flow = body["flow"]
status, body, headers = answer(flow, strict.registration(body["challenge"]["nonce"]), {"DPoP": strict.dpop("POST", issuer + "/v1/flows/" + flow, nonce=nonce)})
check("with the nonce the registration completes with DPoP-bound tokens", status == 200 and body["tokens"]["token_type"] == "DPoP")

# A device added with the DPoP-bound token: its proof (with the token's hash) binds the new tokens too.
third = Device()
flows_url = issuer + "/v1/flows"
status, body, _ = call("POST", "/v1/flows", {"app": "phone", "provider": "device", "purpose": "register"},
                       {"Authorization": "DPoP " + bound, "DPoP": phone.dpop("POST", flows_url, token=bound)})
status, body, _ = answer(body["flow"], third.registration(body["challenge"]["nonce"]), {"DPoP": phone.dpop("POST", flows_url + "/" + body["flow"])})
check("a device added with a DPoP-bound access token joins the account with DPoP-bound tokens",
      status == 200 and body["account"]["id"] == account and body["tokens"]["token_type"] == "DPoP")

# A second device for the signed-in account, then a reinstall of the first.
second = Device()
status, body, _ = register(second, headers={"Authorization": "Bearer " + access})
check("a second device registered with the account's access token joins that account", status == 200 and body["account"]["id"] == account)
reinstalled = Device(vendor=phone.vendor)
status, body, _ = register(reinstalled, headers={"Authorization": "Bearer " + access})
check("a reinstall (same vendor id, new installation id) registers", status == 200 and body["account"]["id"] == account)
check("the old installation's key no longer signs in (unknown_key)", refused(lambda n: phone.assertion(n))[1] == "unknown_key")
status, body, _ = call("GET", "/oauth2/userinfo", headers={"Authorization": "Bearer " + access})
check("and what it was issued is revoked", status == 401)

# Removing a device revokes its key and tokens.
status, body, _ = sign_in(second)
second_access = body["tokens"]["access_token"]
status, devices, _ = call("GET", "/v1/account/devices", headers={"Authorization": "Bearer " + second_access})
second_device = [d["id"] for d in devices if any(k["id"] == second.kid for i in d["installations"] for k in i["keys"])][0]
status, _, _ = call("DELETE", "/v1/account/devices/" + second_device, headers={"Authorization": "Bearer " + second_access})
check("DELETE /v1/account/devices/{id} removes the device (204)", status == 204)
status, _, _ = call("GET", "/v1/account/devices", headers={"Authorization": "Bearer " + second_access})
check("the removed device's access token is refused at once", status == 401)
check("an assertion by the removed device's key: unknown_key", refused(lambda n: second.assertion(n))[1] == "unknown_key")

print(json.dumps({"account": account, "failures": failures}))
sys.exit(1 if failures else 0)
