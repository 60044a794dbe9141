#!/usr/bin/env python3
"""An independent client for activations, invitations, the registration state, logout and profile
confirmation, written against the documented wire contract only (docs/activation.md,
docs/registration-state.md, docs/openapi.yaml): device keys and JWSs come from Python's
`cryptography` and PyJWT, emails are read from the real SMTP server's capture. Prints one line per
check; exits with the number of failures.

usage: activation_client.py BASE_URL ADMIN_TOKEN MAILDIR MOBILE_SECRET [ANSWERS_DIR]

ANSWERS_DIR receives some answers as <operationId>.<status>.json, for the schema check of run.sh.
"""
import base64, email, email.policy, hashlib, json, os, re, sys, threading, time, urllib.error, urllib.parse, urllib.request, uuid

import jwt
from cryptography.hazmat.primitives.asymmetric import ec

base, admin_token, maildir, mobile_secret = sys.argv[1:5]
answers_dir = sys.argv[5] if len(sys.argv) > 5 else None
failures = 0


def keep(operation, status, body):
    """Keeps an answer for the OpenAPI schema check."""
    if answers_dir:
        json.dump(body, open(os.path.join(answers_dir, "%s.%d.json" % (operation, status)), "w"))


def check(description, ok):
    global failures
    print(("  ok   " if ok else "  FAIL ") + description)
    if not ok:
        failures += 1


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def call(method, path, body=None, headers=None, form=None, raw=False):
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
            return response.status, (text.decode() if raw else json.loads(text) if text else {})
    except urllib.error.HTTPError as error:
        text = error.read()
        return error.code, (text.decode() if raw else json.loads(text) if text else {})


admin = {"Authorization": "Bearer " + admin_token}
backend = {"Authorization": "Basic " + base64.b64encode(("mobile:" + mobile_secret).encode()).decode()}
issuer = call("GET", "/.well-known/openid-configuration")[1]["issuer"]


def mail_to(address, after=0):
    """The newest message to `address` that arrived after `after` (a count of earlier messages)."""
    for _ in range(100):
        found = []
        for name in sorted(os.listdir(maildir)):
            message = email.message_from_binary_file(open(os.path.join(maildir, name), "rb"), policy=email.policy.default)
            if message["X-Envelope-To"] == address:
                found.append(message.get_body(("plain",)).get_content())
        if len(found) > after:
            return found[-1]
        time.sleep(0.05)  # the SMTP server writes the file after the broker's answer
    return ""


def count_mail(address):
    return sum(
        1 for name in os.listdir(maildir)
        if email.message_from_binary_file(open(os.path.join(maildir, name), "rb"), policy=email.policy.default)["X-Envelope-To"] == address
    )


class Phone:
    """An installation of the app on a phone: a P-256 key pair made here, an installation id."""

    def __init__(self, installation=None):
        self.new_key()
        self.installation = installation or "inst-" + uuid.uuid4().hex
        self.vendor = "vendor-" + uuid.uuid4().hex

    def new_key(self):
        self.key = ec.generate_private_key(ec.SECP256R1())
        numbers = self.key.public_key().public_numbers()
        self.jwk = {"kty": "EC", "crv": "P-256", "x": b64(numbers.x.to_bytes(32, "big")), "y": b64(numbers.y.to_bytes(32, "big"))}
        canonical = json.dumps({k: self.jwk[k] for k in sorted(self.jwk)}, separators=(",", ":")).encode()
        self.kid = b64(hashlib.sha256(canonical).digest())

    def facts(self):
        return {"installationID": self.installation, "vendorID": self.vendor, "platform": "android", "model": "Pixel 9", "pushToken": "fcm-" + self.installation,
                "biometric": True}

    def registration(self, nonce):
        return dict(self.facts(), publicKey=self.jwk, proof=jwt.encode({"nonce": nonce, "aud": issuer}, self.key, algorithm="ES256"))

    def assertion(self, nonce):
        claims = {"iss": self.kid, "aud": issuer, "nonce": nonce, "iat": int(time.time()), "jti": str(uuid.uuid4())}
        return {"assertion": jwt.encode(claims, self.key, algorithm="ES256")}


# `mobile` is a confidential app (its back end issues activations), so its flows authenticate too.
flow_headers = {}


def answer(flow, fields):
    return call("POST", "/v1/flows/" + flow, {"answer": fields}, flow_headers.get(flow))


def start(body):
    headers = backend if body["app"] == "mobile" else None
    status, started = call("POST", "/v1/flows", body, headers)
    if "flow" in started:
        flow_headers[started["flow"]] = headers
    return status, started


def redeem(payload, pin, phone, app="mobile"):
    status, started = start({"app": app, "provider": "activation-strict" if app == "kiosk" else "activation"})
    assert started.get("challenge", {}).get("type") == "activation", started
    return answer(started["flow"], dict(phone.facts(), activation=payload, pin=pin))


def register_key(step, phone):
    challenge = step["challenge"]
    assert challenge["type"] == "register_key", step
    return answer(step["flow"], phone.registration(challenge["nonce"]))


def sign_in(phone):
    status, started = start({"app": "mobile", "provider": "device"})
    return answer(started["flow"], phone.assertion(started["challenge"]["nonce"]))


def state(installation, token=None, app="mobile"):
    headers = {"Authorization": "Bearer " + token} if token else {}
    return call("GET", "/v1/registration-state?" + urllib.parse.urlencode({"app": app, "installation": installation}), headers=headers)[1]


def issue(fields, app="mobile"):
    return call("POST", "/admin/v1/apps/%s/activations" % app, fields, admin)


# --- a temporary registration: activation data emailed, redeemed, outcome new
ada_address = "ada-%s@example.com" % uuid.uuid4().hex[:8]
status, issued = issue({"email": ada_address, "send": True})
check("an admin issues activation data for an address without an account (201, a generated PIN)", status == 201 and re.fullmatch(r"\d{5,}", issued.get("pin", "")) is not None)
check("emailed activation data are not in the answer (the address they prove is the recipient's)", "payload" not in issued and "deepLink" not in issued and "•" in issued.get("sentTo", ""))
body = mail_to(ada_address)
link = re.search(r"mobile://activate\?activation=(\S+)", body)
check("the activation data arrive by email as the app's deep link, without the PIN", link is not None and issued["pin"] not in body)
payload = link.group(1)
check("the payload is opaque: it holds neither the PIN nor the address", issued["pin"] not in payload and ada_address not in payload and payload.startswith("ga1."))
status, listed = call("GET", "/admin/v1/apps/mobile/activations", headers=admin)
secret = payload.split(".")[2]
check("the admin listing shows the activation pending, never its secret", status == 200 and any(a["id"] == issued["id"] and a["state"] == "pending" for a in listed) and secret not in json.dumps(listed))

phone_a = Phone()
status, step = redeem(link.group(0), issued["pin"], phone_a)
check("redeeming the deep link with the PIN answers outcome new and asks for the device key", status == 200 and step["challenge"]["type"] == "register_key" and step["challenge"]["activation"]["outcome"] == "new")
status, done = register_key(step, phone_a)
check("the key registers and the temporary registration becomes an account named by its address", status == 200 and done["status"] == "completed" and done["account"]["username"] == ada_address)
check("the answer repeats the outcome", done.get("activation", {}).get("outcome") == "new")
ada = done["account"]["id"]
ada_tokens = done["tokens"]
claims = jwt.decode(ada_tokens["access_token"], options={"verify_signature": False})
check("the access token's amr names the activation PIN and the key", "pin" in claims["amr"] and "activation" in claims["amr"] and "swk" in claims["amr"])
status, again = redeem(payload, issued["pin"], Phone())
check("the same activation data again: invalid_activation, reason activation_used", status == 400 and again["error"] == "invalid_activation" and again.get("reason") == "activation_used")
status, devices = call("GET", "/v1/account/devices", headers={"Authorization": "Bearer " + ada_tokens["access_token"]})
installation = devices[0]["installations"][0] if status == 200 and devices else {}
check("the installation keeps its push token and biometric flag", installation.get("pushToken") == "fcm-" + phone_a.installation and installation.get("biometric") is True)

# --- registration state
check("registration state without a token: registration_required", state(phone_a.installation).get("state") == "registration_required")
active = state(phone_a.installation, ada_tokens["access_token"])
keep("registrationState", 200, active)
check("with the installation's token: active, registrationType device, with expiresAt and renewAfter before it",
      active.get("state") == "active" and active.get("registrationType") == "device" and active.get("renewAfter", "~") < active.get("expiresAt", ""))
check("the state carries the account and its verified address", active.get("account", {}).get("id") == ada and active.get("profile", {}).get("email") == ada_address)
reinstalled = state("inst-" + uuid.uuid4().hex, ada_tokens["access_token"])
check("a wiped and reinstalled app (new installation id) with the old token: registration_required", reinstalled.get("state") == "registration_required")
check("another app's token for this installation: registration_required", state(phone_a.installation, ada_tokens["access_token"], app="profiles").get("state") == "registration_required")

# --- an app's back end issues; re_activation with override
status, refused = call("POST", "/v1/activations", {"account": ada})
check("POST /v1/activations without client credentials: 401", status == 401)
status, by_app = call("POST", "/v1/activations", {"account": ada, "pin": "24680"}, backend)
keep("issueActivation", status, by_app)
check("the app's back end issues activation data with its client credentials (201)", status == 201 and "payload" in by_app and "pin" not in by_app)
status, weak = call("POST", "/v1/activations", {"account": ada, "pin": "1234"}, backend)
check("a PIN against the app's policy is refused with its rule's code", status == 400 and weak["error"] in ("pin_too_short", "pin_sequence", "pin_denied"))
phone_b = Phone()
status, step = redeem(by_app["payload"], "24680", phone_b)
check("on a second phone: activation_choice re_activation, offering override and new_activation, naming the other installation",
      step.get("challenge", {}).get("type") == "activation_choice" and step["challenge"]["outcome"] == "re_activation"
      and step["challenge"]["choices"] == ["override", "new_activation"] and len(step["challenge"]["installations"]) == 1)
status, bad = answer(step["flow"], {"choice": "merge"})
check("a choice the outcome does not offer: invalid_answer", status == 400 and bad["error"] == "invalid_answer")
status, next_step = answer(step["flow"], {"choice": "override"})
status, done = register_key(next_step, phone_b)
check("override: the key registers and the answer lists the overridden installation", status == 200 and len(done.get("activation", {}).get("overridden", [])) == 1)
bob_tokens = done["tokens"]
status, _ = call("GET", "/oauth2/userinfo", headers={"Authorization": "Bearer " + ada_tokens["access_token"]})
check("the overridden installation's access token is refused at once (401)", status == 401)
status, old = sign_in(phone_a)
check("the overridden installation's key no longer signs in (unknown_key)", status == 400 and old["error"] == "unknown_key")
check("and its registration state is registration_required", state(phone_a.installation, ada_tokens["access_token"]).get("state") == "registration_required")

# --- re_activation with new_activation, then the additional activation
status, by_app = call("POST", "/v1/activations", {"account": ada, "pin": "24680"}, backend)
phone_c = Phone()
status, step = redeem(by_app["payload"], "24680", phone_c)
status, stopped = answer(step["flow"], {"choice": "new_activation", "pin": "97531", "alias": "Tablet"})
keep("answerFlow", status, stopped)
new_activation = stopped.get("activation", {}).get("newActivation", {})
check("new_activation: the flow stops with new activation data (status stopped)", status == 200 and stopped["status"] == "stopped" and "payload" in new_activation)
status, step = redeem(new_activation["payload"], "97531", phone_c)
check("the new activation adds this installation (outcome new)", step.get("challenge", {}).get("activation", {}).get("outcome") == "new")
status, done = register_key(step, phone_c)
check("both installations now sign in", status == 200 and sign_in(phone_b)[0] == 200 and sign_in(phone_c)[0] == 200)

# --- already_activated: stop, then re_enrol
status, by_app = call("POST", "/v1/activations", {"account": ada, "pin": "24680"}, backend)
status, step = redeem(by_app["payload"], "24680", phone_c)
check("on an installation already active for the account: already_activated (re_enrol or stop)",
      step.get("challenge", {}).get("outcome") == "already_activated" and step["challenge"]["choices"] == ["re_enrol", "stop"])
status, stopped = answer(step["flow"], {"choice": "stop"})
check("stop ends the flow without tokens", status == 200 and stopped["status"] == "stopped" and "tokens" not in stopped)
status, by_app = call("POST", "/v1/activations", {"account": ada, "pin": "24680"}, backend)
status, step = redeem(by_app["payload"], "24680", phone_c)
old_kid = phone_c.kid
phone_c.new_key()
status, next_step = answer(step["flow"], {"choice": "re_enrol"})
status, done = register_key(next_step, phone_c)
check("re_enrol registers a fresh key for the installation", status == 200 and sign_in(phone_c)[0] == 200)

# --- wrong PINs, lockout, admin unlock; permanent on the strict app
status, by_app = call("POST", "/v1/activations", {"account": ada, "pin": "24680"}, backend)
status, wrong = redeem(by_app["payload"], "11357", Phone())
check("a wrong activation PIN: invalid_pin", status == 400 and wrong["error"] == "invalid_pin")
status, locked = redeem(by_app["payload"], "11357", Phone())
check("the second wrong PIN locks: locked_out with lockedUntil", locked.get("error") == "locked_out" and "lockedUntil" in locked and not locked.get("permanent"))
status, still = redeem(by_app["payload"], "24680", Phone())
check("while locked even the right PIN is refused", still.get("error") == "locked_out")
status, locks = call("GET", "/admin/v1/lockouts", headers=admin)
keys = [lock["key"] for lock in locks if lock["key"].startswith("activation:")]
check("the admin sees the account's and the activation's locks", "activation:account:" + ada in keys and any(k.startswith("activation:activation:") for k in keys))
for key in keys:
    call("POST", "/admin/v1/lockouts/unlock", {"key": key}, admin)
status, step = redeem(by_app["payload"], "24680", Phone())
check("after the admin's unlock the right PIN goes on", status == 200 and step["challenge"]["type"] == "activation_choice")

status, strict = issue({"email": "kiosk-%s@example.com" % uuid.uuid4().hex[:6], "pin": "24680"}, app="kiosk")
status, locked = redeem(strict["payload"], "11357", Phone(), app="kiosk")
check("where the policy says so, a lockout is permanent (locked_out, permanent)", locked.get("error") == "locked_out" and locked.get("permanent") is True)
status, locks = call("GET", "/admin/v1/lockouts", headers=admin)
for lock in locks:
    if lock["key"].startswith("activation-strict:"):
        call("POST", "/admin/v1/lockouts/unlock", {"key": lock["key"]}, admin)
status, dead = redeem(strict["payload"], "24680", Phone(), app="kiosk")
check("a permanently locked activation needs a new one (activation_locked), even after the unlock", dead.get("reason") == "activation_locked")

# --- sending activation data again, and the broker's own activation page
resend_address = "resend-%s@example.com" % uuid.uuid4().hex[:6]
status, first = issue({"email": resend_address, "pin": "24680", "send": True})
old_payload = re.search(r"mobile://activate\?activation=(\S+)", mail_to(resend_address)).group(1)
status, resent = call("POST", "/admin/v1/apps/mobile/resends", {"activation": first["id"]}, admin)
new_payload = re.search(r"mobile://activate\?activation=(\S+)", mail_to(resend_address, 1)).group(1)
check("a resend emails new activation data for the same activation (a new secret, the same id)",
      status == 201 and new_payload != old_payload and new_payload.split(".")[1] == old_payload.split(".")[1] and "payload" not in resent)
status, stale = redeem(old_payload, "24680", Phone())
check("the data sent before stop working (invalid_activation)", status == 400 and stale["error"] == "invalid_activation")
status, step = redeem(new_payload, "24680", Phone())
check("the data sent again redeem with the same PIN", status == 200 and step["challenge"]["type"] == "register_key")
status, page = call("GET", "/activate?activation=" + urllib.parse.quote(new_payload), raw=True)
check("the broker's /activate page (opened in a browser) shows the activation data to enter in the app", status == 200 and new_payload in page)

# --- revoked, and two installations at the same instant
status, revoked = issue({"account": ada, "pin": "24680"})
status, _ = call("DELETE", "/admin/v1/apps/mobile/activations/" + revoked["id"], headers=admin)
status, refused = redeem(revoked["payload"], "24680", Phone())
check("a revoked activation: invalid_activation, reason activation_revoked", refused.get("reason") == "activation_revoked")
status, race = issue({"email": "race-%s@example.com" % uuid.uuid4().hex[:6], "pin": "24680"})
starts = [start({"app": "mobile", "provider": "activation"})[1] for _ in range(2)]
barrier, results = threading.Barrier(2), []


def racer(started):
    barrier.wait()
    results.append(answer(started["flow"], dict(Phone().facts(), activation=race["payload"], pin="24680")))


threads = [threading.Thread(target=racer, args=(s,)) for s in starts]
[t.start() for t in threads]
[t.join() for t in threads]
check("one payload, right PIN, two installations at the same instant: exactly one goes on, the other gets activation_in_use (409)",
      sorted(status for status, _ in results) == [200, 409] and any(b.get("error") == "activation_in_use" for _, b in results))

# --- invitations
seen = count_mail(ada_address)
status, invited = call("POST", "/admin/v1/apps/mobile/invitations", {"email": ada_address}, admin)
check("inviting an account's verified address: an invitation for the account", status == 201 and invited["kind"] == "account" and invited["state"] == "pending")
token = re.search(r"/invitations/([A-Za-z0-9_-]+)", mail_to(ada_address, seen)).group(1)
status, view = call("GET", "/v1/invitations/" + token)
keep("showInvitation", status, view)
check("the emailed link shows the invitation (app, masked address, pending)", status == 200 and view["state"] == "pending" and view["appName"] == "Mobile" and "•" in view["email"])
status, page = call("GET", "/invitations/" + token, raw=True)
check("its page offers Accept with an activation PIN, and Decline", status == 200 and "Accept" in page and "Decline" in page and 'name="pin"' in page)
status, german = call("GET", "/invitations/" + token, headers={"Accept-Language": "de-DE, en;q=0.5"}, raw=True)
check("the page speaks the browser's language: German buttons, label and lang, no English left",
      status == 200 and '<html lang="de"' in german and "Annehmen" in german and "Ablehnen" in german and "Aktivierungs-PIN" in german
      and ">Accept<" not in german and "You are invited" not in german)
status, refused = call("POST", "/invitations/" + token, form={"answer": "accept", "pin": "12345"}, headers={"Accept-Language": "de-DE"}, raw=True)
check("a PIN the policy refuses, on the German page: the rule's refusal in German, with the policy's numbers",
      status == 400 and '<html lang="de"' in refused and any(word in refused for word in ("Vermeiden Sie", "Verwenden Sie", "Diese PIN"))
      and not any(word in refused for word in ("Avoid ", "Use at ", "too easy")))
status, weak = call("POST", "/v1/invitations/%s/accept" % token, {"pin": "12345"})
check("accepting with a PIN against the policy: its rule's code, the invitation stays open", status == 400 and weak["error"].startswith("pin_") and call("GET", "/v1/invitations/" + token)[1]["state"] == "pending")
status, accepted = call("POST", "/v1/invitations/%s/accept" % token, {"pin": "86420"})
keep("acceptInvitation", status, accepted)
check("accepting with a chosen PIN answers activation data", status == 200 and accepted["state"] == "accepted" and "payload" in accepted["activation"])
status, twice = call("POST", "/v1/invitations/%s/decline" % token)
check("an answered invitation cannot be answered again (409)", status == 409 and twice["error"] == "invalid_invitation")
status, step = redeem(accepted["activation"]["payload"], "86420", phone_b)
check("the accepted invitation's activation redeems with the chosen PIN (already_activated on an active phone)", step.get("challenge", {}).get("outcome") == "already_activated")
seen = count_mail(ada_address)
call("POST", "/admin/v1/apps/mobile/invitations", {"email": ada_address}, admin)
token = re.search(r"/invitations/([A-Za-z0-9_-]+)", mail_to(ada_address, seen)).group(1)
status, page = call("POST", "/invitations/" + token, form={"answer": "decline"}, raw=True)
check("declining on the page: the page says declined", status == 200 and "declined" in page)
status, late = call("POST", "/v1/invitations/%s/accept" % token, {"pin": "86420"})
check("a declined invitation cannot be accepted afterwards", status == 409)
seen = count_mail(ada_address)
status, revocable = call("POST", "/admin/v1/apps/mobile/invitations", {"email": ada_address}, admin)
token = re.search(r"/invitations/([A-Za-z0-9_-]+)", mail_to(ada_address, seen)).group(1)
status, _ = call("DELETE", "/admin/v1/apps/mobile/invitations/" + revocable["id"], headers=admin)
status, revoked_view = call("GET", "/v1/invitations/" + token)
check("an admin revokes an invitation: its link shows it revoked and it cannot be accepted",
      revoked_view.get("state") == "revoked" and call("POST", "/v1/invitations/%s/accept" % token, {"pin": "86420"})[0] == 409)
status, unknown = call("GET", "/v1/invitations/not-a-token")
check("an unknown invitation token: 404 invalid_invitation", status == 404 and unknown["error"] == "invalid_invitation")

# --- a temporary registration on an active installation: merge, then replace
work_address = "bob-work-%s@example.com" % uuid.uuid4().hex[:6]
status, invited = call("POST", "/admin/v1/apps/mobile/invitations", {"email": work_address}, admin)
check("inviting a new address makes a temporary registration; its PIN is shown once to the admin",
      status == 201 and invited["kind"] == "temporary_registration" and re.fullmatch(r"\d{5,}", invited.get("pin", "")) is not None)
link = re.search(r"mobile://activate\?activation=\S+", mail_to(work_address)).group(0)
status, step = redeem(link, invited["pin"], phone_b)
check("redeemed on a phone active for another account: merge (merge or replace)", step.get("challenge", {}).get("outcome") == "merge" and step["challenge"]["choices"] == ["merge", "replace"])
status, sign = answer(step["flow"], {"choice": "merge"})
check("merge first asks the installation's account to sign in with its key", sign.get("challenge", {}).get("type") == "assertion")
status, done = answer(sign["flow"], phone_b.assertion(sign["challenge"]["nonce"]))
check("after the sign-in the address joins that account, as verified", status == 200 and done["account"]["id"] == ada and done["activation"]["mergedAddress"] == work_address)
check("the merged account still signs in with its own key", sign_in(phone_b)[0] == 200)

other_address = "carol-%s@example.com" % uuid.uuid4().hex[:6]
status, invited = call("POST", "/admin/v1/apps/mobile/invitations", {"email": other_address, "pin": "31415"}, admin)
link = re.search(r"mobile://activate\?activation=\S+", mail_to(other_address)).group(0)
status, step = redeem(link, "31415", phone_b)
status, next_step = answer(step["flow"], {"choice": "replace"})
carol_phone = Phone(installation=phone_b.installation)
status, done = register_key(next_step, carol_phone)
check("replace: the temporary registration becomes an account of its own on the same installation",
      status == 200 and done["account"]["id"] != ada and done["account"]["username"] == other_address)
carol_tokens = done["tokens"]

# --- logout
status, refused = call("POST", "/v1/logout", {"refresh_token": carol_tokens["refresh_token"]})
check("a confidential app's refresh token logs out only with its client credentials (401 without)", status == 401 and refused["error"] == "invalid_client")
status, _ = call("POST", "/v1/logout", {"refresh_token": carol_tokens["refresh_token"]}, backend)
check("POST /v1/logout with the refresh token: 204", status == 204)
status, refreshed = call("POST", "/oauth2/token", form={"grant_type": "refresh_token", "refresh_token": carol_tokens["refresh_token"], "client_id": "mobile"},
                         headers=backend)
check("the refresh token is refused afterwards (invalid_grant)", status == 400 and refreshed.get("error") == "invalid_grant")
status, _ = call("GET", "/oauth2/userinfo", headers={"Authorization": "Bearer " + carol_tokens["access_token"]})
check("and so is the access token issued with it (401), at once", status == 401)
check("the installation's state is registration_required", state(phone_b.installation, carol_tokens["access_token"]).get("state") == "registration_required")
status, _ = call("POST", "/v1/logout", {"refresh_token": "unknown-token"}, backend)
check("an unknown refresh token logs out nothing and answers 204 (RFC 7009 style)", status == 204)
status, _ = call("POST", "/v1/logout", headers={"Authorization": "Bearer " + bob_tokens["access_token"]})
check("logout with the access token alone revokes its family too", status == 204 and call("GET", "/oauth2/userinfo", headers={"Authorization": "Bearer " + bob_tokens["access_token"]})[0] == 401)

# --- profile confirmation with an edited address
installation = "inst-" + uuid.uuid4().hex
first_address = "pat-%s@example.com" % uuid.uuid4().hex[:6]
new_address = "pat.new-%s@example.com" % uuid.uuid4().hex[:6]
status, started = start({"app": "profiles", "provider": "email", "installation": installation})
answer(started["flow"], {"email": first_address})
code = re.search(r"\b\d{6}\b", mail_to(first_address)).group(0)
status, step = answer(started["flow"], {"code": code})
check("a new account's first sign-in ends in confirm_profile with the provider's profile, and no tokens",
      step.get("challenge", {}).get("type") == "confirm_profile" and step["challenge"]["profile"]["email"] == first_address and "tokens" not in step)
check("meanwhile the installation's state is confirmation_required", state(installation, app="profiles").get("state") == "confirmation_required")
status, step = answer(started["flow"], {"name": "Pat Example", "email": new_address})
check("an edited address is sent a code first (codeSentTo)", status == 200 and step["challenge"]["type"] == "confirm_profile" and "•" in step["challenge"].get("codeSentTo", ""))
status, wrong = answer(started["flow"], {"code": "000000"})
check("a wrong code is refused (invalid_code)", status == 400 and wrong["error"] == "invalid_code")
code = re.search(r"\b\d{6}\b", mail_to(new_address)).group(0)
status, done = answer(started["flow"], {"code": code})
check("the right code keeps the edited profile and issues the tokens", status == 200 and done["status"] == "completed")
id_token = jwt.decode(done["tokens"]["id_token"], options={"verify_signature": False})
check("the ID token carries the confirmed name and the new, verified address",
      id_token.get("name") == "Pat Example" and id_token.get("email") == new_address and id_token.get("email_verified") is True)
confirmed = state(installation, done["tokens"]["access_token"], app="profiles")
check("the state is active now, registrationType passwordless, with the confirmed profile",
      confirmed.get("state") == "active" and confirmed.get("registrationType") == "passwordless" and confirmed["profile"]["email"] == new_address)

print(json.dumps({"failures": failures}))
sys.exit(1 if failures else 0)
