"""Browser single sign-on, logout and the session lists, in a real headless Chromium and with
standard clients: Authlib for the OpenID side, PyJWT (an independent JOSE library) in a small
back-channel logout receiver that plays the apps' part.

Two apps share the broker: portal-a (password) and portal-b (password plus the emailed code). The
person signs in at A, reaches B with only the missing code asked, `prompt=none` works both ways,
`max_age=0` asks again, logout from B ends A's session too and both apps receive verified logout
tokens, a redirect URI that is not registered is refused, the cookie has the right attributes and
is useless after logout, and an admin on a second node (same database) lists and ends sessions.
Then "Create an account" and "Forgot password" on the sign-in page.

Run by Tests/integration/run.sh after oidc_test.py (it reuses that module's helpers), with
GATEHOUSE_NODE2_URL, GATEHOUSE_BACKCHANNEL_PORT and GATEHOUSE_ADMIN_TOKEN in the environment.
"""

import base64
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlencode

import jwt as pyjwt
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

import oidc_test as base
import page_support
from oidc_test import (ALICE_PASSWORD, BASE_URL, CALLBACK_PORT, TIMEOUT, WEBAPP_SECRET, CallbackServer, Context, authorization, client, emailed_code,
                       exchange, expect, finish, location_params, open_sign_in_page, replaced, submit_credentials, type_into, validate_id_token, wait)

NODE2 = os.environ["GATEHOUSE_NODE2_URL"].rstrip("/")
BACKCHANNEL_PORT = int(os.environ["GATEHOUSE_BACKCHANNEL_PORT"])
ADMIN = {"Authorization": "Bearer " + os.environ["GATEHOUSE_ADMIN_TOKEN"]}
BYE = f"http://127.0.0.1:{CALLBACK_PORT}/bye"
PORTAL_A = ("portal-a", WEBAPP_SECRET)
PORTAL_B = ("portal-b", WEBAPP_SECRET)
EVENT = "http://schemas.openid.net/event/backchannel-logout"
# erin enrolled and proved this address in oidc_test.py's second-factor check; alice has none.
PERSON, ADDRESS = "erin", "erin@example.com"


def mail_count(address):
    """How many messages the SMTP server delivered to `address` so far."""
    import email
    import email.policy

    folder = os.environ["GATEHOUSE_MAILDIR"]
    count = 0
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        if name.endswith(".eml") and not name.startswith("."):
            with open(os.path.join(folder, name), "rb") as raw:
                if email.message_from_binary_file(raw, policy=email.policy.default)["X-Envelope-To"] == address:
                    count += 1
    return count


class BackchannelReceiver:
    """The apps' back-channel logout endpoints (`/backchannel/<app>`): each logout token is verified
    with PyJWT against the broker's JWKS (signature, iss, aud, iat, typ) and the rules of Back-Channel
    Logout 1.0 section 2.6 (sid or sub, the event, no nonce), then kept; answers 200 (400 if invalid)."""

    def __init__(self, port, issuer, jwks_uri):
        self.tokens = []
        self.errors = []
        self.arrived = threading.Condition()
        self.jwks = pyjwt.PyJWKClient(jwks_uri)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                app = self.path.rsplit("/", 1)[-1]
                body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
                token = dict(parse_qsl(body)).get("logout_token", "")
                try:
                    header = pyjwt.get_unverified_header(token)
                    if header.get("typ") != "logout+jwt":
                        raise ValueError(f"typ is {header.get('typ')}")
                    key = receiver.jwks.get_signing_key_from_jwt(token).key
                    claims = pyjwt.decode(token, key, algorithms=["RS256", "ES256"], audience=app, issuer=issuer, options={"require": ["iat", "jti", "exp"]})
                    if "nonce" in claims or EVENT not in claims.get("events", {}) or not (claims.get("sid") or claims.get("sub")):
                        raise ValueError(f"claims break section 2.6: {claims}")
                    status = 200
                    with receiver.arrived:
                        receiver.tokens.append((app, claims))
                        receiver.arrived.notify_all()
                except Exception as error:  # the broker must not get a 200 for a bad token
                    receiver.errors.append(f"{app}: {error}")
                    status = 400
                self.send_response(status)
                self.send_header("Cache-Control", "no-store")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def wait_for(self, app, sid):
        with self.arrived:
            self.arrived.wait_for(lambda: any(a == app and c.get("sid") == sid for a, c in self.tokens), timeout=TIMEOUT)
        found = [c for a, c in self.tokens if a == app and c.get("sid") == sid]
        expect(found, f"no valid logout token for {app} and sid {sid} (errors: {self.errors})")
        return found[0]


CHECKS = []


def check(description):
    def register(function):
        CHECKS.append((description, function))
        return function
    return register


def fresh_browser(ctx):
    browser = ctx.browser()
    browser.get(BASE_URL + "/healthz")
    browser.delete_all_cookies()
    return browser


def code_in_browser(ctx, oauth, **extra):
    """Opens the authorization URL in the browser that has the session; answers the callback's URL
    without any page being shown (the browser lands on the callback at once)."""
    auth = authorization(ctx, oauth, **extra)
    ctx.browser().get(auth.url)
    url, params = ctx.callbacks.wait_for(auth.state)
    return auth, url, params


def session_cookie(browser):
    return next((c for c in browser.get_cookies() if c["name"] in ("gatehouse_session", "__Host-gatehouse_session")), None)


def form_sign_in(ctx, client_id, username=PERSON, password=ALICE_PASSWORD):
    """Signs in through the HTML form with requests (a second "browser"); answers the session and the code's query."""
    auth = authorization(ctx, client(ctx, client_id, WEBAPP_SECRET))
    session = requests.Session()
    page = session.get(auth.url, timeout=TIMEOUT)
    action, hidden = base.parse_form(page.text)
    answer = session.post(action, data={**hidden, "username": username, "password": password}, allow_redirects=False, timeout=TIMEOUT)
    expect(answer.status_code == 303, f"the sign-in answered {answer.status_code}")
    return session, auth, location_params(answer)


def tokens_for(ctx, client_id, auth, url, scope=base.SCOPE):
    oauth = client(ctx, client_id, WEBAPP_SECRET, scope=scope)
    token = finish(ctx, oauth, auth, url)
    token["_client"], token["_nonce"] = client_id, auth.nonce
    return token



def shot_page(browser, name):
    """A screenshot for docs/images (GATEHOUSE_SCREENSHOTS, copied to .build/test-logs/console-screens)."""
    folder = os.environ.get("GATEHOUSE_SCREENSHOTS")
    if folder:
        os.makedirs(folder, exist_ok=True)
        expect(browser.save_screenshot(os.path.join(folder, f"signin-{name}.png")), f"the screenshot {name} was not saved")

@check("S1. sign-in at portal-a: the session cookie is HttpOnly, SameSite=Lax, Path=/, a browser-session cookie (no expiry; Secure only off on this http loopback); the ID token carries sid and acr 1fa")
def sign_in_at_a(ctx):
    browser = fresh_browser(ctx)
    # Without offline_access: logout revokes this refresh token (S7).
    oauth = client(ctx, "portal-a", WEBAPP_SECRET, scope="openid profile")
    auth = authorization(ctx, oauth)
    open_sign_in_page(browser, auth.url)
    submit_credentials(browser, PERSON, ALICE_PASSWORD)
    url, params = ctx.callbacks.wait_for(auth.state)
    cookie = session_cookie(browser)
    expect(cookie is not None, f"no session cookie among {[c['name'] for c in browser.get_cookies()]}")
    expect(cookie["httpOnly"] and cookie.get("sameSite") == "Lax" and cookie["path"] == "/" and "expiry" not in cookie and "domain" in cookie, f"cookie attributes {cookie}")
    expect(cookie["name"] == "gatehouse_session" and not cookie["secure"], "on http loopback the cookie has no __Host- prefix and no Secure")
    tokens = tokens_for(ctx, "portal-a", auth, url, scope="openid profile")
    claims = validate_id_token(ctx, tokens, "portal-a", auth.nonce)
    expect(claims.get("sid") and claims.get("acr") == "urn:gatehouse:acr:1fa", f"sid/acr are {claims.get('sid')}/{claims.get('acr')}")
    ctx.results.update(a_tokens=tokens, sid=claims["sid"], auth_time=claims["auth_time"], cookie=cookie["value"], person=claims["sub"])


@check("S2. prompt=none at portal-a in the same browser: a code without any page; auth_time is the real sign-in time")
def prompt_none_with_session(ctx):
    ctx.needs("sid", "S1")
    auth, url, params = code_in_browser(ctx, client(ctx, "portal-a", WEBAPP_SECRET), prompt="none")
    expect("code" in params, f"the callback got {params}")
    claims = validate_id_token(ctx, tokens_for(ctx, "portal-a", auth, url), "portal-a", auth.nonce)
    expect(claims["sid"] == ctx.results["sid"] and claims["auth_time"] == ctx.results["auth_time"], f"sid/auth_time {claims}")


@check("S3. portal-b (needs the emailed code) in the same browser: only the code is asked (no password field), then sid is the same and acr is 2fa")
def step_up_at_b(ctx):
    ctx.needs("sid", "S1")
    browser = ctx.browser()
    oauth = client(ctx, "portal-b", WEBAPP_SECRET)
    auth = authorization(ctx, oauth)
    sent_before = mail_count(ADDRESS)
    browser.get(auth.url)
    wait(browser).until(EC.presence_of_element_located((By.ID, "field-code")))
    expect(not browser.find_elements(By.ID, "password"), "the step-up page asks for the password again")
    code, _ = emailed_code(ADDRESS, sent_before)
    type_into(browser, "field-code", code)
    url, params = ctx.callbacks.wait_for(auth.state)
    tokens = tokens_for(ctx, "portal-b", auth, url)
    claims = validate_id_token(ctx, tokens, "portal-b", auth.nonce)
    expect(claims["sid"] == ctx.results["sid"], "portal-b's session is another one")
    expect(claims.get("acr") == "urn:gatehouse:acr:2fa" and "email" in claims.get("amr", []), f"acr/amr {claims.get('acr')} {claims.get('amr')}")
    ctx.results.update(b_tokens=tokens, b_id_token=tokens["id_token"])


@check("S4. prompt=none: portal-b now answers a code; a session with the password only answers interaction_required at portal-b, and none at all login_required")
def prompt_none_both_ways(ctx):
    ctx.needs("b_tokens", "S3")
    _, _, params = code_in_browser(ctx, client(ctx, "portal-b", WEBAPP_SECRET), prompt="none")
    expect("code" in params, f"the callback got {params}")
    session, _, _ = form_sign_in(ctx, "portal-a", "alice")
    auth = authorization(ctx, client(ctx, "portal-b", WEBAPP_SECRET), prompt="none")
    response = session.get(auth.url, allow_redirects=False, timeout=TIMEOUT)
    expect(location_params(response).get("error") == "interaction_required", f"answered {location_params(response)}")
    response = requests.get(auth.url, allow_redirects=False, timeout=TIMEOUT)
    expect(location_params(response).get("error") == "login_required", f"answered {location_params(response)}")


@check("S5. max_age=0 and prompt=login show the sign-in page again despite the session")
def max_age(ctx):
    ctx.needs("sid", "S1")
    browser = ctx.browser()
    for extra in ({"max_age": "0"}, {"prompt": "login"}):
        auth = authorization(ctx, client(ctx, "portal-a", WEBAPP_SECRET), **extra)
        browser.get(auth.url)
        wait(browser).until(EC.presence_of_element_located((By.ID, "password")))


@check("S6. logout at portal-b with an unregistered post_logout_redirect_uri: a 400 page, no redirect")
def logout_mismatch(ctx):
    hint = ctx.needs("b_id_token", "S3")
    for uri in ("https://evil.example/bye", BYE + "/", BYE + "?x=1"):
        response = requests.get(ctx.endpoint("end_session_endpoint") + "?" + urlencode({"id_token_hint": hint, "post_logout_redirect_uri": uri}),
                                allow_redirects=False, timeout=TIMEOUT)
        expect(response.status_code == 400 and "Location" not in response.headers, f"{uri}: {response.status_code} {response.headers.get('Location')}")


@check("S7. logout from portal-b (id_token_hint, state): back at the registered URI with state; portal-a and portal-b receive logout tokens PyJWT verifies; A's refresh token is dead, B's offline_access one lives on")
def logout_from_b(ctx):
    hint = ctx.needs("b_id_token", "S3")
    browser = ctx.browser()
    browser.get(ctx.endpoint("end_session_endpoint") + "?" + urlencode({"id_token_hint": hint, "post_logout_redirect_uri": BYE, "state": "bye-7"}))
    url, params = ctx.callbacks.wait_for("bye-7")
    expect(url.startswith(BYE), f"landed at {url}")
    sid = ctx.results["sid"]
    for app in ("portal-a", "portal-b"):
        claims = ctx.receiver.wait_for(app, sid)
        expect(claims["sub"] == ctx.results["person"], f"{app}'s token names {claims['sub']}")
    refresh = requests.post(ctx.endpoint("token_endpoint"), data={"grant_type": "refresh_token", "refresh_token": ctx.results["a_tokens"]["refresh_token"]},
                            auth=PORTAL_A, timeout=TIMEOUT)
    expect(refresh.status_code == 400 and refresh.json().get("error") == "invalid_grant", f"refresh answered {refresh.status_code} {refresh.text}")
    offline = requests.post(ctx.endpoint("token_endpoint"), data={"grant_type": "refresh_token", "refresh_token": ctx.results["b_tokens"]["refresh_token"]},
                            auth=PORTAL_B, timeout=TIMEOUT)
    expect(offline.status_code == 200, f"the offline_access refresh token was revoked: {offline.status_code} {offline.text}")
    expect(session_cookie(browser) is None, "the browser kept the session cookie")


@check("S8. after logout: prompt=none at portal-a is login_required, and the old cookie replayed by someone else finds no session")
def after_logout(ctx):
    cookie = ctx.needs("cookie", "S1")
    auth, _, params = code_in_browser(ctx, client(ctx, "portal-a", WEBAPP_SECRET), prompt="none")
    expect(params.get("error") == "login_required", f"the callback got {params}")
    auth = authorization(ctx, client(ctx, "portal-a", WEBAPP_SECRET), prompt="none")
    replayed = requests.get(auth.url, cookies={"gatehouse_session": cookie}, allow_redirects=False, timeout=TIMEOUT)
    expect(location_params(replayed).get("error") == "login_required", f"the replayed cookie got {location_params(replayed)}")


@check("S9. an admin on the second node lists erin's session and ends it: the first node refuses the cookie at once, portal-a gets its logout token, and the person's own list is empty")
def admin_on_node_two(ctx):
    alice = ctx.needs("person", "S1")
    session, auth, params = form_sign_in(ctx, "portal-a")
    url = f"http://127.0.0.1:{CALLBACK_PORT}/callback?" + urlencode(params)
    tokens = tokens_for(ctx, "portal-a", auth, url)
    listed = requests.get(f"{NODE2}/admin/v1/users/{alice}/sessions", headers=ADMIN, timeout=TIMEOUT)
    expect(listed.status_code == 200 and listed.json() and listed.json()[0]["apps"] == ["portal-a"], f"node 2 lists {listed.status_code} {listed.text}")
    expect(ctx.results["sid"] not in [s["id"] for s in listed.json()], "the session ended by logout is still listed")
    mine = requests.get(f"{BASE_URL}/v1/account/sessions", headers={"Authorization": "Bearer " + tokens["access_token"]}, timeout=TIMEOUT)
    expect(mine.status_code == 200 and [s["id"] for s in mine.json()] == [s["id"] for s in listed.json()], f"the person's list {mine.text}")
    sid = listed.json()[0]["id"]
    ended = requests.delete(f"{NODE2}/admin/v1/users/{alice}/sessions/{sid}", headers=ADMIN, timeout=TIMEOUT)
    expect(ended.status_code == 204, f"ending answered {ended.status_code} {ended.text}")
    silent = session.get(authorization(ctx, client(ctx, "portal-a", WEBAPP_SECRET), prompt="none").url, allow_redirects=False, timeout=TIMEOUT)
    expect(location_params(silent).get("error") == "login_required", f"node 1 still honours the session: {location_params(silent)}")
    ctx.receiver.wait_for("portal-a", sid)
    mine = requests.get(f"{BASE_URL}/v1/account/sessions", headers={"Authorization": "Bearer " + tokens["access_token"]}, timeout=TIMEOUT)
    expect(mine.status_code == 200 and sid not in [s["id"] for s in mine.json()], f"after the end the person's list is {mine.status_code} {mine.text}")


@check("S10. Create an account on portal-a's sign-in page: a weak password shows the policy's error on the form, a good one signs the new person in")
def create_account(ctx):
    # portal-a's branding: its name, a logo, its colour, help and privacy links.
    logo = "data:image/svg+xml;base64," + base64.b64encode(
        b'<svg xmlns="http://www.w3.org/2000/svg" width="160" height="40"><rect width="40" height="40" rx="8" fill="#6b2fa0"/>'
        b'<text x="50" y="27" font-family="sans-serif" font-size="20" fill="#6b2fa0">Portal</text></svg>').decode()
    branded = requests.patch(f"{BASE_URL}/admin/v1/apps/portal-a/policy", headers=ADMIN, json={"branding": {
        "displayName": "Portal A", "logo": logo, "primaryColor": "#6b2fa0", "supportURL": "mailto:help@portal.example", "privacyURL": "https://portal.example/privacy"}},
        timeout=TIMEOUT)
    expect(branded.status_code == 200, f"the branding was refused: {branded.status_code} {branded.text}")
    too_light = requests.patch(f"{BASE_URL}/admin/v1/apps/portal-a/policy", headers=ADMIN, json={"branding": {"primaryColor": "#ffee00"}}, timeout=TIMEOUT)
    expect(too_light.status_code == 400 and too_light.json().get("field") == "policy.branding.primaryColor", f"a colour too light was not refused: {too_light.text}")
    browser = fresh_browser(ctx)
    oauth = client(ctx, "portal-a", WEBAPP_SECRET)
    auth = authorization(ctx, oauth)
    open_sign_in_page(browser, auth.url)
    expect(browser.find_element(By.CSS_SELECTOR, "img.logo").get_attribute("alt") == "Portal A", "the app's logo is not shown with its name")
    expect("Portal A" in browser.find_element(By.TAG_NAME, "main").text, "the page does not name the app by its display name")
    colour = browser.find_element(By.CSS_SELECTOR, 'form button[type="submit"]').value_of_css_property("background-color")
    expect(colour in ("rgb(107, 47, 160)", "rgba(107, 47, 160, 1)"), f"the button is not in the app's colour: {colour}")
    links = {a.text: a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "footer.brand-links a")}
    expect(links == {"Help": "mailto:help@portal.example", "Privacy": "https://portal.example/privacy"}, f"the footer links are {links}")
    shot_page(browser, "page")
    problems = page_support.accessibility_problems(browser)
    expect(not problems, f"axe on the sign-in page: {problems}")
    browser.set_window_size(390, 844)
    shot_page(browser, "page-phone")
    fits = browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
    browser.set_window_size(1000, 900)
    expect(fits, "the sign-in page is wider than 390 px")
    button = browser.find_element(By.ID, "create-account")
    button.click()
    # The sign-in page has a password field too: wait until it is gone, not for any password field.
    wait(browser).until(replaced(button))
    wait(browser).until(EC.presence_of_element_located((By.ID, "password")))
    expect(not browser.find_elements(By.ID, "create-account"), "the registration page offers registration again")
    expect(browser.title.startswith("Create your account"), f"the registration page is titled {browser.title!r}")
    rules = browser.find_element(By.ID, "password-rules").text
    expect("At least 12 characters" in rules or "characters" in rules, f"the rules are not shown before typing: {rules!r}")
    password_box = browser.find_element(By.ID, "password")
    expect(password_box.get_attribute("autocomplete") == "new-password" and password_box.get_attribute("aria-describedby") == "password-rules",
           "the new password field is not marked new-password and tied to the rules")
    expect(browser.find_element(By.CSS_SELECTOR, 'form button[type="submit"]').text == "Create account", "the button does not say Create account")
    expect(browser.find_elements(By.ID, "sign-in-instead"), "no 'Already have an account? Sign in' on the registration page")
    shot_page(browser, "register")
    problems = page_support.accessibility_problems(browser)
    expect(not problems, f"axe on the registration page: {problems}")
    # Each submission replaces the document: wait for the old form to go before touching the new
    # one, or the driver may reach into the page being replaced ("Node ... does not belong to the
    # document", seen in CI under load).
    old_form = browser.find_element(By.ID, "password")
    submit_credentials(browser, "frank", "short")
    wait(browser).until(replaced(old_form))
    alert = wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, base.ALERT)))
    expect("character" in alert.text or "password" in alert.text.lower(), f"the alert says {alert.text!r}")
    wait(browser).until(EC.presence_of_element_located((By.ID, "password")))
    expect(browser.find_element(By.ID, "username").get_attribute("value") == "frank", "the typed username did not survive the error")
    problems = page_support.accessibility_problems(browser)
    expect(not problems, f"axe on the registration page with an error: {problems}")
    expect(browser.title.startswith("Create your account"), "after an error the page is no longer the registration page")
    # "Already have an account? Sign in" goes back to the sign-in page, and back again.
    back = browser.find_element(By.ID, "sign-in-instead")
    back.click()
    wait(browser).until(replaced(back))
    wait(browser).until(lambda b: b.title.startswith("Sign in"))
    wait(browser).until(EC.element_to_be_clickable((By.ID, "create-account"))).click()
    wait(browser).until(lambda b: b.title.startswith("Create your account"))
    submit_credentials(browser, "frank", "a long enough passphrase 42")
    url, params = ctx.callbacks.wait_for(auth.state)
    claims = validate_id_token(ctx, tokens_for(ctx, "portal-a", auth, url), "portal-a", auth.nonce)
    expect(claims.get("preferred_username") == "frank", f"the new account's ID token names {claims.get('preferred_username')!r}")


@check("S11. Forgot password at portal-b: username, the code sent to the verified address, a new password; every session and refresh token of the account ends; the new password signs in")
def forgot_password(ctx):
    ctx.needs("b_tokens", "S3")
    session, auth_a, params = form_sign_in(ctx, "portal-a")
    tokens = tokens_for(ctx, "portal-a", auth_a, f"http://127.0.0.1:{CALLBACK_PORT}/callback?" + urlencode(params))
    browser = fresh_browser(ctx)
    auth = authorization(ctx, client(ctx, "portal-b", WEBAPP_SECRET))
    open_sign_in_page(browser, auth.url)
    sent = mail_count(ADDRESS)
    browser.find_element(By.ID, "forgot-password").click()
    wait(browser).until(lambda b: b.title.startswith("Reset your password"))
    type_into(browser, "username", PERSON)
    code, _ = emailed_code(ADDRESS, sent)
    type_into(browser, "field-code", code)
    type_into(browser, "password", "a brand new passphrase 7")
    wait(browser).until(EC.presence_of_element_located((By.ID, "username")))
    expect("password was changed" in browser.page_source, "the sign-in page does not say the password changed")
    refresh = requests.post(ctx.endpoint("token_endpoint"), data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
                            auth=PORTAL_A, timeout=TIMEOUT)
    expect(refresh.status_code == 400, f"the old refresh token still works: {refresh.status_code}")
    silent = session.get(authorization(ctx, client(ctx, "portal-a", WEBAPP_SECRET), prompt="none").url, allow_redirects=False, timeout=TIMEOUT)
    expect(location_params(silent).get("error") == "login_required", f"the old session still works: {location_params(silent)}")
    form_sign_in(ctx, "portal-a", PERSON, "a brand new passphrase 7")


@check("S12. the account page: erin signs in at /account through the broker, sees her account and this browser's session, changes her password there (the new one signs in), passes axe, and signs out")
def account_page(ctx):
    ctx.needs("b_tokens", "S3")
    browser = fresh_browser(ctx)
    browser.get(BASE_URL + "/account")
    wait(browser).until(EC.element_to_be_clickable((By.CSS_SELECTOR, 'button[name="provider"][value="local"]'))).click()
    wait(browser).until(EC.presence_of_element_located((By.ID, "username")))
    submit_credentials(browser, PERSON, "a brand new passphrase 7")
    wait(browser).until(lambda b: b.title.startswith("Your account"))
    expect(browser.find_element(By.ID, "username").text == PERSON, "the account page does not name erin")
    expect("(this browser)" in browser.page_source, "the page does not mark this browser's session")
    problems = page_support.accessibility_problems(browser)
    expect(not problems, f"axe on the account page: {problems}")
    shot_page(browser, "account")
    browser.set_window_size(390, 844)
    fits = browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
    browser.set_window_size(1000, 900)
    expect(fits, "the account page is wider than 390 px")
    forged = requests.post(BASE_URL + "/account/password", data={"csrf": "forged", "password": "x" * 20},
                           cookies={c["name"]: c["value"] for c in browser.get_cookies()}, timeout=TIMEOUT, allow_redirects=False)
    expect(forged.status_code == 403 and "invalid_csrf_token" in forged.text, f"a forged password change was not refused: {forged.status_code}")
    box = browser.find_element(By.ID, "f-password")
    box.send_keys("short")
    browser.find_element(By.ID, "change-password").click()
    error = wait(browser).until(EC.presence_of_element_located((By.ID, "f-password-error")))
    expect("character" in error.text, f"the refused password's error reads {error.text!r}")
    box = browser.find_element(By.ID, "f-password")
    box.send_keys("a third passphrase 9x")
    browser.find_element(By.ID, "change-password").click()
    wait(browser).until(lambda b: "Your password is changed" in b.page_source)
    form_sign_in(ctx, "portal-a", PERSON, "a third passphrase 9x")
    events = requests.get(f"{BASE_URL}/admin/v1/audit?type=password.changed", headers=ADMIN, timeout=TIMEOUT).json()
    expect(events and events[0]["appID"] == "gatehouse-account", f"no password.changed event from the account page: {events}")
    browser.find_element(By.ID, "sign-out").click()
    wait(browser).until(lambda b: b.title.startswith("Signed out"))
    after = requests.get(BASE_URL + "/account", cookies={c["name"]: c["value"] for c in browser.get_cookies()}, timeout=TIMEOUT, allow_redirects=False)
    expect(after.status_code == 303, f"the account page still answers after signing out: {after.status_code}")


# Per language: the sign-in page's title, the refusal of a wrong password, and words of the code
# email's subject (the catalogs' texts, as a person reads them).
LANGUAGES = {
    "en": ("Sign in", "Wrong username or password.", "is your"),
    "de": ("Anmelden", "Falscher Benutzername oder falsches Passwort.", "ist Ihr Code"),
    "fr": ("Se connecter", "Nom d'utilisateur ou mot de passe incorrect.", "est votre code"),
    "es": ("Iniciar sesión", "Nombre de usuario o contraseña incorrectos.", "es su código"),
    "nl": ("Inloggen", "Onjuiste gebruikersnaam of onjuist wachtwoord.", "is uw code"),
}


@check("S13. every language: portal-b's sign-in page asked with ui_locales in en, de, fr, es and nl has lang and title in it, refuses a wrong password in it, passes axe and fits 390 px; in German the whole sign-in (password, code page, the code email) stays German although the browser asks for English")
def every_language(ctx):
    ctx.needs("b_tokens", "S3")
    import email
    import email.policy

    for language, (title, refusal, _) in LANGUAGES.items():
        browser = fresh_browser(ctx)
        auth = authorization(ctx, client(ctx, "portal-b", WEBAPP_SECRET), ui_locales=f"{language}-XX ja")
        open_sign_in_page(browser, auth.url)
        lang = browser.find_element(By.TAG_NAME, "html").get_attribute("lang")
        expect(lang == language and browser.title.startswith(title), f"ui_locales={language}: lang={lang!r}, title {browser.title!r}")
        old_form = browser.find_element(By.ID, "password")
        submit_credentials(browser, f"nobody-{language}", "not the password")
        wait(browser).until(replaced(old_form))
        alert = wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, base.ALERT)))
        expect(alert.text == refusal, f"{language}: the refusal reads {alert.text!r}")
        problems = page_support.accessibility_problems(browser)
        expect(not problems, f"axe on the {language} sign-in page: {problems}")
        browser.set_window_size(390, 844)
        fits = browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
        if language == "de":
            shot_page(browser, "page-de-phone")
        browser.set_window_size(1000, 900)
        expect(fits, f"the {language} sign-in page is wider than 390 px")

    # German from start to end, whatever the browser's own languages say (Chromium asks for en-US).
    browser = fresh_browser(ctx)
    auth = authorization(ctx, client(ctx, "portal-b", WEBAPP_SECRET), ui_locales="de")
    open_sign_in_page(browser, auth.url)
    sent = mail_count(ADDRESS)
    submit_credentials(browser, PERSON, "a third passphrase 9x")
    wait(browser).until(EC.presence_of_element_located((By.ID, "field-code")))
    expect(browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "de", "the code page is not German")
    expect("Geben Sie den Code ein" in browser.find_element(By.TAG_NAME, "main").text, "the code page's prompt is not German")
    code, _ = emailed_code(ADDRESS, sent)
    folder = os.environ["GATEHOUSE_MAILDIR"]
    newest = None
    for name in sorted(n for n in os.listdir(folder) if n.endswith(".eml") and not n.startswith(".")):
        with open(os.path.join(folder, name), "rb") as raw:
            message = email.message_from_binary_file(raw, policy=email.policy.default)
        if message["X-Envelope-To"] == ADDRESS:
            newest = message
    subject = str(newest["Subject"]) if newest else ""
    expect(LANGUAGES["de"][2] in subject and code in subject, f"the code email's subject is not German: {subject!r}")
    type_into(browser, "field-code", code)
    url, _ = ctx.callbacks.wait_for(auth.state)
    expect("code=" in url, f"the German sign-in did not end at the app: {url}")


def main():
    ctx = Context(callbacks=CallbackServer(CALLBACK_PORT))
    ctx.discovery = requests.get(BASE_URL + "/.well-known/openid-configuration", timeout=TIMEOUT).json()
    ctx.receiver = BackchannelReceiver(BACKCHANNEL_PORT, ctx.discovery["issuer"], ctx.discovery["jwks_uri"])
    try:
        outcomes = [base.run_check(ctx, description, function) for description, function in CHECKS]
    finally:
        ctx.close()
        ctx.receiver.httpd.shutdown()
    passed = outcomes.count(True)
    print(f"{passed} passed, {len(outcomes) - passed} failed")
    return 0 if all(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
