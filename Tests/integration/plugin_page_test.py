"""The plugin boundary in a real headless Chromium: the test-only `riddle` plugin (Tests/RiddlePlugin)
declares a challenge type the server has never heard of; the generic page shows it as declared (title,
prompt, labels, input kinds, an extra button, a link-out), and a person signs in through it to an
authorization code that the token endpoint exchanges. Run by Tests/integration/run.sh against
`riddle-broker`.
"""
import base64
import hashlib
import os
import secrets
import sys
import urllib.parse

import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait


import page_support
from page_support import check

BASE = os.environ["RIDDLE_BASE_URL"].rstrip("/")
CALLBACK = os.environ["RIDDLE_CALLBACK"]




def main():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    state = secrets.token_urlsafe(16)
    query = urllib.parse.urlencode({
        "client_id": "thebes", "redirect_uri": CALLBACK, "response_type": "code", "scope": "openid", "state": state,
        "code_challenge": challenge, "code_challenge_method": "S256",
    })
    chrome = page_support.browser()
    wait = WebDriverWait(chrome, 20)
    try:
        chrome.get(f"{BASE}/oauth2/authorize?{query}")
        wait.until(EC.presence_of_element_located((By.ID, "field-name")))
        check("P1. the riddle page has the plugin's title", chrome.find_element(By.TAG_NAME, "h1").text == "Answer the riddle", chrome.find_element(By.TAG_NAME, "h1").text)
        check("P2. the prompt is filled from the challenge", "Riddle: What walks on four legs in the morning?" in chrome.page_source)
        check("P3. each input has its declared label", chrome.find_element(By.CSS_SELECTOR, 'label[for="field-name"]').text == "Your name")
        check("P4. the secret answer is a password input", chrome.find_element(By.ID, "field-answer").get_attribute("type") == "password")
        link = chrome.find_element(By.CSS_SELECTOR, "a.link-out")
        check("P5. the link-out is shown", link.get_attribute("href") == "https://riddles.example/rules" and link.text == "Riddle rules", link.get_attribute("href"))
        picture = chrome.find_element(By.CSS_SELECTOR, "img.challenge-image")
        loaded = chrome.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", picture)
        check("P5a. the plugin's picture is shown under the page's CSP", loaded and picture.get_attribute("alt") == "A sphinx", picture.get_attribute("src")[:40])
        rules = [item.text for item in chrome.find_elements(By.CSS_SELECTOR, "ul.facts li")]
        check("P5b. the plugin's facts are shown as they are", rules == ["One answer per round", "Letter case counts only when the app says so"], rules)
        ran = chrome.find_elements(By.ID, "riddle-script")
        check("P5c. the plugin's page script runs (and reads the challenge data)", ran and ran[0].text == "Round 1 of: What walks on four legs in the morning?",
              ran[0].text if ran else "no #riddle-script")
        chrome.find_element(By.CSS_SELECTOR, 'button[name="hint"]').click()
        wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "main"), "Hint: the answer has 3 letters"))
        check("P6. the declared extra button reaches the plugin (a hint)", True)
        check("P7. the hidden field follows the challenge", chrome.find_element(By.NAME, "round").get_attribute("value") == "2")
        for field, value in (("field-name", "oedipus"), ("field-answer", "a horse")):
            chrome.find_element(By.ID, field).send_keys(value)
        chrome.find_element(By.XPATH, '//button[text()="Answer"]').click()
        alert = wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, '[role="alert"]')))
        check("P8. a wrong answer shows the page again with an alert", "not the answer" in alert.text, alert.text)
        chrome.find_element(By.ID, "field-name").clear()
        chrome.find_element(By.ID, "field-name").send_keys("oedipus")
        chrome.find_element(By.ID, "field-answer").send_keys("man")
        chrome.find_element(By.XPATH, '//button[text()="Answer"]').click()
        wait.until(lambda driver: driver.current_url.startswith(CALLBACK))
        params = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(chrome.current_url).query))
        check("P9. the right answer redirects to the app with a code and the state", params.get("state") == state and "code" in params, chrome.current_url)
    finally:
        chrome.quit()
    response = requests.post(f"{BASE}/oauth2/token", data={
        "grant_type": "authorization_code", "code": params.get("code", ""), "redirect_uri": CALLBACK, "client_id": "thebes", "code_verifier": verifier,
    }, timeout=10)
    check("P10. the code exchanges for tokens", response.status_code == 200 and "id_token" in response.json(), response.text)

    # The same plugin through the JSON flow API.
    started = requests.post(f"{BASE}/v1/flows", json={"app": "thebes", "provider": "sphinx"}, timeout=10).json()
    check("P11. the flow API shows the riddle with its declared fields", started.get("challenge", {}).get("fields") == ["name", "answer"], started)
    done = requests.post(f"{BASE}/v1/flows/{started.get('flow')}", json={"answer": {"name": "oedipus", "answer": "man"}}, timeout=10).json()
    check("P12. the flow API completes with tokens", done.get("status") == "completed" and done.get("tokens", {}).get("access_token"), done)
    return 1 if page_support.failures else 0


if __name__ == "__main__":
    sys.exit(main())
