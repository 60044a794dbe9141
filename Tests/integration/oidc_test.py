"""Gatehouse as an OpenID Provider for an unchanged, standard client and a real browser.

What this proves: a stock OIDC client library (Authlib's requests OAuth2Session, its JOSE module for
the ID token) and a real headless Chromium driven by Selenium sign in through Gatehouse with only the
discovery URL and the client credentials configured -- authorization code with PKCE S256, ID token
validation against the JWKS, userinfo, refresh-token rotation, revocation, a public client -- and
that the broker refuses what it must refuse: unregistered redirect URIs, missing or plain PKCE,
reused codes and refresh tokens (revoking what they issued), wrong verifiers and secrets, tokens
presented by another app, tampered JWTs, forms posted without the browser's cookie, cancelled
sign-ins, and tokens of a deregistered account.

Run by Tests/integration/run.sh, which starts the broker and passes, in the environment:
GATEHOUSE_BASE_URL, GATEHOUSE_CALLBACK_PORT, WEBAPP_SECRET, OTHER_SECRET, ALICE_PASSWORD,
BOB_PASSWORD and GATEHOUSE_SCREENSHOT (where to save a picture of the sign-in page).

Prints one line per check (`ok   ...` or `FAIL ...`), then `N passed, N failed`; exits 1 if any
check failed.
"""

import base64
import hashlib
import html
import json
import os
import re
import sys
import threading
import time
import traceback
import warnings
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

import authlib.deprecate
import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session, OAuthError

# authlib.jose still works; it only announces its successor (joserfc) on import.
warnings.filterwarnings("ignore", category=authlib.deprecate.AuthlibDeprecationWarning)
from authlib.jose import JsonWebKey, jwt  # noqa: E402

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

BASE_URL = os.environ["GATEHOUSE_BASE_URL"].rstrip("/")
CALLBACK_PORT = int(os.environ["GATEHOUSE_CALLBACK_PORT"])
CALLBACK_URL = f"http://127.0.0.1:{CALLBACK_PORT}/callback"
OTHER_CALLBACK_URL = f"http://127.0.0.1:{CALLBACK_PORT}/other"
WEBAPP_SECRET = os.environ["WEBAPP_SECRET"]
OTHER_SECRET = os.environ["OTHER_SECRET"]
ALICE_PASSWORD = os.environ.get("ALICE_PASSWORD", "correct horse battery")
BOB_PASSWORD = os.environ.get("BOB_PASSWORD", "tulip marble engine")
SCREENSHOT = os.environ.get("GATEHOUSE_SCREENSHOT", "sign-in.png")

WEBAPP = ("webapp", WEBAPP_SECRET)
OTHER = ("other", OTHER_SECRET)
SCOPE = "openid profile offline_access"
TIMEOUT = 10
CHROME_ARGS = ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,800"]
SIGN_IN_BUTTON = 'form button[type="submit"]:not([name="cancel"])'
ALERT = 'p.error[role="alert"]'


class CheckFailed(Exception):
    """A check's expectation did not hold; the message says what was seen."""


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


# --- The app's callback: where the browser lands after the broker redirects back ------------------


class CallbackServer:
    """A tiny redirect-URI endpoint on the callback port: records every query it receives (keyed by
    `state`) and answers 200 with a small page so the browser has somewhere to land."""

    def __init__(self, port):
        self.received = {}
        self.arrived = threading.Condition()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler_class())
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                parts = urlsplit(self.path)
                if parts.path not in ("/callback", "/other", "/bye"):
                    self.send_error(404)
                    return
                server.record(f"http://127.0.0.1:{CALLBACK_PORT}{self.path}", dict(parse_qsl(parts.query)))
                body = b"<!DOCTYPE html><title>Callback</title><p>Back at the app.</p>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        return Handler

    def record(self, url, params):
        with self.arrived:
            self.received[params.get("state")] = (url, params)
            self.arrived.notify_all()

    def wait_for(self, state, timeout=TIMEOUT):
        """The (full URL, parameters) of the callback carrying `state`."""
        with self.arrived:
            self.arrived.wait_for(lambda: state in self.received, timeout=timeout)
            expect(state in self.received, f"the callback never received state={state!r}")
            return self.received[state]

    def close(self):
        self.httpd.shutdown()


# --- Shared state of the run -----------------------------------------------------------------------


@dataclass
class Context:
    callbacks: CallbackServer
    discovery: dict = field(default_factory=dict)
    results: dict = field(default_factory=dict)
    _browser: object = None
    _browser_error: str = ""

    def endpoint(self, name):
        expect(self.discovery.get(name), f"discovery has no {name} (check 1 failed?)")
        return self.discovery[name]

    def needs(self, key, check_number):
        expect(key in self.results, f"needs the result of check {check_number}, which failed")
        return self.results[key]

    def browser(self):
        """One headless Chromium for the whole run, started on first use."""
        if self._browser is None and not self._browser_error:
            try:
                self._browser = start_browser()
            except Exception as error:  # keep the reason for every later browser check
                self._browser_error = f"the browser did not start: {error}"
        expect(self._browser is not None, self._browser_error)
        return self._browser

    def close(self):
        if self._browser is not None:
            self._browser.quit()
        self.callbacks.close()


def start_browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in CHROME_ARGS:
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)


# --- Client helpers --------------------------------------------------------------------------------


def client(ctx, client_id, secret=None, scope=SCOPE, redirect_uri=CALLBACK_URL, **options):
    """An unchanged Authlib client configured from discovery only."""
    return OAuth2Session(
        client_id, secret, scope=scope, redirect_uri=redirect_uri, code_challenge_method="S256", default_timeout=TIMEOUT,
        token_endpoint=ctx.endpoint("token_endpoint"), **options,
    )


@dataclass
class Authorization:
    """One authorization request: its URL and what the client keeps to finish it."""

    url: str
    state: str
    nonce: str
    verifier: str


def authorization(ctx, oauth, **extra):
    verifier, state, nonce = generate_token(48), generate_token(20), generate_token(20)
    url, _ = oauth.create_authorization_url(
        ctx.endpoint("authorization_endpoint"), state=state, code_verifier=verifier, nonce=nonce, **extra
    )
    return Authorization(url, state, nonce, verifier)


def finish(ctx, oauth, auth, callback_url):
    """Authlib reads the code (checking state) from the callback URL and redeems it."""
    return oauth.fetch_token(
        ctx.endpoint("token_endpoint"), authorization_response=callback_url, state=auth.state, code_verifier=auth.verifier
    )


def jwks(ctx):
    return JsonWebKey.import_key_set(requests.get(ctx.endpoint("jwks_uri"), timeout=TIMEOUT).json())


def at_hash(access_token):
    """OIDC Core 3.1.3.6: base64url of the left half of the SHA-256 of the access token."""
    digest = hashlib.sha256(access_token.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest[: len(digest) // 2]).rstrip(b"=").decode("ascii")


def validate_id_token(ctx, token, client_id, nonce):
    """Authlib verifies the signature against the JWKS and checks iss, aud, nonce and exp."""
    claims = jwt.decode(
        token["id_token"], jwks(ctx),
        claims_options={
            "iss": {"essential": True, "value": ctx.discovery["issuer"]},
            "aud": {"essential": True, "value": client_id},
            "nonce": {"essential": True, "value": nonce},
            "exp": {"essential": True},
            "sub": {"essential": True},
        },
    )
    claims.validate(leeway=5)
    # RS256 by default (OIDC Discovery section 3; what go-oidc and Kubernetes expect); access tokens stay ES256.
    expect(claims.header.get("alg") == "RS256", f"ID token alg is {claims.header.get('alg')}, not RS256")
    expect(jwt_header(token["access_token"]).get("alg") == "ES256", "the access token is not ES256")
    expect(claims.get("at_hash") == at_hash(token["access_token"]), "at_hash does not match the access token")
    return claims


def jwt_header(token):
    head = token.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))


def post_token(ctx, auth, **form):
    """A token request with plain requests; `auth` is (client_id, secret) for client_secret_basic."""
    return requests.post(ctx.endpoint("token_endpoint"), data=form, auth=auth, timeout=TIMEOUT)


def oauth_error(response):
    try:
        return response.json().get("error")
    except ValueError:
        return f"(not JSON, status {response.status_code})"


def expect_invalid_grant(response, what):
    expect(
        response.status_code == 400 and oauth_error(response) == "invalid_grant",
        f"{what}: expected 400 invalid_grant, got {response.status_code} {oauth_error(response)}",
    )


def introspect(ctx, token, auth=WEBAPP):
    response = requests.post(ctx.endpoint("introspection_endpoint"), data={"token": token}, auth=auth, timeout=TIMEOUT)
    expect(response.status_code == 200, f"introspection answered {response.status_code}")
    return response.json()


def refresh(ctx, refresh_token, auth=WEBAPP):
    return post_token(ctx, auth, grant_type="refresh_token", refresh_token=refresh_token)


def exchange(ctx, code, verifier, auth=WEBAPP):
    return post_token(ctx, auth, grant_type="authorization_code", code=code, redirect_uri=CALLBACK_URL, code_verifier=verifier)


def location_params(response):
    return dict(parse_qsl(urlsplit(response.headers.get("Location", "")).query))


# --- Driving the sign-in page ----------------------------------------------------------------------


def parse_form(page):
    """The action and hidden inputs of the sign-in form."""
    action = re.search(r'<form method="post" action="([^"]+)"', page)
    hidden = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page)
    expect(action and hidden, "the page has no sign-in form")
    return html.unescape(action.group(1)), {name: html.unescape(value) for name, value in hidden}


def start_form(ctx, client_id="webapp"):
    """GETs the sign-in page with a requests.Session (which keeps the browser cookie)."""
    auth = authorization(ctx, client(ctx, client_id))
    session = requests.Session()
    page = session.get(auth.url, allow_redirects=False, timeout=TIMEOUT)
    expect(page.status_code == 200, f"the authorize endpoint answered {page.status_code}")
    action, hidden = parse_form(page.text)
    return auth, session, action, hidden


def code_via_form(ctx, username="alice", password=ALICE_PASSWORD):
    """A fresh authorization code for webapp, signing in through the HTML form without a browser."""
    auth, session, action, hidden = start_form(ctx)
    answer = session.post(action, data={**hidden, "username": username, "password": password}, allow_redirects=False, timeout=TIMEOUT)
    expect(answer.status_code == 303, f"the sign-in form answered {answer.status_code}, not 303")
    params = location_params(answer)
    expect(params.get("state") == auth.state and "code" in params, f"the redirect carries {params}")
    return params["code"], auth.verifier


def tokens_via_form(ctx, username="alice", password=ALICE_PASSWORD):
    code, verifier = code_via_form(ctx, username, password)
    response = exchange(ctx, code, verifier)
    expect(response.status_code == 200, f"the code exchange answered {response.status_code} {oauth_error(response)}")
    return response.json()


def wait(browser):
    return WebDriverWait(browser, TIMEOUT)


def replaced(element):
    """A wait condition: `element` left the document (the page it was on was replaced). Selenium's
    `staleness_of` asks the element whether it is enabled and expects StaleElementReferenceException,
    but Chromium may answer a node of a replaced document with "Node with given id does not belong to
    the document" instead: that answer means the same."""
    def gone(_driver):
        try:
            element.is_enabled()
            return False
        except StaleElementReferenceException:
            return True
        except WebDriverException as error:
            if "does not belong to the document" in str(error):
                return True
            raise
    return gone


def open_sign_in_page(browser, url):
    # A fresh sign-in each time: no single sign-on session (or flow cookie) from an earlier check.
    browser.get(BASE_URL + "/healthz")
    browser.delete_all_cookies()
    browser.get(url)
    wait(browser).until(EC.presence_of_element_located((By.ID, "username")))
    expect(browser.find_elements(By.CSS_SELECTOR, 'label[for="username"]'), 'the username field has no <label for="username">')


def submit_credentials(browser, username, password):
    # A document still loading may replace the nodes the driver holds ("Node with given id does not
    # belong to the document", seen in S10 under load): fill the form once it has finished.
    wait(browser).until(lambda b: b.execute_script("return document.readyState") == "complete")
    for field_id, value in (("username", username), ("password", password)):
        box = browser.find_element(By.ID, field_id)
        box.clear()
        box.send_keys(value)
    browser.find_element(By.CSS_SELECTOR, SIGN_IN_BUTTON).click()


def submit_wrong_password(browser, username):
    submit_credentials(browser, username, "not the password at all")
    alert = wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, ALERT)))
    expect(alert.text.strip() == "Wrong username or password.", f"the alert says {alert.text!r}")
    expect(browser.find_elements(By.ID, "password"), "the form is gone after a wrong password")
    kept = browser.find_element(By.ID, "username").get_attribute("value")
    expect(kept == username, f"the typed username did not survive the error: {kept!r}")
    expect(browser.find_element(By.ID, "password").get_attribute("value") == "", "the wrong password was filled in again")


def browser_sign_in(ctx, oauth, username, password, wrong_password_first=False, screenshot=None, **extra):
    """Signs in with Selenium; returns the authorization and the callback's (URL, parameters)."""
    browser = ctx.browser()
    auth = authorization(ctx, oauth, **extra)
    open_sign_in_page(browser, auth.url)
    focused = browser.switch_to.active_element.get_attribute("id")
    expected_focus = "password" if "login_hint" in extra else "username"
    expect(focused == expected_focus, f"the focus is on {focused!r}, not {expected_focus!r}")
    if screenshot:
        expect(browser.save_screenshot(screenshot), "the screenshot was not saved")
    if wrong_password_first:
        submit_wrong_password(browser, username)
    submit_credentials(browser, username, password)
    url, params = ctx.callbacks.wait_for(auth.state)
    expect("code" in params, f"the callback received no code: {params}")
    expect(params.get("iss") == ctx.discovery["issuer"], f"iss is {params.get('iss')!r}")
    return auth, url


# --- The checks ------------------------------------------------------------------------------------

CHECKS = []


def check(description):
    def register(function):
        CHECKS.append((description, function))
        return function

    return register


@check("1. discovery document fetched and checked; every later request uses its endpoints")
def discovery(ctx):
    response = requests.get(f"{BASE_URL}/.well-known/openid-configuration", timeout=TIMEOUT)
    expect(response.status_code == 200, f"discovery answered {response.status_code}")
    document = response.json()
    expect(document.get("issuer") == BASE_URL, f"issuer is {document.get('issuer')!r}")
    for name in ("authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri", "revocation_endpoint", "introspection_endpoint"):
        expect(str(document.get(name, "")).startswith(BASE_URL + "/"), f"{name} is {document.get(name)!r}")
    expect(document.get("code_challenge_methods_supported") == ["S256"], "code_challenge_methods_supported is not [S256]")
    expect(
        set(document.get("token_endpoint_auth_methods_supported", [])) >= {"client_secret_basic", "client_secret_post", "none"},
        "token endpoint auth methods incomplete",
    )
    expect(document.get("authorization_response_iss_parameter_supported") is True, "no iss in authorization responses")
    expect("RS256" in document.get("id_token_signing_alg_values_supported", []), "RS256 is not among the ID token algorithms")
    ctx.discovery = document


@check("2. browser sign-in for webapp (labelled form, wrong password shows alert, then code+state+iss at callback)")
def browser_sign_in_webapp(ctx):
    oauth = client(ctx, "webapp", WEBAPP_SECRET)
    auth, url = browser_sign_in(ctx, oauth, "alice", ALICE_PASSWORD, wrong_password_first=True, screenshot=SCREENSHOT)
    with open(SCREENSHOT, "rb") as picture:
        expect(picture.read(8) == b"\x89PNG\r\n\x1a\n", "the screenshot is not a PNG")
    ctx.results["webapp"] = (oauth, auth, url)


@check("2b. sign-in page headers: strict CSP, no-store, no framing; browser cookie HttpOnly, SameSite=Lax, scoped path")
def sign_in_page_headers(ctx):
    auth = authorization(ctx, client(ctx, "webapp"))
    response = requests.get(auth.url, allow_redirects=False, timeout=TIMEOUT)
    expect(response.status_code == 200, f"the sign-in page answered {response.status_code}")
    headers = response.headers
    expect(headers.get("Content-Security-Policy", "").startswith("default-src 'none'"), f"CSP is {headers.get('Content-Security-Policy')!r}")
    expect(headers.get("Cache-Control") == "no-store", f"Cache-Control is {headers.get('Cache-Control')!r}")
    expect(headers.get("X-Frame-Options") == "DENY", f"X-Frame-Options is {headers.get('X-Frame-Options')!r}")
    # Two cookies: the flow's binding, and the language the sign-in chose (for its pages outside a flow).
    cookies = response.raw.headers.getlist("Set-Cookie")
    cookie = next((c for c in cookies if c.startswith("gatehouse_browser=")), "")
    attributes = {part.strip().split("=")[0].lower(): part.strip() for part in cookie.split(";")}
    expect(cookie, f"Set-Cookie is {cookies!r}")
    language = next((c for c in cookies if c.startswith("gatehouse_lang=")), "")
    expect(language.startswith("gatehouse_lang=en;") and "HttpOnly" in language and "SameSite=Lax" in language,
           f"the language cookie is {language!r}")
    expect("httponly" in attributes, "the browser cookie is not HttpOnly")
    expect(attributes.get("samesite", "").lower() == "samesite=lax", "the browser cookie is not SameSite=Lax")
    expect(attributes.get("path") == "Path=/oauth2/", "the browser cookie's path is not /oauth2/ (authorize and the upstream callback)")


@check("3. Authlib fetch_token (client_secret_basic, PKCE verifier) returns access, refresh and ID token")
def fetch_token(ctx):
    oauth, auth, url = ctx.needs("webapp", 2)
    token = finish(ctx, oauth, auth, url)
    for name in ("access_token", "refresh_token", "id_token"):
        expect(token.get(name), f"no {name} in {sorted(token)}")
    expect(token.get("token_type", "").lower() == "bearer", f"token_type is {token.get('token_type')!r}")
    expect(jwt_header(token["access_token"]).get("typ") == "at+jwt", "the access token is not typ at+jwt")
    ctx.results["token"] = token


@check("4. ID token verifies against the JWKS (iss, aud=webapp, nonce, exp) and at_hash matches")
def id_token(ctx):
    oauth, auth, _ = ctx.needs("webapp", 2)
    token = ctx.needs("token", 3)
    claims = validate_id_token(ctx, token, "webapp", auth.nonce)
    expect(claims.get("amr") == ["pwd", "local"], f"amr is {claims.get('amr')}")
    expect(claims.get("preferred_username") == "alice", f"preferred_username is {claims.get('preferred_username')!r}")
    ctx.results["sub"] = claims["sub"]


@check("5. userinfo (Authlib bearer session) gives the ID token's sub and preferred_username alice")
def userinfo(ctx):
    oauth, _, _ = ctx.needs("webapp", 2)
    sub = ctx.needs("sub", 4)
    response = oauth.get(ctx.endpoint("userinfo_endpoint"))
    expect(response.status_code == 200, f"userinfo answered {response.status_code}")
    info = response.json()
    expect(info.get("sub") == sub, f"userinfo sub {info.get('sub')!r} differs from the ID token's {sub!r}")
    expect(info.get("preferred_username") == "alice", f"preferred_username is {info.get('preferred_username')!r}")


@check("6. Authlib refresh_token rotates the refresh token")
def refresh_rotates(ctx):
    oauth, _, _ = ctx.needs("webapp", 2)
    old = ctx.needs("token", 3)["refresh_token"]
    new = oauth.refresh_token(ctx.endpoint("token_endpoint"), refresh_token=old)
    expect(new.get("access_token") and new.get("refresh_token"), "the refresh answer lacks tokens")
    expect(new["refresh_token"] != old, "the refresh token was not rotated")
    ctx.results["newest_refresh"] = new["refresh_token"]


@check("7. Authlib revoke_token on the newest refresh token, then refreshing with it is invalid_grant")
def revoke_refresh(ctx):
    oauth, _, _ = ctx.needs("webapp", 2)
    newest = ctx.needs("newest_refresh", 6)
    response = oauth.revoke_token(ctx.endpoint("revocation_endpoint"), token=newest, token_type_hint="refresh_token")
    expect(response.status_code == 200, f"revocation answered {response.status_code}")
    try:
        oauth.refresh_token(ctx.endpoint("token_endpoint"), refresh_token=newest)
    except OAuthError as error:
        expect(error.error == "invalid_grant", f"refresh failed with {error.error}, not invalid_grant")
    else:
        raise CheckFailed("a revoked refresh token still works")


@check("8. browser sign-in for the public client spa (login_hint pre-fills, auth method none) end to end")
def public_client(ctx):
    oauth = client(ctx, "spa", scope="openid profile", token_endpoint_auth_method="none")
    browser = ctx.browser()
    auth = authorization(ctx, oauth, login_hint="alice")
    open_sign_in_page(browser, auth.url)
    prefilled = browser.find_element(By.ID, "username").get_attribute("value")
    expect(prefilled == "alice", f"login_hint did not pre-fill the username ({prefilled!r})")
    submit_credentials(browser, "alice", ALICE_PASSWORD)
    url, params = ctx.callbacks.wait_for(auth.state)
    expect("code" in params and params.get("iss") == ctx.discovery["issuer"], f"the callback received {params}")
    token = finish(ctx, oauth, auth, url)
    claims = validate_id_token(ctx, token, "spa", auth.nonce)
    info = oauth.get(ctx.endpoint("userinfo_endpoint")).json()
    expect(info.get("sub") == claims["sub"], "userinfo and ID token disagree on sub")


@check("9. unregistered redirect_uri (prefix-extended, another app's) or unknown client -> 400 HTML page, no redirect")
def wrong_redirect_uri(ctx):
    cases = [("webapp", CALLBACK_URL + "/evil"), ("webapp", OTHER_CALLBACK_URL), ("nosuchapp", CALLBACK_URL)]
    for client_id, redirect_uri in cases:
        what = f"{client_id} with {redirect_uri}"
        response = requests.get(authorization(ctx, client(ctx, client_id, redirect_uri=redirect_uri)).url, allow_redirects=False, timeout=TIMEOUT)
        expect(response.status_code == 400, f"{what}: status {response.status_code}, not 400")
        expect("Location" not in response.headers, f"{what}: redirected to {response.headers.get('Location')}")
        expect(response.headers.get("Content-Type", "").startswith("text/html"), f"{what}: not an HTML page")


@check("10a. missing code_challenge -> 303 to the app with error=invalid_request, state and iss")
def missing_pkce(ctx):
    oauth = client(ctx, "webapp")
    url, state = oauth.create_authorization_url(ctx.endpoint("authorization_endpoint"), state=generate_token(20))
    expect("code_challenge" not in url, "Authlib added a code_challenge anyway")
    response = requests.get(url, allow_redirects=False, timeout=TIMEOUT)
    expect(response.status_code == 303, f"status {response.status_code}, not 303")
    expect(response.headers["Location"].startswith(CALLBACK_URL + "?"), f"redirected to {response.headers['Location']}")
    params = location_params(response)
    expect(params.get("error") == "invalid_request", f"error is {params.get('error')!r}")
    expect(params.get("state") == state, "state was not echoed")
    expect(params.get("iss") == ctx.discovery["issuer"], f"iss is {params.get('iss')!r}")


@check("10b. code_challenge_method=plain -> error=invalid_request")
def plain_pkce(ctx):
    oauth = client(ctx, "webapp")
    verifier = generate_token(48)
    url, state = oauth.create_authorization_url(
        ctx.endpoint("authorization_endpoint"), state=generate_token(20), code_challenge=verifier, code_challenge_method="plain"
    )
    response = requests.get(url, allow_redirects=False, timeout=TIMEOUT)
    params = location_params(response)
    expect(response.status_code == 303 and params.get("error") == "invalid_request", f"{response.status_code} {params}")
    expect(params.get("state") == state, "state was not echoed")


@check("10c. prompt=none without a session -> 303 to the app with error=login_required")
def prompt_none(ctx):
    auth = authorization(ctx, client(ctx, "webapp"), prompt="none")
    response = requests.get(auth.url, allow_redirects=False, timeout=TIMEOUT)
    params = location_params(response)
    expect(response.status_code == 303 and params.get("error") == "login_required", f"{response.status_code} {params}")
    expect(params.get("state") == auth.state, "state was not echoed")


@check("11. reused code -> invalid_grant; the first exchange's access token turns inactive, its refresh token dead")
def reused_code(ctx):
    code, verifier = code_via_form(ctx)
    first = exchange(ctx, code, verifier)
    expect(first.status_code == 200, f"the first exchange answered {first.status_code} {oauth_error(first)}")
    tokens = first.json()
    expect(introspect(ctx, tokens["access_token"]).get("active") is True, "the fresh access token is not active")
    expect_invalid_grant(exchange(ctx, code, verifier), "second exchange")
    expect(introspect(ctx, tokens["access_token"]) == {"active": False}, "the first access token is still active")
    expect_invalid_grant(refresh(ctx, tokens["refresh_token"]), "refresh with the first exchange's refresh token")


@check("12. wrong code_verifier -> invalid_grant")
def wrong_verifier(ctx):
    code, _ = code_via_form(ctx)
    expect_invalid_grant(exchange(ctx, code, generate_token(48)), "exchange with another verifier")


@check("13. refresh reuse: R1 -> R2, R1 again within the grace -> R2 again, R2 -> R3, then R1 -> invalid_grant and R3 -> invalid_grant (family revoked)")
def refresh_reuse(ctx):
    first = tokens_via_form(ctx)["refresh_token"]
    rotated = refresh(ctx, first)
    expect(rotated.status_code == 200, f"the first refresh answered {rotated.status_code} {oauth_error(rotated)}")
    second = rotated.json()["refresh_token"]
    retried = refresh(ctx, first)
    expect(retried.status_code == 200 and retried.json()["refresh_token"] == second,
           f"a retry of R1 within the reuse grace answered {retried.status_code} {oauth_error(retried)}")
    third = refresh(ctx, second)
    expect(third.status_code == 200, f"R2 answered {third.status_code} {oauth_error(third)}")
    expect_invalid_grant(refresh(ctx, first), "reused R1 after its successor rotated")
    expect_invalid_grant(refresh(ctx, third.json()["refresh_token"]), "R3 after R1's reuse")


@check("14. wrong client secret at the token endpoint -> 401 invalid_client")
def wrong_secret(ctx):
    code, verifier = code_via_form(ctx)
    response = exchange(ctx, code, verifier, auth=("webapp", "x" * 43))
    expect(response.status_code == 401, f"status {response.status_code}, not 401")
    expect(oauth_error(response) == "invalid_client", f"error is {oauth_error(response)}")


@check("15. webapp's code and refresh token presented by app other -> invalid_grant")
def cross_app(ctx):
    code, verifier = code_via_form(ctx)
    expect_invalid_grant(exchange(ctx, code, verifier, auth=OTHER), "webapp's code as other")
    refresh_token = tokens_via_form(ctx)["refresh_token"]
    expect_invalid_grant(refresh(ctx, refresh_token, auth=OTHER), "webapp's refresh token as other")


@check("16. tampered access token -> introspection inactive and userinfo 401 invalid_token")
def tampered_token(ctx):
    access_token = tokens_via_form(ctx)["access_token"]
    head, payload, signature = access_token.split(".")
    middle = len(payload) // 2
    flipped = "B" if payload[middle] == "A" else "A"
    tampered = ".".join((head, payload[:middle] + flipped + payload[middle + 1 :], signature))
    expect(introspect(ctx, access_token).get("active") is True, "the untampered token is not active")
    expect(introspect(ctx, tampered) == {"active": False}, "the tampered token introspects active")
    response = requests.get(ctx.endpoint("userinfo_endpoint"), headers={"Authorization": f"Bearer {tampered}"}, timeout=TIMEOUT)
    expect(response.status_code == 401, f"userinfo answered {response.status_code}")
    challenge = response.headers.get("WWW-Authenticate", "")
    expect(challenge.startswith("Bearer") and 'error="invalid_token"' in challenge, f"WWW-Authenticate is {challenge!r}")


@check("17. form POST with valid flow and csrf but without the browser cookie -> error page, no redirect")
def form_without_cookie(ctx):
    _, _, action, hidden = start_form(ctx)
    response = requests.post(
        action, data={**hidden, "username": "alice", "password": ALICE_PASSWORD}, allow_redirects=False, timeout=TIMEOUT
    )
    expect("Location" not in response.headers, f"redirected to {response.headers.get('Location')}")
    expect(response.status_code == 404, f"status {response.status_code}, not 404")
    expect("flow_not_found" in response.text, "the page does not name flow_not_found")


@check("18. Cancel in the browser -> callback receives error=access_denied")
def cancel(ctx):
    browser = ctx.browser()
    auth = authorization(ctx, client(ctx, "webapp"))
    open_sign_in_page(browser, auth.url)
    browser.find_element(By.CSS_SELECTOR, 'button[name="cancel"]').click()
    _, params = ctx.callbacks.wait_for(auth.state)
    expect(params.get("error") == "access_denied", f"the callback received {params}")
    expect("code" not in params, "a cancelled sign-in produced a code")


@check("19. deregistration: bob signs in (browser), DELETE /v1/account -> 204, his tokens stop working")
def deregistration(ctx):
    oauth = client(ctx, "webapp", WEBAPP_SECRET)
    auth, url = browser_sign_in(ctx, oauth, "bob", BOB_PASSWORD)
    token = finish(ctx, oauth, auth, url)
    expect(introspect(ctx, token["access_token"]).get("active") is True, "bob's access token is not active")
    # Account deregistration is Gatehouse's own endpoint; discovery does not name it.
    response = requests.delete(f"{BASE_URL}/v1/account", headers={"Authorization": f"Bearer {token['access_token']}"}, timeout=TIMEOUT)
    expect(response.status_code == 204, f"DELETE /v1/account answered {response.status_code}")
    expect(introspect(ctx, token["access_token"]) == {"active": False}, "bob's access token is still active")
    expect_invalid_grant(refresh(ctx, token["refresh_token"]), "bob's refresh token")


@check("20. client_credentials works for other; webapp (not enabled) -> unauthorized_client; only a granted app may introspect other's token")
def client_credentials(ctx):
    response = post_token(ctx, OTHER, grant_type="client_credentials")
    expect(response.status_code == 200, f"other: {response.status_code} {oauth_error(response)}")
    answer = introspect(ctx, response.json()["access_token"])
    expect(answer.get("active") is True and answer.get("client_id") == "other", f"introspection says {answer}")
    # mailapp is confidential too, but its policy does not name other: it learns nothing.
    hidden = introspect(ctx, response.json()["access_token"], auth=("mailapp", WEBAPP_SECRET))
    expect(hidden == {"active": False}, f"mailapp learned about other's token: {hidden}")
    refused = post_token(ctx, WEBAPP, grant_type="client_credentials")
    expect(oauth_error(refused) == "unauthorized_client", f"webapp: {refused.status_code} {oauth_error(refused)}")


# --- Runner ----------------------------------------------------------------------------------------



@check("LDAP. browser sign-in with a directory password (slapd, StartTLS): ID token carries groups, email and name")
def ldap_browser_sign_in(ctx):
    oauth = client(ctx, "intranet", WEBAPP_SECRET, scope="openid profile email groups")
    auth, url = browser_sign_in(ctx, oauth, "alice", "alice-password-1", wrong_password_first=True)
    token = finish(ctx, oauth, auth, url)
    claims = validate_id_token(ctx, token, "intranet", auth.nonce)
    expect(claims.get("amr") == ["pwd", "corp-ldap"], f"amr is {claims.get('amr')}")
    expect(claims.get("groups") == ["admins", "engineers"], f"groups are {claims.get('groups')}")
    expect(claims.get("email") == "alice@example.org", f"email is {claims.get('email')!r}")
    expect(claims.get("email_verified") is True, "the directory's address is not marked verified")
    expect(claims.get("name") == "Alice Liddell", f"name is {claims.get('name')!r}")

@check("AD. Samba AD over LDAPS in the browser: GATEHOUSE\\alice gets nested groups; peggy, who must change her password, changes it on the sign-in page")
def active_directory_browser(ctx):
    oauth = client(ctx, "adapp", WEBAPP_SECRET, scope="openid profile email groups")
    auth, url = browser_sign_in(ctx, oauth, "GATEHOUSE\\alice", "Alice-Secret-1")
    claims = validate_id_token(ctx, finish(ctx, oauth, auth, url), "adapp", auth.nonce)
    # staff holds engineers, which holds alice: the domain controller follows the chain.
    expect(claims.get("groups") == ["admins", "engineers", "staff"], f"groups are {claims.get('groups')}")
    expect(claims.get("name") == "Alice Liddell", f"name is {claims.get('name')!r}")

    browser = ctx.browser()
    auth = authorization(ctx, oauth)
    open_sign_in_page(browser, auth.url)
    submit_credentials(browser, "peggy", "Peggy-Secret-1")
    current = wait(browser).until(EC.presence_of_element_located((By.ID, "field-currentPassword")))
    expect(browser.find_elements(By.CSS_SELECTOR, 'label[for="field-newPassword"]'), "the new password field has no label")
    expect(current.get_attribute("autocomplete") == "current-password", "the current password field is not autocomplete=current-password")
    current.send_keys("Peggy-Secret-1")
    browser.find_element(By.ID, "field-newPassword").send_keys("Blue-Harbour-42!")
    browser.find_element(By.CSS_SELECTOR, SIGN_IN_BUTTON).click()
    url, params = ctx.callbacks.wait_for(auth.state)
    expect("code" in params, f"after the change the callback received no code: {params}")
    expect(validate_id_token(ctx, finish(ctx, oauth, auth, url), "adapp", auth.nonce).get("preferred_username") == "peggy", "not signed in as peggy")
    # The new password is the password now.
    auth, url = browser_sign_in(ctx, oauth, "peggy", "Blue-Harbour-42!")
    expect(validate_id_token(ctx, finish(ctx, oauth, auth, url), "adapp", auth.nonce).get("preferred_username") == "peggy", "peggy's new password failed")


@check("SAML. SimpleSAMLphp in the browser: the signed AuthnRequest is posted, the encrypted assertion comes back cross-site, alice gets her groups")
def saml_browser(ctx):
    oauth = client(ctx, "samlapp", WEBAPP_SECRET, scope="openid profile email groups")
    browser = ctx.browser()
    auth = authorization(ctx, oauth)
    browser.get(auth.url)
    # The broker's page posts the request on by itself; the IdP shows its own sign-in form.
    username = wait(browser).until(EC.presence_of_element_located((By.NAME, "username")))
    expect(browser.current_url.startswith(os.environ["GATEHOUSE_SAML_IDP"]), f"the browser is at {browser.current_url}")
    username.send_keys("alice")
    browser.find_element(By.NAME, "password").send_keys("alice-pass")
    browser.find_element(By.NAME, "password").submit()
    # The IdP posts to the broker from another site; the broker posts again with its cookie.
    url, params = ctx.callbacks.wait_for(auth.state)
    expect("code" in params, f"the callback received no code: {params}")
    claims = validate_id_token(ctx, finish(ctx, oauth, auth, url), "samlapp", auth.nonce)
    expect(sorted(claims.get("groups") or []) == ["corp:engineers", "corp:staff"], f"groups are {claims.get('groups')}")
    expect(claims.get("email") == "alice@corp.test", f"email is {claims.get('email')!r}")
    expect(claims.get("name") == "Alice Liddell", f"name is {claims.get('name')!r}")


def emailed_code(address, after=0):
    """The code in the newest message the SMTP server delivered to `address` (the message count must
    exceed `after`), parsed with Python's email package."""
    import email
    import email.policy

    folder = os.environ["GATEHOUSE_MAILDIR"]
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".eml") and not n.startswith(".")) if os.path.isdir(folder) else []
        messages = []
        for name in names:
            with open(os.path.join(folder, name), "rb") as raw:
                message = email.message_from_binary_file(raw, policy=email.policy.default)
            if message["X-Envelope-To"] == address:
                messages.append(message)
        if len(messages) > after:
            text = messages[-1].get_body(("plain",)).get_content()
            return re.search(r"\b\d{6}\b", text).group(0), len(messages)
        time.sleep(0.1)
    raise CheckFailed(f"no code reached {address}")


def type_into(browser, field_id, value, button=SIGN_IN_BUTTON):
    box = wait(browser).until(EC.presence_of_element_located((By.ID, field_id)))
    box.clear()
    box.send_keys(value)
    browser.find_element(By.CSS_SELECTOR, button).click()


def enter_code(browser, address, after, wrong_first=False):
    """On the code page: optionally a wrong code first (the page shows an alert), then the emailed one."""
    code, count = emailed_code(address, after)
    wait(browser).until(EC.presence_of_element_located((By.ID, "field-code")))
    expect(browser.find_element(By.ID, "field-code").get_attribute("autocomplete") == "one-time-code", "the code field is not autocomplete=one-time-code")
    expect(browser.find_elements(By.CSS_SELECTOR, 'button[name="resend"]'), "the code page has no 'Send a new code' button")
    if wrong_first:
        type_into(browser, "field-code", "000000" if code != "000000" else "111111")
        alert = wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, ALERT)))
        expect("not right" in alert.text, f"the alert says {alert.text!r}")
    type_into(browser, "field-code", code)
    return count


@check("EMAIL. passwordless browser sign-in: address page, code page (wrong code alert), then the emailed code; ID token has the verified address")
def email_browser_sign_in(ctx):
    oauth = client(ctx, "mailapp", WEBAPP_SECRET, scope="openid profile email")
    browser = ctx.browser()
    auth = authorization(ctx, oauth)
    browser.get(auth.url)
    box = wait(browser).until(EC.presence_of_element_located((By.ID, "field-email")))
    expect(box.get_attribute("type") == "email", "the address field is not type=email")
    type_into(browser, "field-email", "carol@example.com")
    enter_code(browser, "carol@example.com", 0, wrong_first=True)
    url, params = ctx.callbacks.wait_for(auth.state)
    expect("code" in params, f"the callback received no code: {params}")
    claims = validate_id_token(ctx, finish(ctx, oauth, auth, url), "mailapp", auth.nonce)
    expect(claims.get("amr") == ["otp", "email"], f"amr is {claims.get('amr')}")
    expect(claims.get("email") == "carol@example.com" and claims.get("email_verified") is True, f"email claims are {claims}")


@check("EMAIL. second factor in the browser: at erin's first sign-in she enrols an address after her password, proves it, and later gets the code at once")
def email_second_factor(ctx):
    oauth = client(ctx, "vault", WEBAPP_SECRET, scope="openid")
    for round_number in (1, 2):
        browser = ctx.browser()
        browser.delete_all_cookies()
        auth = authorization(ctx, oauth)
        open_sign_in_page(browser, auth.url)
        submit_credentials(browser, "erin", ALICE_PASSWORD)
        if round_number == 1:
            type_into(browser, "field-email", "erin@example.com")
        enter_code(browser, "erin@example.com", round_number - 1)
        url, params = ctx.callbacks.wait_for(auth.state)
        claims = validate_id_token(ctx, finish(ctx, oauth, auth, url), "vault", auth.nonce)
        expect(claims.get("amr") == ["pwd", "local", "otp", "email"], f"amr is {claims.get('amr')}")


def run_check(ctx, description, function):
    started = time.monotonic()
    try:
        function(ctx)
    except CheckFailed as failure:
        print(f"FAIL {description}: {failure}", flush=True)
        return False
    except Exception as error:
        print(f"FAIL {description}: {type(error).__name__}: {error}", flush=True)
        traceback.print_exc(limit=4, file=sys.stdout)
        return False
    print(f"ok   {description} ({time.monotonic() - started:.1f}s)", flush=True)
    return True


def main():
    ctx = Context(callbacks=CallbackServer(CALLBACK_PORT))
    try:
        outcomes = [run_check(ctx, description, function) for description, function in CHECKS]
    finally:
        ctx.close()
    passed = outcomes.count(True)
    print(f"{passed} passed, {len(outcomes) - passed} failed")
    return 0 if all(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
