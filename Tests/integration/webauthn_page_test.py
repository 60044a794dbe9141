"""Passkeys in a real headless Chromium with its virtual authenticator (the DevTools WebAuthn domain
through Selenium: CTAP2, internal transport, resident keys, user verification): a person creates a
passkey and an account on the sign-in pages, signs in again without typing a username, and another
person sets a security key up as a second factor after a password and then signs in with it. The
ceremony runs in the plugin's static script under the pages' Content-Security-Policy. Run by
Tests/integration/run.sh against a broker of its own (SQLite, issuer http://localhost).
"""
import base64
import hashlib
import json
import os
import secrets
import sys
import urllib.parse

import requests
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.virtual_authenticator import Protocol, Transport, VirtualAuthenticatorOptions
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait


import page_support
from page_support import check

BASE = os.environ["WEBAUTHN_BASE_URL"].rstrip("/")
CALLBACK = os.environ["WEBAUTHN_CALLBACK"]
PASSWORD = os.environ["WEBAUTHN_PASSWORD"]
ADMIN_TOKEN = os.environ["WEBAUTHN_ADMIN_TOKEN"]




def authorize(chrome, app):
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    state = secrets.token_urlsafe(16)
    query = urllib.parse.urlencode({
        "client_id": app, "redirect_uri": CALLBACK, "response_type": "code", "scope": "openid", "state": state,
        "code_challenge": challenge, "code_challenge_method": "S256", "prompt": "login",
    })
    chrome.get(f"{BASE}/oauth2/authorize?{query}")
    return verifier, state


def tokens(chrome, wait, app, verifier, state):
    wait.until(lambda driver: driver.current_url.startswith(CALLBACK))
    params = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(chrome.current_url).query))
    if params.get("state") != state:
        return {}
    response = requests.post(f"{BASE}/oauth2/token", data={
        "grant_type": "authorization_code", "code": params.get("code", ""), "redirect_uri": CALLBACK, "client_id": app, "code_verifier": verifier,
    }, timeout=10)
    return response.json() if response.status_code == 200 else {}


def claims(id_token):
    payload = id_token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def main():
    chrome = page_support.browser(window="1000,1000", browser_log=True)
    # A page that is replaced while a wait reads it (the sign-in answer navigating) leaves the
    # wait holding a node of the old document: Chromium answers "does not belong to the document".
    # The wait reads again instead of failing; it still fails after 20 s.
    wait = WebDriverWait(chrome, 20, ignored_exceptions=(NoSuchElementException, StaleElementReferenceException, WebDriverException))
    try:
        device = VirtualAuthenticatorOptions(
            protocol=Protocol.CTAP2, transport=Transport.INTERNAL, has_resident_key=True, has_user_verification=True,
            is_user_consenting=True, is_user_verified=True)
        chrome.add_virtual_authenticator(device)
        # A new person: "Create an account" on the passkey sign-in page, a name, then the passkey.
        verifier, state = authorize(chrome, "passkeyapp")
        wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Sign in with a passkey"))
        csp = chrome.execute_script("return performance.getEntriesByType('navigation').length")
        scripts = [s.get_attribute("src") for s in chrome.find_elements(By.TAG_NAME, "script")]
        check("W1. the passkey page runs the plugin's script file, no inline script", scripts == [f"{BASE}/assets/challenges/webauthn_get.js"], scripts)
        conditional = chrome.find_elements(By.ID, "webauthn-username")
        check("W2. the page offers passkeys in a username field's autofill (conditional mediation)",
              conditional and conditional[0].get_attribute("autocomplete") == "username webauthn", [e.get_attribute("outerHTML") for e in conditional])
        chrome.find_element(By.XPATH, '//button[text()="Create an account"]').click()
        wait.until(EC.presence_of_element_located((By.ID, "field-username"))).send_keys("ada")
        chrome.find_element(By.XPATH, '//button[text()="Continue"]').click()
        # The name page is titled "Create a passkey" too: wait for the next page's own field.
        credential = wait.until(EC.presence_of_element_located((By.ID, "field-credential")))
        check("W3. the credential field is not shown: the script fills it", not credential.is_displayed())
        chrome.find_element(By.XPATH, '//button[text()="Create a passkey"]').click()
        first = tokens(chrome, wait, "passkeyapp", verifier, state)
        check("W4. creating the passkey signs the new account in (code exchanged for tokens)", "id_token" in first, chrome.current_url)
        stored = chrome.get_credentials()
        check("W5. the virtual authenticator holds one resident credential for localhost",
              len(stored) == 1 and stored[0].is_resident_credential and stored[0].rp_id == "localhost", [c.to_dict() for c in stored])

        # The same person later: no username, the passkey alone. Chromium's virtual authenticator
        # consents at once, so the page's conditional request (autofill) already signs in.
        chrome.delete_all_cookies()
        verifier, state = authorize(chrome, "passkeyapp")
        second = tokens(chrome, wait, "passkeyapp", verifier, state)
        check("W5a. the conditional request signed in without a click", "id_token" in second, chrome.current_url)
        same = "id_token" in second and "id_token" in first and claims(second["id_token"])["sub"] == claims(first["id_token"])["sub"]
        check("W6. a sign-in without a username: the passkey alone signs the same account in", same, second)
        check("W7. the tokens say how: amr has hwk", "hwk" in claims(second.get("id_token", "e30.e30.")).get("amr", []) if same else False)

        # A security key as the second factor after a password.
        chrome.delete_all_cookies()
        verifier, state = authorize(chrome, "keyapp")
        wait.until(EC.presence_of_element_located((By.ID, "username"))).send_keys("bob")
        chrome.find_element(By.ID, "password").send_keys(PASSWORD)
        chrome.find_element(By.XPATH, '//button[text()="Sign in"]').click()
        wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Create a passkey"))
        chrome.find_element(By.XPATH, '//button[text()="Create a passkey"]').click()
        check("W8. after the password, the first sign-in sets the key up as the second factor", "access_token" in tokens(chrome, wait, "keyapp", verifier, state))
        chrome.delete_all_cookies()
        verifier, state = authorize(chrome, "keyapp")
        wait.until(EC.presence_of_element_located((By.ID, "username"))).send_keys("bob")
        chrome.find_element(By.ID, "password").send_keys(PASSWORD)
        chrome.find_element(By.XPATH, '//button[text()="Sign in"]').click()
        wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Sign in with a passkey"))
        check("W9. the next sign-in asks for the key, with no username field", not chrome.find_elements(By.ID, "webauthn-username"))
        chrome.find_element(By.XPATH, '//button[text()="Sign in with a passkey"]').click()
        check("W10. the key passes as the second factor", "access_token" in tokens(chrome, wait, "keyapp", verifier, state))
        listed = requests.get(f"{BASE}/admin/v1/providers/passkeys/credentials", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=10).json()
        items = listed.get("items", listed) if isinstance(listed, dict) else listed
        check("W11. administrators see both credentials, each with its account", len(items) == 2 and all(i.get("account") for i in items), listed)

        # Bob adds a passkey on his account page: the single sign-on session of his sign-in at the
        # key app (password, then his key) signs him in there, having passed the page's factor.
        chrome.get(f"{BASE}/account")
        button = wait.until(EC.element_to_be_clickable((By.ID, "add-passkeys")))
        rows = len(chrome.find_elements(By.CSS_SELECTOR, "table.credentials tbody tr"))
        check("W12. the account page lists bob's key and offers to add a passkey", button.text == "Add a passkey" and rows == 1, rows)
        page_support.shot(chrome, "account-passkeys", focus="add-passkeys")
        # On a new phone: the one that holds his key would refuse to make a second credential for
        # him (the ceremony excludes the credentials he has).
        chrome.remove_virtual_authenticator()
        chrome.add_virtual_authenticator(device)
        button.click()
        wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Create a passkey"))
        chrome.find_element(By.XPATH, '//button[text()="Create a passkey"]').click()
        wait.until(lambda driver: driver.current_url.startswith(f"{BASE}/account") and "It is set up" in driver.page_source)
        rows = len(chrome.find_elements(By.CSS_SELECTOR, "table.credentials tbody tr"))
        check("W13. the passkey's own ceremony ends back on the account page, which lists it", rows == 2, rows)
        resident = [c for c in chrome.get_credentials() if c.is_resident_credential]
        check("W14. the new phone holds bob's new passkey", len(resident) == 1 and resident[0].rp_id == "localhost", [c.to_dict() for c in resident])
        events = requests.get(f"{BASE}/admin/v1/audit?type=account.credential_enrolled", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=10).json()
        check("W15. audited as account.credential_enrolled from the account page",
              len(events) == 1 and events[0]["appID"] == "gatehouse-account" and events[0]["providerID"] == "passkeys", events)
    finally:
        logs = [entry["message"] for entry in chrome.get_log("browser")] if page_support.failures else []
        for line in logs[-10:]:
            print("     browser:", line)
        chrome.quit()
    return 1 if page_support.failures else 0


if __name__ == "__main__":
    sys.exit(main())
