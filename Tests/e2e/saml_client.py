#!/usr/bin/env python3
"""SAML sign-in over HTTP against a real IdP (SimpleSAMLphp, Tests/saml/simplesamlphp.sh).

    saml_client.py BASE IDP APP_CALLBACK [SCIM_TOKEN]

BASE is the broker; IDP the SimpleSAMLphp base URL. The broker's config has the apps `web` (provider
`ssp`: HTTP-Redirect, allowedGroups staff/engineers) and `webenc` (provider `sspenc`: HTTP-POST,
signed requests, encrypted assertions required), both confidential with the secrets below and the
redirect URI APP_CALLBACK. A browser is played with `requests`: its cookie jar is sent only where a
browser would send a SameSite=Lax cookie, so the IdP's cross-site form post arrives without it, as in
a browser. Prints one line per check and exits non-zero when one fails.
"""

import base64
import hashlib
import json
import secrets
import sys
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlencode, urljoin, urlparse

import requests

BASE, IDP, CALLBACK = sys.argv[1], sys.argv[2].rstrip("/"), sys.argv[3]
SCIM_TOKEN = sys.argv[4] if len(sys.argv) > 4 else None
SECRETS = {"web": "web-secret-web-secret-web-secret-0001", "webenc": "web-secret-web-secret-web-secret-0002", "webprov": "web-secret-web-secret-web-secret-0003"}
TIMEOUT = 15
failures = 0


def check(description, condition, detail=""):
    global failures
    if condition:
        print(f"  ok   {description}")
    else:
        failures += 1
        print(f"  FAIL {description} {detail}")
    return condition


class Forms(HTMLParser):
    """The forms of a page: action, method and fields (inputs with a name)."""

    def __init__(self):
        super().__init__()
        self.forms = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.forms.append({"action": attrs.get("action", ""), "method": (attrs.get("method") or "get").lower(), "fields": {}})
        elif tag in ("input", "button") and self.forms and attrs.get("name"):
            self.forms[-1]["fields"][attrs["name"]] = attrs.get("value") or ""


def forms(html):
    parser = Forms()
    parser.feed(html)
    return parser.forms


def authorize(session, app):
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    query = {
        "response_type": "code", "client_id": app, "redirect_uri": CALLBACK, "scope": "openid profile email",
        "state": secrets.token_urlsafe(8), "nonce": "n-" + secrets.token_urlsafe(8), "code_challenge": challenge, "code_challenge_method": "S256",
    }
    return session.get(f"{BASE}/oauth2/authorize?{urlencode(query)}", allow_redirects=False, timeout=TIMEOUT), verifier


def to_idp(session, response):
    """From the broker's answer (a redirect, or the page that posts the request) to the IdP's login form."""
    if response.status_code == 303:
        location = response.headers["Location"]
        check("HTTP-Redirect binding: the broker sends the browser to the IdP with SAMLRequest and RelayState",
              location.startswith(IDP) and "SAMLRequest=" in location and "RelayState=" in location, location[:120])
        page = session.get(location, timeout=TIMEOUT)
    else:
        posted = forms(response.text)
        fields = posted[0]["fields"] if posted else {}
        check("HTTP-POST binding: the broker's page posts SAMLRequest and RelayState to the IdP (its one script submits it)",
              response.status_code == 200 and posted and posted[0]["action"].startswith(IDP) and "SAMLRequest" in fields and "RelayState" in fields
              and "script-src" in response.headers.get("Content-Security-Policy", ""), response.text[:200])
        request = base64.b64decode(fields.get("SAMLRequest", ""))
        check("the posted AuthnRequest is signed (an enveloped XML signature)", b"SignatureValue" in request)
        page = session.post(posted[0]["action"], data={k: v for k, v in fields.items() if k in ("SAMLRequest", "RelayState")}, timeout=TIMEOUT)
    return page


def login(session, page, username, password):
    """Signs in at SimpleSAMLphp's form; answers the IdP's self-posting form (action, fields)."""
    form = next((f for f in forms(page.text) if "password" in f["fields"]), None)
    if not check(f"the IdP shows its sign-in form for {username}", form is not None, page.text[:300]):
        return None, {}
    fields = dict(form["fields"], username=username, password=password)
    answer = session.post(urljoin(page.url, form["action"]), data=fields, timeout=TIMEOUT)
    posted = next((f for f in forms(answer.text) if "SAMLResponse" in f["fields"]), None)
    if not check("the IdP answers with a form posting SAMLResponse and RelayState to the broker", posted is not None, answer.text[:300]):
        return None, {}
    return posted["action"], posted["fields"]


def deliver(session, action, fields):
    """The IdP's page posts cross-site: no SameSite=Lax cookie. The broker's page posts again, with it."""
    bare = requests.post(action, data={k: fields[k] for k in ("SAMLResponse", "RelayState")}, allow_redirects=False, timeout=TIMEOUT)
    again = forms(bare.text)
    check("the cross-site post without the cookie changes nothing: the broker's page posts the fields again",
          bare.status_code == 200 and again and again[0]["action"] == action and "SAMLResponse" in again[0]["fields"], f"{bare.status_code} {bare.text[:200]}")
    if not again:
        return None
    stranger = requests.post(action, data=again[0]["fields"], allow_redirects=False, timeout=TIMEOUT)
    check("another browser posting the same fields (no cookie) is refused", stranger.status_code == 404, str(stranger.status_code))
    return session.post(action, data=again[0]["fields"], allow_redirects=False, timeout=TIMEOUT)


def tokens(app, code, verifier):
    response = requests.post(
        f"{BASE}/oauth2/token", data={"grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK, "code_verifier": verifier},
        auth=(app, SECRETS[app]), timeout=TIMEOUT)
    return response.json()


def claims(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def sign_in(app, username, password):
    session = requests.Session()
    started, verifier = authorize(session, app)
    page = to_idp(session, started)
    action, fields = login(session, page, username, password)
    if action is None:
        return None, None, None
    check("the IdP posts to this provider's ACS URL (its callback)", action.startswith(f"{BASE}/oauth2/callback/"), action)
    final = deliver(session, action, fields)
    return final, verifier, (session, action, fields)


final, verifier, replay = sign_in("web", "alice", "alice-pass")
if final is not None:
    location = final.headers.get("Location", "")
    code = parse_qs(urlparse(location).query).get("code", [""])[0]
    check("Alice is signed in: the browser goes back to the app with a code", final.status_code == 303 and location.startswith(CALLBACK) and code, location)
    issued = tokens("web", code, verifier)
    token = issued.get("id_token", "")
    check("the code gives an ID token", bool(token), json.dumps(issued)[:200])
    if token:
        seen = claims(token)
        check("the ID token carries her mail and name from the IdP's attributes", seen.get("email") == "alice@corp.test" and seen.get("name") == "Alice Liddell", json.dumps(seen))
    session, action, fields = replay
    again = session.post(action, data=fields, allow_redirects=False, timeout=TIMEOUT)
    check("the same SAMLResponse posted again is refused (the flow's one callback is used)", again.status_code == 404, str(again.status_code))

final, _, _ = sign_in("web", "bob", "bob-pass")
if final is not None:
    location = final.headers.get("Location", "")
    check("Bob is in no allowed group: the app hears access_denied", "error=access_denied" in location, location)

final, verifier, _ = sign_in("webenc", "alice", "alice-pass")
if final is not None:
    location = final.headers.get("Location", "")
    code = parse_qs(urlparse(location).query).get("code", [""])[0]
    check("HTTP-POST, signed request, encrypted assertion (AES-256-GCM, RSA-OAEP): Alice is signed in", final.status_code == 303 and bool(code), location)
    check("and the code gives tokens", "access_token" in tokens("webenc", code, verifier))

if SCIM_TOKEN:
    # webprov admits provisioned people only; the IdP provisions Alice by SCIM (userName = her NameID).
    def scim(method, path, body=None):
        return requests.request(method, f"{BASE}/scim/v2/{path}", json=body, timeout=TIMEOUT,
                                headers={"Authorization": f"Bearer {SCIM_TOKEN}", "Content-Type": "application/scim+json"})

    def code_from(final):
        location = final.headers.get("Location", "") if final is not None else ""
        return final is not None and final.status_code == 303 and "code=" in location and location.startswith(CALLBACK)

    created = scim("POST", "Users", {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "alice", "active": True})
    check("the IdP provisions alice by SCIM", created.status_code == 201, created.text[:200])
    final, _, _ = sign_in("webprov", "alice", "alice-pass")
    check("provisioned, Alice signs in at the app for provisioned people: her NameID meets her SCIM userName", code_from(final),
          final.headers.get("Location", "") if final is not None else "")
    user_id = created.json().get("id", "")
    patched = scim("PATCH", f"Users/{user_id}", {"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
                                                  "Operations": [{"op": "replace", "path": "active", "value": False}]})
    check("the IdP deprovisions her (active: false)", patched.status_code == 200, patched.text[:200])
    final, _, _ = sign_in("webprov", "alice", "alice-pass")
    check("deprovisioned, her next SAML sign-in is refused", not code_from(final),
          f"{final.status_code if final is not None else None} {final.headers.get('Location', '') if final is not None else ''}")

metadata = requests.get(f"{BASE}/saml/sspenc/metadata", timeout=TIMEOUT)
check("the SP metadata is served as application/samlmetadata+xml with the SP certificate",
      metadata.status_code == 200 and metadata.headers.get("Content-Type", "").startswith("application/samlmetadata+xml")
      and "X509Certificate" in metadata.text and f"{BASE}/oauth2/callback/sspenc" in metadata.text)

print(f"saml: {'all passed' if failures == 0 else f'{failures} failure(s)'}")
sys.exit(1 if failures else 0)
