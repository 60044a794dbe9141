"""Authenticator apps in a real headless Chromium: a person signs in with a password at an app whose
second factor is the `totp` plugin, scans the QR code the page shows (a screenshot of it read by
zxing-cpp, as a phone's camera would), sets the app up with pyotp's code, saves the recovery codes,
and later signs in with the app's next code, and with a recovery code. Run by
Tests/integration/run.sh against a broker of its own (SQLite).
"""
import base64
import hashlib
import io
import os
import secrets
import sys
import time
import urllib.parse

import pyotp
import requests
import zxingcpp
from PIL import Image
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait


import page_support
from page_support import check

BASE = os.environ["TOTP_BASE_URL"].rstrip("/")
CALLBACK = os.environ["TOTP_CALLBACK"]
PASSWORD = os.environ["TOTP_PASSWORD"]




def authorize(chrome):
    """Opens the app's sign-in page; answers the PKCE verifier and the state."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    state = secrets.token_urlsafe(16)
    query = urllib.parse.urlencode({
        "client_id": "authapp", "redirect_uri": CALLBACK, "response_type": "code", "scope": "openid", "state": state,
        "code_challenge": challenge, "code_challenge_method": "S256", "prompt": "login",
    })
    chrome.get(f"{BASE}/oauth2/authorize?{query}")
    return verifier, state


def password_step(chrome, wait):
    wait.until(EC.presence_of_element_located((By.ID, "username"))).send_keys("tess")
    chrome.find_element(By.ID, "password").send_keys(PASSWORD)
    chrome.find_element(By.XPATH, '//button[text()="Sign in"]').click()


def submit(chrome, label):
    chrome.find_element(By.XPATH, f'//button[text()="{label}"]').click()


def exchanged(chrome, wait, verifier, state):
    wait.until(lambda driver: driver.current_url.startswith(CALLBACK))
    params = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(chrome.current_url).query))
    if params.get("state") != state:
        return {}
    response = requests.post(f"{BASE}/oauth2/token", data={
        "grant_type": "authorization_code", "code": params.get("code", ""), "redirect_uri": CALLBACK, "client_id": "authapp", "code_verifier": verifier,
    }, timeout=10)
    return response.json() if response.status_code == 200 else {}


def amr(tokens):
    payload = tokens.get("id_token", "..").split(".")[1]
    import json
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))).get("amr", [])


def main():
    chrome = page_support.browser(window="1000,1400")
    wait = WebDriverWait(chrome, 20)
    try:
        verifier, state = authorize(chrome)
        password_step(chrome, wait)
        picture = wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "img.challenge-image")))
        check("T1. after the password, the setup page shows its title",
              chrome.find_element(By.TAG_NAME, "h1").text == "Set up your authenticator app", chrome.find_element(By.TAG_NAME, "h1").text)
        loaded = chrome.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", picture)
        decoded = zxingcpp.read_barcodes(Image.open(io.BytesIO(picture.screenshot_as_png)).convert("L"))
        uri = decoded[0].text if decoded else ""
        check("T2. the QR code on the page, photographed, reads as an otpauth URI", loaded and uri.startswith("otpauth://totp/"), uri[:60])
        totp = pyotp.parse_uri(uri)
        typed_key = chrome.find_element(By.CSS_SELECTOR, "code.fact").text.replace(" ", "")
        check("T3. the key to type in is the QR code's secret", typed_key == totp.secret and totp.issuer == "Gatehouse Integration" and totp.name == "tess",
              f"{typed_key} {totp.issuer} {totp.name}")
        chrome.find_element(By.ID, "field-code").send_keys("000000" if totp.now() != "000000" else "111111")
        submit(chrome, "Confirm")
        alert = wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, '[role="alert"]')))
        check("T4. a wrong first code shows the setup page again with an alert", "not right" in alert.text
              and chrome.find_elements(By.CSS_SELECTOR, "img.challenge-image"), alert.text)
        chrome.find_element(By.ID, "field-code").send_keys(totp.now())
        submit(chrome, "Confirm")
        wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Save your recovery codes"))
        recovery = [item.text for item in chrome.find_elements(By.CSS_SELECTOR, "ul.facts li")]
        check("T5. the app's first code sets it up and the page lists ten recovery codes", len(recovery) == 10 and all(len(c) == 11 for c in recovery), recovery)
        submit(chrome, "I have saved them")
        tokens = exchanged(chrome, wait, verifier, state)
        check("T6. the sign-in completes at the app, with otp among the methods", "access_token" in tokens and "otp" in amr(tokens), tokens)

        # Later: the password, then the app's code (the next step's, within the one-step window).
        chrome.delete_all_cookies()
        verifier, state = authorize(chrome)
        password_step(chrome, wait)
        code_input = wait.until(EC.presence_of_element_located((By.ID, "field-code")))
        check("T7. a later sign-in asks for the app's code", chrome.find_element(By.TAG_NAME, "h1").text == "Enter the code from your authenticator app"
              and code_input.get_attribute("autocomplete") == "one-time-code" and code_input.get_attribute("inputmode") == "numeric")
        code_input.send_keys(totp.at(time.time() + totp.interval))
        submit(chrome, "Continue")
        check("T8. the app's code signs in", "access_token" in exchanged(chrome, wait, verifier, state))

        # A lost phone: a recovery code instead, once.
        chrome.delete_all_cookies()
        verifier, state = authorize(chrome)
        password_step(chrome, wait)
        wait.until(EC.presence_of_element_located((By.ID, "field-code")))
        submit(chrome, "Use a recovery code")
        wait.until(EC.presence_of_element_located((By.ID, "field-recoveryCode"))).send_keys(recovery[0])
        submit(chrome, "Continue")
        check("T9. a recovery code signs in instead", "access_token" in exchanged(chrome, wait, verifier, state))
        chrome.delete_all_cookies()
        authorize(chrome)
        password_step(chrome, wait)
        wait.until(EC.presence_of_element_located((By.ID, "field-code")))
        submit(chrome, "Use a recovery code")
        wait.until(EC.presence_of_element_located((By.ID, "field-recoveryCode"))).send_keys(recovery[0])
        submit(chrome, "Continue")
        alert = wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, '[role="alert"]')))
        check("T10. the same recovery code is refused the second time", "not right" in alert.text or "used" in alert.text, alert.text)

        # A new phone: on the account page (signed in with a recovery code), "Set up an authenticator
        # app" asks the current app first (here another recovery code), then sets the new one up.
        chrome.delete_all_cookies()
        chrome.get(f"{BASE}/account")
        password_step(chrome, wait)
        wait.until(EC.presence_of_element_located((By.ID, "field-code")))
        submit(chrome, "Use a recovery code")
        wait.until(EC.presence_of_element_located((By.ID, "field-recoveryCode"))).send_keys(recovery[1])
        submit(chrome, "Continue")
        button = wait.until(EC.element_to_be_clickable((By.ID, "add-app-code")))
        check("T11. the account page offers a new authenticator app", button.text == "Set up an authenticator app", button.text)
        problems = page_support.accessibility_problems(chrome)
        check("T12. the account page with its setup button passes axe", not problems, problems)
        button.click()
        wait.until(EC.presence_of_element_located((By.ID, "field-code")))
        check("T13. the setup asks for the current app's code first", chrome.find_element(By.TAG_NAME, "h1").text == "Enter the code from your authenticator app")
        submit(chrome, "Use a recovery code")
        wait.until(EC.presence_of_element_located((By.ID, "field-recoveryCode"))).send_keys(recovery[2])
        submit(chrome, "Continue")
        picture = wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "img.challenge-image")))
        decoded = zxingcpp.read_barcodes(Image.open(io.BytesIO(picture.screenshot_as_png)).convert("L"))
        new_app = pyotp.parse_uri(decoded[0].text) if decoded else None
        check("T14. then the new app's QR code, with another key", new_app is not None and new_app.secret != totp.secret)
        chrome.find_element(By.ID, "field-code").send_keys(new_app.now())
        submit(chrome, "Confirm")
        wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Save your recovery codes"))
        new_recovery = [item.text for item in chrome.find_elements(By.CSS_SELECTOR, "ul.facts li")]
        submit(chrome, "I have saved them")
        wait.until(lambda driver: driver.current_url.startswith(f"{BASE}/account") and "It is set up" in driver.page_source)
        check("T15. the setup ends back on the account page, which says so", len(new_recovery) == 10, chrome.current_url)

        # The old app is gone; the new one signs in.
        chrome.delete_all_cookies()
        verifier, state = authorize(chrome)
        password_step(chrome, wait)
        wait.until(EC.presence_of_element_located((By.ID, "field-code"))).send_keys(totp.at(time.time() + totp.interval))
        submit(chrome, "Continue")
        alert = wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, '[role="alert"]')))
        check("T16. the old app's code is refused", "not right" in alert.text, alert.text)
        retry = chrome.find_element(By.ID, "field-code")
        retry.clear()
        retry.send_keys(new_app.at(time.time() + new_app.interval))
        submit(chrome, "Continue")
        check("T17. the new app's code signs in", "access_token" in exchanged(chrome, wait, verifier, state))
    finally:
        chrome.quit()
    return 1 if page_support.failures else 0


if __name__ == "__main__":
    sys.exit(main())
