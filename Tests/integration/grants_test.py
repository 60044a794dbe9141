"""The device authorization grant (RFC 8628) and token exchange (RFC 8693) with independent clients
and a real browser.

A "TV" follows the RFC's sequence by hand with `requests` (section 3.1 device authorization request,
section 3.4 polling with `interval`, section 3.5 `slow_down`), and Authlib's OAuth2Session makes the
final token request; headless Chromium plays the person: it opens `verification_uri`, types the user
code (loosely, in lower case), signs in with a password, checks the code on the confirmation page
and allows (or denies) the device. The ID token the TV gets is verified against the JWKS with
Authlib's JOSE. Then the TV's access token goes to its back end (`api`), which exchanges it with
Authlib's client for a token of `billing`, as the person, with the `act` claim of delegation, and
meets each refusal RFC 8693 section 2.2.2 names. Run by Tests/integration/run.sh against a broker of
its own (SQLite).
"""
import base64
import hashlib
import html
import json
import os
import re
import secrets
import sys
import threading
import time
import warnings

import authlib.deprecate
import requests
from authlib.integrations.requests_client import OAuth2Session
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

warnings.filterwarnings("ignore", category=authlib.deprecate.AuthlibDeprecationWarning)
from authlib.jose import JsonWebKey, jwt  # noqa: E402
from urllib.parse import parse_qsl, urlencode, urlsplit  # noqa: E402

import page_support  # noqa: E402
from page_support import check  # noqa: E402

BASE = os.environ["DEVICE_BASE_URL"].rstrip("/")
PASSWORD = os.environ["DEVICE_PASSWORD"]
API_SECRET = os.environ["DEVICE_API_SECRET"]
BANK_KEY = os.environ["DEVICE_BANK_KEY"]
BANK_CALLBACK = "https://bank.example/callback"
GRANT = "urn:ietf:params:oauth:grant-type:device_code"
EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token"


def discovery():
    return requests.get(f"{BASE}/.well-known/openid-configuration", timeout=5).json()


def device_codes(metadata, scope="openid profile offline_access"):
    response = requests.post(metadata["device_authorization_endpoint"], data={"client_id": "tv", "scope": scope}, timeout=5)
    return response.status_code, response.json()


def poll(metadata, device_code):
    response = requests.post(metadata["token_endpoint"], data={"grant_type": GRANT, "device_code": device_code, "client_id": "tv"}, timeout=5)
    return response.status_code, response.json()


class Device(threading.Thread):
    """Polls as RFC 8628 section 3.5 says: every `interval` seconds, 5 more after each slow_down."""

    def __init__(self, metadata, codes):
        super().__init__(daemon=True)
        self.metadata, self.codes = metadata, codes
        self.interval = codes["interval"]
        self.errors = []
        self.outcome = None

    def run(self):
        deadline = time.time() + self.codes["expires_in"]
        while time.time() < deadline:
            time.sleep(self.interval)
            status, body = poll(self.metadata, self.codes["device_code"])
            if status == 200:
                self.outcome = body
                return
            error = body.get("error")
            self.errors.append(error)
            if error == "slow_down":
                self.interval += 5
            elif error != "authorization_pending":
                self.outcome = body
                return


def person_approves(chrome, metadata, codes, allow=True):
    """Types the user code at verification_uri, signs in, and answers the confirmation page."""
    wait = WebDriverWait(chrome, 15)
    chrome.get(codes["verification_uri"])
    typed = codes["user_code"].lower().replace("-", " ")
    wait.until(EC.presence_of_element_located((By.ID, "user_code"))).send_keys(typed)
    chrome.find_element(By.XPATH, '//button[text()="Continue"]').click()
    if chrome.find_elements(By.ID, "password") or wait.until(lambda d: d.find_elements(By.ID, "username") or "Sign in on your device" in d.page_source):
        if chrome.find_elements(By.ID, "username"):
            chrome.find_element(By.ID, "username").send_keys("tara")
            chrome.find_element(By.ID, "password").send_keys(PASSWORD)
            chrome.find_element(By.XPATH, '//button[text()="Sign in"]').click()
    wait.until(lambda d: "Sign in on your device" in d.page_source)
    check("the confirmation page shows the device's code and app", codes["user_code"] in chrome.page_source and "Living-room TV" in chrome.page_source)
    check("the confirmation page has one way out: Deny, and no Cancel beside it", not chrome.find_elements(By.XPATH, '//button[text()="Cancel"]'))
    chrome.find_element(By.XPATH, f'//button[text()="{"Allow" if allow else "Deny"}"]').click()
    wait.until(lambda d: "/device?result=" in d.current_url)
    return chrome.current_url.split("result=")[-1], chrome.find_element(By.TAG_NAME, "body").text


def main():
    metadata = discovery()
    check("discovery names the device authorization endpoint", metadata.get("device_authorization_endpoint") == f"{BASE}/oauth2/device_authorization")
    check("discovery lists the device_code grant", GRANT in metadata.get("grant_types_supported", []))

    status, codes = device_codes(metadata)
    check("the device gets a device code and a user code", status == 200 and {"device_code", "user_code", "verification_uri", "verification_uri_complete", "expires_in", "interval"} <= set(codes), codes)
    check("the user code is eight letters of the unambiguous alphabet", len(codes["user_code"]) == 9 and all(c in "BCDFGHJKLMNPQRSTVWXZ-" for c in codes["user_code"]), codes["user_code"])

    # RFC 8628 section 3.5: polling again at once is too fast.
    first = poll(metadata, codes["device_code"])
    second = poll(metadata, codes["device_code"])
    check("before the person acts the device hears authorization_pending", first[1].get("error") == "authorization_pending", first)
    check("a poll faster than interval hears slow_down", second[0] == 400 and second[1].get("error") == "slow_down", second)
    codes["interval"] += 5

    keys = JsonWebKey.import_key_set(requests.get(metadata["jwks_uri"], timeout=5).json())
    device = Device(metadata, codes)
    device.start()
    chrome = page_support.browser()
    try:
        result, text = person_approves(chrome, metadata, codes)
        check("the verification page says the device is signed in", result == "approved" and "Your device is signed in" in text, text)
        device.join(timeout=60)
        tokens = device.outcome or {}
        check("the polling device gets tokens once approved", "access_token" in tokens and "refresh_token" in tokens, tokens)
        check("the device polled politely (no slow_down while keeping the interval)", "slow_down" not in device.errors, device.errors)
        claims = jwt.decode(tokens.get("id_token", ""), keys)
        claims.validate()
        check("the ID token verifies against the JWKS and names tara's account for the tv", claims["aud"] == "tv" and claims["iss"] == BASE, dict(claims))
        userinfo = requests.get(metadata["userinfo_endpoint"], headers={"Authorization": f"Bearer {tokens.get('access_token')}"}, timeout=5).json()
        check("userinfo answers for tara", userinfo.get("preferred_username") == "tara", userinfo)
        again = poll(metadata, codes["device_code"])
        check("the device code works once", again[1].get("error") == "invalid_grant", again)

        # Authlib's client makes the final token request of a second device, the person already
        # signed in (single sign-on: the confirmation page comes at once).
        _, codes2 = device_codes(metadata, scope="openid")
        chrome.get(codes2["verification_uri_complete"])
        WebDriverWait(chrome, 15).until(lambda d: "Sign in on your device" in d.page_source)
        check("a signed-in browser goes straight to the confirmation", codes2["user_code"] in chrome.page_source and not chrome.find_elements(By.ID, "password"))
        chrome.find_element(By.XPATH, '//button[text()="Allow"]').click()
        WebDriverWait(chrome, 15).until(lambda d: "result=approved" in d.current_url)
        client = OAuth2Session(client_id="tv", token_endpoint_auth_method="none")
        token = client.fetch_token(metadata["token_endpoint"], grant_type=GRANT, device_code=codes2["device_code"])
        check("Authlib's client gets the tokens with the device code", "access_token" in token and token.get("scope") == "openid", token)

        # A person who did not start the sign-in refuses it.
        _, codes3 = device_codes(metadata, scope="openid")
        chrome.get(codes3["verification_uri_complete"])
        WebDriverWait(chrome, 15).until(lambda d: "Sign in on your device" in d.page_source)
        chrome.find_element(By.XPATH, '//button[text()="Deny"]').click()
        WebDriverWait(chrome, 15).until(lambda d: "result=denied" in d.current_url)
        time.sleep(codes3["interval"])
        denied = poll(metadata, codes3["device_code"])
        check("a refused device hears access_denied", denied[0] == 400 and denied[1].get("error") == "access_denied", denied)

        # A wrong code is refused on the page.
        chrome.get(f"{BASE}/device?user_code=BBBB-BBBB")
        check("a wrong user code is refused on the page", "not valid" in chrome.page_source)
    finally:
        chrome.quit()
    exchange_tokens(metadata, (device.outcome or {}).get("access_token", ""), keys)
    pushed_requests(metadata)
    return 1 if page_support.failures else 0


def sign_in_with_reference(metadata, reference):
    """The browser's part, by hand: /oauth2/authorize with client_id and request_uri only, then the password page."""
    browser = requests.Session()
    page = browser.get(metadata["authorization_endpoint"], params={"client_id": "bank", "request_uri": reference}, timeout=5)
    if page.status_code != 200 or "password" not in page.text:
        return page.status_code, None
    action = html.unescape(re.search(r'<form method="post" action="([^"]+)"', page.text).group(1))
    hidden = {name: html.unescape(value) for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.text)}
    answer = browser.post(action, data={**hidden, "username": "tara", "password": PASSWORD}, allow_redirects=False, timeout=5)
    return answer.status_code, dict(parse_qsl(urlsplit(answer.headers.get("Location", "")).query))


def pushed_requests(metadata):
    """RFC 9126 and RFC 9101: parameters pushed, a signed request object pushed, and what is refused."""
    check("discovery names the pushed authorization request endpoint", metadata.get("pushed_authorization_request_endpoint") == f"{BASE}/oauth2/par")
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    params = {"response_type": "code", "redirect_uri": BANK_CALLBACK, "scope": "openid", "state": "st-1", "code_challenge": challenge, "code_challenge_method": "S256"}
    pushed = requests.post(metadata["pushed_authorization_request_endpoint"], auth=("bank", API_SECRET), data=params, timeout=5)
    check("pushed parameters answer 201 with a request_uri", pushed.status_code == 201 and pushed.json().get("request_uri", "").startswith("urn:ietf:params:oauth:request_uri:"), pushed.text)
    status, query = sign_in_with_reference(metadata, pushed.json().get("request_uri"))
    check("the browser carrying only the reference signs in and comes back with a code", status == 303 and query and query.get("state") == "st-1" and "code" in query, (status, query))
    tokens = requests.post(metadata["token_endpoint"], auth=("bank", API_SECRET), data={
        "grant_type": "authorization_code", "code": (query or {}).get("code"), "redirect_uri": BANK_CALLBACK, "code_verifier": verifier}, timeout=5)
    check("... which the bank exchanges", tokens.status_code == 200 and "id_token" in tokens.json(), tokens.text)
    again, _ = sign_in_with_reference(metadata, pushed.json().get("request_uri"))
    check("a request_uri works once", again == 400, again)
    plain = requests.get(metadata["authorization_endpoint"], params={"client_id": "bank", **params}, allow_redirects=False, timeout=5)
    check("the bank requires pushed requests: a plain one goes back with invalid_request",
          plain.status_code == 303 and dict(parse_qsl(urlsplit(plain.headers["Location"]).query)).get("error") == "invalid_request", plain.status_code)

    key = JsonWebKey.import_key(json.loads(BANK_KEY))
    now = int(time.time())
    claims = {**params, "state": "st-2", "iss": "bank", "client_id": "bank", "aud": BASE, "iat": now, "exp": now + 120}
    request_object = jwt.encode({"alg": "ES256"}, claims, key).decode()
    pushed = requests.post(metadata["pushed_authorization_request_endpoint"], auth=("bank", API_SECRET), data={"request": request_object}, timeout=5)
    check("a request object signed with Authlib's JOSE is taken", pushed.status_code == 201, pushed.text)
    status, query = sign_in_with_reference(metadata, pushed.json().get("request_uri"))
    check("... and its parameters are the request", status == 303 and query and query.get("state") == "st-2", (status, query))
    other = JsonWebKey.generate_key("EC", "P-256", is_private=True)
    forged = jwt.encode({"alg": "ES256", "kid": key.as_dict()["kid"]}, claims, other).decode()
    refused = requests.post(metadata["pushed_authorization_request_endpoint"], auth=("bank", API_SECRET), data={"request": forged}, timeout=5)
    check("a request object signed with another key is invalid_request_object", refused.status_code == 400 and refused.json().get("error") == "invalid_request_object", refused.text)
    unsigned = base64.urlsafe_b64encode(b'{"alg":"none"}').rstrip(b"=").decode() + "." + base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode() + "."
    refused = requests.post(metadata["pushed_authorization_request_endpoint"], auth=("bank", API_SECRET), data={"request": unsigned}, timeout=5)
    check("an unsigned request object is invalid_request_object", refused.status_code == 400 and refused.json().get("error") == "invalid_request_object", refused.text)


def exchange_tokens(metadata, person_token, keys):
    """RFC 8693 with Authlib's client: the TV's back end calls billing as the person."""
    api = OAuth2Session(client_id="api", client_secret=API_SECRET, token_endpoint_auth_method="client_secret_basic")
    check("discovery lists the token-exchange grant", EXCHANGE in metadata.get("grant_types_supported", []))
    own = api.fetch_token(metadata["token_endpoint"], grant_type="client_credentials", scope="jobs")
    exchanged = api.fetch_token(
        metadata["token_endpoint"], grant_type=EXCHANGE, subject_token=person_token, subject_token_type=ACCESS_TOKEN,
        actor_token=own["access_token"], actor_token_type=ACCESS_TOKEN, audience="billing", scope="openid",
    )
    check("the back end gets an access token for billing", exchanged.get("issued_token_type") == ACCESS_TOKEN and "refresh_token" not in exchanged, exchanged)
    claims = jwt.decode(exchanged.get("access_token", ""), keys)
    claims.validate()
    person = jwt.decode(person_token, keys)
    check("it is the person's token for billing, narrowed, acted on by api",
          claims["sub"] == person["sub"] and claims["aud"] == "billing" and claims["scope"] == "openid"
          and claims.get("act") == {"sub": "api", "client_id": "api"} and claims["exp"] <= person["exp"], dict(claims))

    def refused(**form):
        response = requests.post(metadata["token_endpoint"], auth=("api", API_SECRET),
                                 data={"grant_type": EXCHANGE, "subject_token": person_token, "subject_token_type": ACCESS_TOKEN, **form}, timeout=5)
        return response.status_code, response.json().get("error")

    check("a target the policy does not name is invalid_target", refused(audience="tv") == (400, "invalid_target"))
    check("a wider scope is invalid_scope", refused(audience="billing", scope="openid email") == (400, "invalid_scope"))
    check("a forged subject token is invalid_request (RFC 8693 section 2.2.2)", refused(audience="billing", subject_token=person_token[:-4] + "AAAA") == (400, "invalid_request"))
    check("an unknown token type is invalid_request", refused(audience="billing", subject_token_type="urn:ietf:params:oauth:token-type:saml2") == (400, "invalid_request"))
    public = requests.post(metadata["token_endpoint"], data={"grant_type": EXCHANGE, "client_id": "tv", "subject_token": person_token,
                                                             "subject_token_type": ACCESS_TOKEN, "audience": "billing"}, timeout=5)
    check("a public client may not exchange", (public.status_code, public.json().get("error")) == (400, "unauthorized_client"), public.text)


if __name__ == "__main__":
    sys.exit(main())
