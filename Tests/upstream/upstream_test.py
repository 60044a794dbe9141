#!/usr/bin/env python3
"""Upstream sign-in through the broker's `oidc` plugin, against real providers (Tests/upstream/run.sh
starts them): another Gatehouse, oidc-provider-mock, and a hostile upstream. Each check prints
`ok` or `FAIL`; the exit status is the number of failures."""
import base64, hashlib, html, json, os, re, secrets, subprocess, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlencode, urlsplit

import requests

DOWN, UP, MOCK, HOSTILE = (os.environ[name] for name in ("DOWN_BASE", "UP_BASE", "MOCK_BASE", "HOSTILE_BASE"))
APP_PORT = int(os.environ["APP_PORT"])
APP_CALLBACK = f"http://127.0.0.1:{APP_PORT}/callback"
NATIVE_RETURN = "com.example.native:/oauth2redirect"
URSULA_PASSWORD = os.environ["URSULA_PASSWORD"]
ADMIN = {"Authorization": "Bearer " + os.environ["GATEHOUSE_ADMIN_TOKEN"]}
WEB_AUTH = ("web", os.environ["WEB_SECRET"])
TIMEOUT = 15
failures = 0
state = {}


class Failure(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise Failure(message)


def check(description):
    def run(function):
        global failures
        try:
            function()
            print(f"ok   {description}")
        except Exception as error:  # noqa: BLE001 - every failure is reported, then the next check runs
            failures += 1
            print(f"FAIL {description}: {type(error).__name__}: {error}")
        return function
    return run


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def claims_of(jwt):
    body = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))


def pkce():
    verifier = secrets.token_urlsafe(48)
    return verifier, b64(hashlib.sha256(verifier.encode()).digest())


def query_of(url):
    return dict(parse_qsl(urlsplit(url).query))


# --- The native app's side: the flow API ------------------------------------------------------------


def start_flow(provider, app="native", return_uri=NATIVE_RETURN, challenge=None, scope=None, expect_status=201):
    body = {"app": app, "provider": provider}
    if return_uri:
        body["returnURI"] = return_uri
    if challenge:
        body.update(codeChallenge=challenge, codeChallengeMethod="S256")
    if scope:
        body["scope"] = scope
    response = requests.post(f"{DOWN}/v1/flows", json=body, timeout=TIMEOUT)
    expect(response.status_code == expect_status, f"POST /v1/flows answered {response.status_code}: {response.text}")
    return response.json()


def answer(flow_id, values, expect_status=200):
    response = requests.post(f"{DOWN}/v1/flows/{flow_id}", json={"answer": values}, timeout=TIMEOUT)
    expect(response.status_code == expect_status, f"POST /v1/flows/{{flow}} answered {response.status_code}: {response.text}")
    return response.json()


def deliver(callback_url, session=None, expect_status=303):
    """The system browser arrives at the broker's callback; answers where it is sent next."""
    response = (session or requests).get(callback_url, allow_redirects=False, timeout=TIMEOUT)
    expect(response.status_code == expect_status, f"the callback answered {response.status_code}: {response.text[:300]}")
    return response.headers.get("Location", "")


def expect_return(location, flow_id, return_uri=NATIVE_RETURN):
    expect(location.startswith(return_uri + "?"), f"the browser went to {location!r}, not the return URI")
    params = query_of(location)
    expect(params.get("flow") == flow_id, f"the return URI carries {params}")
    return params


# --- Signing in at each upstream, as a browser would -------------------------------------------------


def parse_form(page):
    action = re.search(r'<form method="post" action="([^"]+)"', page)
    hidden = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page)
    expect(action, "the page has no form")
    return html.unescape(action.group(1)), {name: html.unescape(value) for name, value in hidden}


def upstream_gatehouse_login(url, username="ursula", password=URSULA_PASSWORD):
    """Signs in at the upstream Gatehouse's own page; answers the URL it sends the browser back to."""
    session = requests.Session()
    page = session.get(url, allow_redirects=False, timeout=TIMEOUT)
    expect(page.status_code == 200, f"the upstream's authorize endpoint answered {page.status_code}: {page.text[:200]}")
    action, hidden = parse_form(page.text)
    response = session.post(action, data={**hidden, "username": username, "password": password}, allow_redirects=False, timeout=TIMEOUT)
    expect(response.status_code == 303, f"the upstream's sign-in answered {response.status_code}")
    return response.headers["Location"]


def mock_login(url, sub, deny=False):
    """oidc-provider-mock's non-interactive sign-in: POST the authorize URL with `sub` (or deny)."""
    form = {"action": "deny"} if deny else {"sub": sub}
    response = requests.post(url, data=form, allow_redirects=False, timeout=TIMEOUT)
    expect(response.status_code == 302, f"the mock answered {response.status_code}: {response.text[:200]}")
    return response.headers["Location"]


def mock_user(sub, **claims):
    response = requests.put(f"{MOCK}/users/{sub}", json=claims, timeout=TIMEOUT)
    expect(response.status_code == 204, f"PUT /users answered {response.status_code}")


def hostile(scenario, **extra):
    response = requests.post(f"{HOSTILE}/control", json={"scenario": scenario, **extra}, timeout=TIMEOUT)
    expect(response.status_code == 200, "the hostile upstream's control failed")


def hostile_login(url):
    """The hostile upstream answers with a form_post page: the browser posts it to the callback."""
    page = requests.get(url, allow_redirects=False, timeout=TIMEOUT)
    expect(page.status_code == 200, f"the hostile authorize endpoint answered {page.status_code}")
    return parse_form(page.text)


def post_callback(action, fields, session=None, expect_status=303):
    response = (session or requests).post(action, data=fields, allow_redirects=False, timeout=TIMEOUT)
    expect(response.status_code == expect_status, f"the form_post callback answered {response.status_code}: {response.text[:300]}")
    return response.headers.get("Location", "")


def native_sign_in(provider, login, scope="openid profile email offline_access", app="native", return_uri=NATIVE_RETURN):
    verifier, challenge = pkce()
    flow = start_flow(provider, app=app, return_uri=return_uri, challenge=challenge, scope=scope)
    expect(flow["challenge"]["type"] == "redirect", f"the first challenge is {flow['challenge']}")
    location = deliver(login(flow["challenge"]["url"]))
    params = expect_return(location, flow["flow"], return_uri or NATIVE_RETURN)
    return answer(flow["flow"], {"code": params.get("code", ""), "codeVerifier": verifier})


def userinfo(access_token):
    response = requests.get(f"{DOWN}/oauth2/userinfo", headers={"Authorization": f"Bearer {access_token}"}, timeout=TIMEOUT)
    expect(response.status_code == 200, f"userinfo answered {response.status_code}")
    return response.json()


def refresh(refresh_token, client_id="native"):
    return requests.post(f"{DOWN}/oauth2/token", data={"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id}, timeout=TIMEOUT)


def last_failure():
    events = requests.get(f"{DOWN}/admin/v1/audit", params={"type": "signin.failure", "limit": 1}, headers=ADMIN, timeout=TIMEOUT).json()
    expect(events, "no signin.failure event")
    return events[0]


# --- Checks ------------------------------------------------------------------------------------------


@check("a public native app must send a PKCE challenge and a registered return URI")
def _():
    refused = start_flow("gh-rs", expect_status=400)
    expect(refused["error"] == "invalid_request" and "codeChallenge" in refused["error_description"], f"{refused}")
    _, challenge = pkce()
    refused = start_flow("gh-rs", return_uri="com.example.evil:/steal", challenge=challenge, expect_status=400)
    expect(refused["error"] == "invalid_request", f"{refused}")


@check("native app: upstream Gatehouse (RS256, PKCE, nonce) -> callback -> custom-scheme return URI -> tokens")
def _():
    verifier, challenge = pkce()
    flow = start_flow("gh-rs", challenge=challenge, scope="openid profile offline_access")
    url = flow["challenge"]["url"]
    params = query_of(url)
    expect(url.startswith(f"{UP}/oauth2/authorize?"), f"the URL is {url}")
    expect(params["state"] == flow["flow"] and params["code_challenge_method"] == "S256" and len(params["nonce"]) >= 32, f"{params}")
    expect(params["redirect_uri"] == f"{DOWN}/oauth2/callback/gh-rs", f"redirect_uri {params['redirect_uri']}")
    refused = answer(flow["flow"], {"code": "made-up"}, expect_status=400)
    expect(refused["error"] == "invalid_request", f"answering the redirect challenge directly: {refused}")
    callback = upstream_gatehouse_login(url)
    expect(callback.startswith(f"{DOWN}/oauth2/callback/gh-rs?") and "code=" in callback, f"the upstream sent the browser to {callback}")
    returned = expect_return(deliver(callback), flow["flow"])
    expect(len(returned.get("code", "")) >= 43, f"the return URI carries no one-time code: {returned}")
    replay = requests.get(callback, allow_redirects=False, timeout=TIMEOUT)
    expect(replay.status_code == 404, f"a replayed callback answered {replay.status_code}")
    done = answer(flow["flow"], {"code": returned["code"], "codeVerifier": verifier})
    expect(done["status"] == "completed" and done["account"]["username"] == "ursula", f"{done}")
    tokens = done["tokens"]
    expect(claims_of(tokens["access_token"])["amr"][-1] == "gh-rs", f"amr {claims_of(tokens['access_token'])['amr']}")
    expect(userinfo(tokens["access_token"])["preferred_username"] == "ursula", "userinfo has no preferred_username ursula")
    renewed = refresh(tokens["refresh_token"])
    expect(renewed.status_code == 200, f"the refresh (recheck with the upstream refresh token) answered {renewed.status_code}: {renewed.text}")
    state["ursula_refresh"] = renewed.json()["refresh_token"]



@check("an app that intercepts the return URI cannot finish the flow without the verifier")
def _():
    _, challenge = pkce()
    flow = start_flow("gh-rs", challenge=challenge)
    returned = expect_return(deliver(upstream_gatehouse_login(flow["challenge"]["url"])), flow["flow"])
    stolen = answer(flow["flow"], {"code": returned["code"], "codeVerifier": pkce()[0]}, expect_status=400)
    expect(stolen["error"] == "invalid_grant", f"{stolen}")
    gone = answer(flow["flow"], {}, expect_status=404)
    expect(gone["error"] == "flow_not_found", f"{gone}")
    expect(last_failure()["details"].get("reason") == "code_verifier_mismatch", "the audit event has no reason code_verifier_mismatch")


@check("whoever started a flow and sent its sign-in link to someone else cannot finish it (no return code)")
def _():
    verifier, challenge = pkce()
    flow = start_flow("gh-rs", challenge=challenge)
    # The victim signs in with the attacker's link; the browser goes back to the victim's own app.
    expect_return(deliver(upstream_gatehouse_login(flow["challenge"]["url"])), flow["flow"])
    phished = answer(flow["flow"], {"codeVerifier": verifier}, expect_status=400)
    expect(phished["error"] == "invalid_grant", f"{phished}")
    expect(last_failure()["details"].get("reason") == "return_code_mismatch", "the audit event has no reason return_code_mismatch")
    expect(answer(flow["flow"], {}, expect_status=404)["error"] == "flow_not_found", "the flow survived")


def upstream_id_token_kid():
    """Signs in at the upstream as its app down-rs ourselves, to see which key its ID tokens carry now."""
    verifier, challenge = pkce()
    query = {"response_type": "code", "client_id": "down-rs", "redirect_uri": f"{DOWN}/oauth2/callback/gh-rs", "scope": "openid",
             "code_challenge": challenge, "code_challenge_method": "S256", "state": "probe"}
    callback = upstream_gatehouse_login(f"{UP}/oauth2/authorize?{urlencode(query)}")
    token = requests.post(f"{UP}/oauth2/token", auth=("down-rs", os.environ["UP_SECRET"]), timeout=TIMEOUT, data={
        "grant_type": "authorization_code", "code": query_of(callback)["code"], "redirect_uri": f"{DOWN}/oauth2/callback/gh-rs", "code_verifier": verifier})
    expect(token.status_code == 200, f"the probe's code exchange answered {token.text}")
    head = token.json()["id_token"].split(".")[0]
    return json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))["kid"]


@check("a key rotation at the upstream: an ID token with a new kid makes the broker fetch the key set again")
def _():
    old_kid = upstream_id_token_kid()
    result = subprocess.run([os.environ["GATEHOUSE"], "keys", "rotate", "--immediately", "--config", "gatehouse.yaml"], cwd=os.environ["UP_DIR"],
                            capture_output=True, text=True, timeout=60)
    expect(result.returncode == 0, f"keys rotate failed: {result.stdout}{result.stderr}")
    # The running upstream picks the new keys up within its reload interval (5 s).
    deadline = time.time() + 30
    while upstream_id_token_kid() == old_kid:
        expect(time.time() < deadline, "the upstream never signed with its new key")
        time.sleep(0.5)
    done = native_sign_in("gh-rs", upstream_gatehouse_login, scope="openid profile")
    expect(done["status"] == "completed", f"{done}")
    renewed = refresh(state["ursula_refresh"])
    expect(renewed.status_code == 200, f"a refresh after the rotation answered {renewed.status_code}: {renewed.text}")


@check("upstream Gatehouse with ES256 ID tokens and client_secret_post, through the flow API")
def _():
    done = native_sign_in("gh-es", upstream_gatehouse_login, scope="openid profile")
    expect(done["status"] == "completed" and done["account"]["username"] == "ursula", f"{done}")


@check("oidc-provider-mock: claims through userinfo, groups filtered and prefixed")
def _():
    mock_user("alice", email="alice@corp.test", email_verified=True, name="Alice Mock", groups=["eng-core", "sales"])
    done = native_sign_in("mock", lambda url: mock_login(url, "alice"), scope="openid profile email groups")
    info = userinfo(done["tokens"]["access_token"])
    expect(info.get("email") == "alice@corp.test" and info.get("email_verified") is True, f"userinfo {info}")
    expect(info.get("name") == "Alice Mock" and info.get("groups") == ["mock:eng-core"], f"userinfo {info}")


@check("oidc-provider-mock: a denial comes back to the native app as access_denied")
def _():
    _, challenge = pkce()
    flow = start_flow("mock", challenge=challenge)
    params = expect_return(deliver(mock_login(flow["challenge"]["url"], None, deny=True)), flow["flow"])
    expect(params.get("error") == "access_denied", f"{params}")
    expect(answer(flow["flow"], {}, expect_status=404)["error"] == "flow_not_found", "the denied flow is still there")


@check("oidc-provider-mock: tokens revoked upstream stop the broker's refreshes")
def _():
    mock_user("rita", email="rita@corp.test", email_verified=True)
    done = native_sign_in("mock", lambda url: mock_login(url, "rita"))
    first = refresh(done["tokens"]["refresh_token"])
    expect(first.status_code == 200, f"the first refresh answered {first.status_code}: {first.text}")
    requests.post(f"{MOCK}/users/rita/revoke-tokens", timeout=TIMEOUT).raise_for_status()
    second = refresh(first.json()["refresh_token"])
    expect(second.status_code == 400 and second.json()["error"] == "invalid_grant", f"after the revocation: {second.status_code} {second.text}")
    again = refresh(first.json()["refresh_token"])
    expect(again.status_code == 400 and again.json()["error"] == "invalid_grant", f"the same token again: {again.status_code} {again.text}")
    # Signing in again at the upstream brings the person back.
    fresh = native_sign_in("mock", lambda url: mock_login(url, "rita"))
    expect(refresh(fresh["tokens"]["refresh_token"]).status_code == 200, "a new sign-in did not bring the person back")


@check("allowedDomains: an address in another domain is refused")
def _():
    mock_user("bob", email="bob@elsewhere.test", email_verified=True)
    _, challenge = pkce()
    flow = start_flow("mock-corp", challenge=challenge)
    params = expect_return(deliver(mock_login(flow["challenge"]["url"], "bob")), flow["flow"])
    expect(params.get("error") == "access_denied", f"{params}")
    expect(last_failure()["details"].get("reason") == "domain_not_allowed", "the audit reason is not domain_not_allowed")


@check("account linking: a trusted verified address joins the existing account, only where the policy allows")
def _():
    mock_user("carol", email="carol@corp.test", email_verified=True)
    first = native_sign_in("mock", lambda url: mock_login(url, "carol"), scope="openid email")
    account = first["account"]["id"]
    # The invitation-only app creates no accounts, but links a trusted provider's verified address
    # to an account whose address a trusted provider of the same app vouched for.
    linked = native_sign_in("mock-b", lambda url: mock_login(url, "carol"), scope="openid email", app="closed", return_uri="com.example.closed:/done")
    expect(linked["status"] == "completed" and linked["account"]["id"] == account, f"linked to {linked.get('account')} instead of {account}")
    events = requests.get(f"{DOWN}/admin/v1/audit", params={"type": "account.linked"}, headers=ADMIN, timeout=TIMEOUT).json()
    expect(any(event.get("accountID") == account for event in events), "no account.linked event")


def closed_sign_in_refused(provider, sub):
    verifier, challenge = pkce()
    flow = start_flow(provider, app="closed", return_uri=None, challenge=challenge, scope="openid email")
    returned = expect_return(deliver(mock_login(flow["challenge"]["url"], sub)), flow["flow"], "com.example.closed:/done")
    refused = answer(flow["flow"], {"code": returned["code"], "codeVerifier": verifier}, expect_status=403)
    expect(refused["error"] == "registration_disabled", f"{refused}")


@check("account linking: an unverified address, or one only an untrusted provider vouched for, never links")
def _():
    mock_user("dora", email="dora@corp.test", email_verified=False)
    native_sign_in("mock", lambda url: mock_login(url, "dora"), scope="openid email")
    closed_sign_in_refused("mock-b", "dora")
    # An attacker's account through a provider not trusted with addresses cannot be joined by the victim.
    mock_user("erin", email="erin@corp.test", email_verified=True)
    native_sign_in("mock-untrusted", lambda url: mock_login(url, "erin"), scope="openid email")
    closed_sign_in_refused("mock-b", "erin")


HOSTILE_REFUSALS = [
    ("alg_none", "invalid_id_token", "algorithm_not_allowed"),
    ("hs256_rsa_public_key", "invalid_id_token", "algorithm_not_allowed"),
    ("wrong_iss", "invalid_id_token", "wrong_issuer"),
    ("wrong_aud", "invalid_id_token", "wrong_audience"),
    ("extra_aud", "invalid_id_token", "untrusted_audience"),
    ("expired", "invalid_id_token", "expired"),
    ("missing_nonce", "invalid_id_token", "wrong_nonce"),
    ("wrong_nonce", "invalid_id_token", "wrong_nonce"),
    ("wrong_at_hash", "invalid_id_token", "wrong_at_hash"),
    ("unknown_kid", "invalid_id_token", "unknown_key"),
    ("userinfo_sub_mismatch", "invalid_id_token", "userinfo_subject_mismatch"),
    ("mixup", "invalid_id_token", "wrong_response_issuer"),
    ("deny", "access_denied", "upstream_access_denied"),
    ("server_error", "upstream_unavailable", "upstream_error"),
]


def hostile_flow():
    verifier, challenge = pkce()
    flow = start_flow("evil", challenge=challenge)
    action, fields = hostile_login(flow["challenge"]["url"])
    expect(action == f"{DOWN}/oauth2/callback/evil", f"the form posts to {action}")
    return flow, verifier, post_callback(action, fields)


@check("hostile upstream, honest for once: private_key_jwt, form_post and userinfo sign Eve in (RS256 and ES256)")
def _():
    hostile("good", assertionKey=open(os.environ["ASSERTION_PUBLIC_KEY"]).read(), clientID="gatehouse")
    for scenario in ("good", "es256"):
        hostile(scenario)
        flow, verifier, location = hostile_flow()
        returned = expect_return(location, flow["flow"])
        done = answer(flow["flow"], {"code": returned["code"], "codeVerifier": verifier})
        expect(done["status"] == "completed" and done["account"]["username"] == "eve@evil.test", f"{scenario}: {done}")


for scenario, code, reason in HOSTILE_REFUSALS:
    @check(f"hostile upstream: {scenario} is refused ({code}, {reason}) and signs nobody in")
    def _(scenario=scenario, code=code, reason=reason):
        hostile(scenario)
        flow, verifier, location = hostile_flow()
        params = expect_return(location, flow["flow"])
        expect(params.get("error") == code, f"the app heard {params}")
        expect("<script>" not in params.get("error_description", "") and "raw upstream" not in params.get("error_description", ""),
               "the upstream's own text reached the app")
        failure = last_failure()
        expect(failure["details"].get("reason") == reason and failure["outcome"] == code, f"audited {failure}")
        gone = answer(flow["flow"], {"codeVerifier": verifier}, expect_status=404)
        expect(gone["error"] == "flow_not_found", f"the refused flow answered {gone}")


@check("a discovery document naming another issuer: the flow does not start (upstream_unavailable)")
def _():
    _, challenge = pkce()
    refused = start_flow("liar", challenge=challenge, expect_status=503)
    expect(refused["error"] == "upstream_unavailable", f"{refused}")


@check("a key set that times out: the callback ends in upstream_unavailable within the timeout")
def _():
    verifier, challenge = pkce()
    hostile("good")
    flow = start_flow("slow", challenge=challenge)
    page = requests.get(flow["challenge"]["url"], allow_redirects=False, timeout=TIMEOUT)
    expect(page.status_code == 302, f"the slow upstream answered {page.status_code}")
    began = time.time()
    params = expect_return(deliver(page.headers["Location"]), flow["flow"])
    expect(time.time() - began < 4, f"the callback took {time.time() - began:.1f}s")
    expect(params.get("error") == "upstream_unavailable", f"{params}")
    expect(last_failure()["details"].get("reason") == "jwks_unreachable", f"audited {last_failure()}")


# --- Browser flows -------------------------------------------------------------------------------------


def browser_start(session, provider):
    """A browser flow of the web app up to the upstream's URL, with a requests.Session as the browser."""
    verifier, challenge = pkce()
    query = {"response_type": "code", "client_id": "web", "redirect_uri": APP_CALLBACK, "scope": "openid profile", "state": secrets.token_urlsafe(8),
             "code_challenge": challenge, "code_challenge_method": "S256", "nonce": secrets.token_urlsafe(8)}
    page = session.get(f"{DOWN}/oauth2/authorize?{urlencode(query)}", allow_redirects=False, timeout=TIMEOUT)
    expect(page.status_code == 200, f"authorize answered {page.status_code}")
    action, hidden = parse_form(page.text)
    chosen = session.post(action, data={**hidden, "provider": provider}, allow_redirects=False, timeout=TIMEOUT)
    expect(chosen.status_code == 303, f"choosing {provider} answered {chosen.status_code}: {chosen.text[:200]}")
    return query, verifier, chosen.headers["Location"]


@check("browser flow: a callback replayed in another browser is refused; the right browser finishes")
def _():
    mine = requests.Session()
    query, verifier, url = browser_start(mine, "gh-rs")
    callback = upstream_gatehouse_login(url)
    stranger = requests.get(callback, allow_redirects=False, timeout=TIMEOUT)
    expect(stranger.status_code == 404, f"another browser's callback answered {stranger.status_code}")
    location = mine.get(callback, allow_redirects=False, timeout=TIMEOUT).headers.get("Location", "")
    params = query_of(location)
    expect(location.startswith(APP_CALLBACK) and params.get("state") == query["state"] and "code" in params, f"the browser went to {location}")
    token = requests.post(f"{DOWN}/oauth2/token", auth=WEB_AUTH, timeout=TIMEOUT, data={
        "grant_type": "authorization_code", "code": params["code"], "redirect_uri": APP_CALLBACK, "code_verifier": verifier})
    expect(token.status_code == 200 and claims_of(token.json()["id_token"])["nonce"] == query["nonce"], f"the code exchange answered {token.text}")
    again = mine.get(callback, allow_redirects=False, timeout=TIMEOUT)
    expect(again.status_code == 404, f"the same browser replaying the callback answered {again.status_code}")


@check("browser flow with form_post: a post without the cookie changes nothing; the broker's page posts it again, with the cookie")
def _():
    hostile("good")
    mine = requests.Session()
    query, _, url = browser_start(mine, "evil")
    action, fields = hostile_login(url)
    page = requests.post(action, data=fields, allow_redirects=False, timeout=TIMEOUT)  # cross-site: no SameSite=Lax cookie
    expect(page.status_code == 200, f"the cookie-less post answered {page.status_code}: {page.text[:200]}")
    again, repost = parse_form(page.text)
    expect(again == f"{DOWN}/oauth2/callback/evil" and repost.get("state") and repost.get("code") == fields.get("code"),
           f"the broker's page posts to {again} with {sorted(repost)}")
    expect("code=" not in page.headers.get("Location", ""), "the answer went into a URL")
    stranger = requests.post(again, data=repost, allow_redirects=False, timeout=TIMEOUT)
    expect(stranger.status_code == 404, f"another browser posting it answered {stranger.status_code}")
    location = mine.post(again, data=repost, allow_redirects=False, timeout=TIMEOUT).headers.get("Location", "")
    expect(location.startswith(APP_CALLBACK) and "code" in query_of(location), f"the browser went to {location}")


@check("browser flow: an upstream denial goes back to the app as access_denied with its state")
def _():
    mock_user("zed", email="zed@corp.test")
    session = requests.Session()
    query, _, url = browser_start(session, "mock")
    location = session.get(mock_login(url, None, deny=True), allow_redirects=False, timeout=TIMEOUT).headers.get("Location", "")
    params = query_of(location)
    expect(location.startswith(APP_CALLBACK) and params.get("error") == "access_denied" and params.get("state") == query["state"], f"{location}")


class AppCallback:
    """The web app's redirect URI: records what the browser brings."""

    def __init__(self):
        self.seen = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                outer.seen.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.end_headers()
                self.wfile.write(b"<!doctype html><title>app</title><p id=done>signed in</p>")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", APP_PORT), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@check("headless Chromium: app -> broker chooser -> upstream Gatehouse sign-in -> back -> app gets its code")
def _():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    app = AppCallback()
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"]:
        options.add_argument(argument)
    browser = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
    try:
        verifier, challenge = pkce()
        query = {"response_type": "code", "client_id": "web", "redirect_uri": APP_CALLBACK, "scope": "openid profile", "state": "chromium-state",
                 "code_challenge": challenge, "code_challenge_method": "S256"}
        browser.get(f"{DOWN}/oauth2/authorize?{urlencode(query)}")
        wait = WebDriverWait(browser, TIMEOUT)
        button = wait.until(EC.element_to_be_clickable((By.XPATH, "//button[normalize-space()='Continue with Upstream Gatehouse (ES256)']")))
        button.click()
        wait.until(EC.presence_of_element_located((By.ID, "username")))
        expect(browser.current_url.startswith(UP), f"the chooser led to {browser.current_url}")
        browser.find_element(By.ID, "username").send_keys("ursula")
        browser.find_element(By.ID, "password").send_keys(URSULA_PASSWORD)
        browser.find_element(By.CSS_SELECTOR, 'form button[type="submit"]:not([name="cancel"])').click()
        wait.until(EC.presence_of_element_located((By.ID, "done")))
        params = query_of(next(path for path in app.seen if path.startswith("/callback?")))
        expect(params.get("state") == "chromium-state" and "code" in params, f"the app got {app.seen}")
        token = requests.post(f"{DOWN}/oauth2/token", auth=WEB_AUTH, timeout=TIMEOUT, data={
            "grant_type": "authorization_code", "code": params["code"], "redirect_uri": APP_CALLBACK, "code_verifier": verifier})
        expect(token.status_code == 200, f"the code exchange answered {token.status_code}: {token.text}")
        expect(claims_of(token.json()["id_token"])["amr"][-1] == "gh-es", "the ID token does not name gh-es")
    finally:
        browser.quit()
        app.server.shutdown()


# providers test (run.sh) then sees client assertions refused.
hostile("good", clientID="someone-else")
print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
