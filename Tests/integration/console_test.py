"""The admin console in a real headless Chromium, against the real broker, OpenLDAP and the
custom-api stand-in: the first admin bootstraps with the static admin token, gives a second `local`
account the admin role, an LDAP user is admitted through the directory group `admins`, a non-admin
is refused, forms without (or with a wrong) CSRF token are refused, the policy form switches
stateless authentication on and off for `bankapp` and the flow API follows at once, the audit log
page names the admin, and deleting an app asks for a fresh sign-in first. Screenshots of each page
land in GATEHOUSE_SCREENSHOTS.

Run by Tests/integration/run.sh after session_test.py (it reuses oidc_test.py's helpers), with
GATEHOUSE_ADMIN_TOKEN, BANK_APP_SECRET and GATEHOUSE_SCREENSHOTS in the environment.
"""

import os
import sys

import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select
from selenium.webdriver.support import expected_conditions as EC

import oidc_test as base
import page_support
from oidc_test import BASE_URL, CALLBACK_PORT, TIMEOUT, CallbackServer, Context, expect, replaced, wait

ADMIN_TOKEN = os.environ["GATEHOUSE_ADMIN_TOKEN"]
BANK = ("bankapp", os.environ["BANK_APP_SECRET"])
SHOTS = os.environ.get("GATEHOUSE_SCREENSHOTS", "screens")
# Local accounts made by run.sh for this test, and two LDAP entries (Tests/ldap/seed.ldif):
# alice is in cn=admins, bob is not.
CAROL = ("carol", "violet harbor lantern")
DAVE = ("dave", "copper meadow whistle")
LDAP_ALICE = ("alice", "alice-password-1")
LDAP_BOB = ("bob", "bob-password-1")

CHECKS = []


def check(description):
    def register(function):
        CHECKS.append((description, function))
        return function

    return register


def shot(browser, name):
    os.makedirs(SHOTS, exist_ok=True)
    expect(browser.save_screenshot(os.path.join(SHOTS, f"console-{name}.png")), f"the screenshot {name} was not saved")


def password_page(browser, provider, person):
    """On the broker's chooser: the provider, then its username and password page."""
    wait(browser).until(EC.element_to_be_clickable((By.CSS_SELECTOR, f'button[name="provider"][value="{provider}"]'))).click()
    wait(browser).until(EC.presence_of_element_located((By.ID, "username")))
    base.submit_credentials(browser, *person)


def console_sign_in(ctx, provider, person, expect_admitted=True):
    """From a browser without cookies: the console's sign-in page, the broker's chooser and
    password page, back at the console."""
    browser = ctx.browser()
    browser.get(BASE_URL + "/healthz")
    browser.delete_all_cookies()
    browser.get(BASE_URL + "/admin/")
    wait(browser).until(EC.element_to_be_clickable((By.ID, "console-sign-in"))).click()
    password_page(browser, provider, person)
    if expect_admitted:
        wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, 'nav[aria-label="Console"]')))
    else:
        wait(browser).until(lambda b: b.title.startswith("No admin role"))
    return browser


def sign_out(browser):
    browser.find_element(By.ID, "sign-out").click()
    wait(browser).until(lambda b: b.title.startswith("Signed out"))


def in_view(browser, element):
    """The element scrolled to the middle of the window (clear of the policy form's save bar)."""
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    return element


def saved(browser):
    """After a save: the notice, or the refusal's summary as the failure."""
    wait(browser).until(lambda b: "Saved." in b.page_source or b.find_elements(By.ID, "error-summary"))
    summary = browser.find_elements(By.ID, "error-summary")
    expect(not summary, "the save was refused: " + (summary[0].text if summary else ""))


def console_cookies(browser):
    return {cookie["name"]: cookie["value"] for cookie in browser.get_cookies()}


def stateless_sign_in():
    """A stateless sign-in of bankapp through the flow API: the final JSON, or the refusal."""
    started = requests.post(BASE_URL + "/v1/flows", json={"app": "bankapp", "provider": "bank", "stateless": True}, auth=BANK, timeout=TIMEOUT).json()
    if started.get("status") != "challenge":
        return started
    return requests.post(f"{BASE_URL}/v1/flows/{started['flow']}", json={"answer": {"customData": {"subject": "console-ghost"}}}, auth=BANK,
                         timeout=TIMEOUT).json()


@check("C1. the first admin: a local account without the role sees only the bootstrap form; CSRF missing or wrong is refused; the static token admits it")
def first_admin(ctx):
    browser = console_sign_in(ctx, "local", CAROL, expect_admitted=False)
    shot(browser, "bootstrap")
    expect(browser.find_elements(By.ID, "bootstrap"), "no bootstrap form while no admin exists")
    expect(not browser.find_elements(By.CSS_SELECTOR, 'nav[aria-label="Console"]'), "a non-admin sees the console's navigation")
    apps = requests.get(BASE_URL + "/admin/apps", cookies=console_cookies(browser), timeout=TIMEOUT)
    expect(apps.status_code == 403 and "New app" not in apps.text, f"a non-admin reached the apps page: {apps.status_code}")
    for form in ({"adminToken": ADMIN_TOKEN}, {"adminToken": ADMIN_TOKEN, "csrf": "forged-token"}):
        refused = requests.post(BASE_URL + "/admin/bootstrap", data=form, cookies=console_cookies(browser), timeout=TIMEOUT, allow_redirects=False)
        expect(refused.status_code == 403 and "invalid_csrf_token" in refused.text, f"a bootstrap with {sorted(form)} was not refused: {refused.status_code}")
    admins = requests.get(BASE_URL + "/admin/v1/admins", headers={"Authorization": "Bearer " + ADMIN_TOKEN}, timeout=TIMEOUT).json()
    expect(admins == [], f"a refused bootstrap made an admin: {admins}")
    box = browser.find_element(By.ID, "f-adminToken")
    box.send_keys(ADMIN_TOKEN)
    browser.find_element(By.ID, "bootstrap").click()
    wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, 'nav[aria-label="Console"]')))
    expect("The admin role was given" in browser.page_source, "no notice after the bootstrap")
    sign_out(browser)


@check("C2. a local account without the admin role is refused once an admin exists; the first admin finds it and gives it the role; the audit log names carol")
def grant_second_admin(ctx):
    browser = console_sign_in(ctx, "local", DAVE, expect_admitted=False)
    expect(not browser.find_elements(By.ID, "bootstrap"), "the bootstrap form is offered again after the first admin")
    shot(browser, "refused")
    browser = console_sign_in(ctx, "local", CAROL)
    shot(browser, "overview")
    browser.get(BASE_URL + "/admin/users?q=dave")
    wait(browser).until(EC.presence_of_element_located((By.LINK_TEXT, "dave"))).click()
    grant = wait(browser).until(EC.presence_of_element_located((By.ID, "grant-admin")))
    grant.click()
    # The user page is shown again after the post: read the new one, not the old.
    wait(browser).until(replaced(grant))
    wait(browser).until(lambda b: "The admin role was given" in b.page_source)
    role = browser.find_element(By.ID, "admin-role").text
    expect(role == "yes", f"dave's admin role reads {role!r}")
    shot(browser, "user")
    browser.get(BASE_URL + "/admin/audit?type=admin.role_granted")
    admins = [cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#audit-events td.audit-admin")]
    expect("carol" in admins, f"the audit log does not name carol for the grant: {admins}")
    sign_out(browser)


@check("C3. a local account with the admin role signs in through the broker")
def local_admin(ctx):
    browser = console_sign_in(ctx, "local", DAVE)
    expect("dave" in browser.find_element(By.TAG_NAME, "header").text, "the header does not name dave")
    browser.get(BASE_URL + "/admin/providers")
    expect("corp-ldap" in browser.page_source and "healthy" in browser.page_source, "the providers page lacks corp-ldap's health")
    shot(browser, "providers")
    browser.get(BASE_URL + "/admin/providers/corp-ldap")
    browser.find_element(By.ID, "f-username").send_keys("alice")
    browser.find_element(By.ID, "test-provider").click()
    results = wait(browser).until(EC.presence_of_element_located((By.ID, "test-results")))
    expect("groups" in results.text and "failed" not in results.text, f"the LDAP test from the page: {results.text}")
    shot(browser, "provider-test")
    browser.get(BASE_URL + "/admin/keys")
    expect(browser.find_elements(By.CSS_SELECTOR, "td code"), "the keys page lists no key")
    shot(browser, "keys")
    sign_out(browser)


@check("C4. an LDAP account without the role and outside admin.consoleGroups is refused, with no bootstrap left")
def ldap_non_admin(ctx):
    browser = console_sign_in(ctx, "corp-ldap", LDAP_BOB, expect_admitted=False)
    expect(not browser.find_elements(By.ID, "bootstrap"), "the bootstrap form is offered again after the first admin")


@check("C5. an LDAP user in the directory group admins switches stateless authentication on: the flow API signs in statelessly at once")
def stateless_on(ctx):
    before = stateless_sign_in()
    expect(before.get("error") == "stateless_disabled", f"stateless was not off to begin with: {before}")
    browser = console_sign_in(ctx, "corp-ldap", LDAP_ALICE)
    browser.get(BASE_URL + "/admin/apps")
    shot(browser, "apps")
    browser.find_element(By.CSS_SELECTOR, 'a[href="/admin/apps/bankapp"]').click()
    switch = wait(browser).until(EC.presence_of_element_located((By.ID, "f-policy-statelessAuthentication")))
    expect(not switch.is_selected(), "the stateless switch is on already")
    expect(browser.find_elements(By.CSS_SELECTOR, 'label[for="f-policy-statelessAuthentication"]'), "the switch has no label")
    in_view(browser, switch).click()
    browser.find_element(By.ID, "save-policy").click()
    saved(browser)
    expect(browser.find_element(By.ID, "stateless-state").text == "on", "the app page does not show stateless on")
    shot(browser, "app")
    after = stateless_sign_in()
    expect(after.get("status") == "completed" and after.get("account") is None and "refresh_token" not in after.get("tokens", {}),
           f"the stateless sign-in after the switch: {after}")


@check("C6. the audit log page shows the change with the admin's name; a bad value is shown next to its field; switching it off refuses the next stateless sign-in")
def audit_and_off(ctx):
    browser = ctx.browser()
    browser.get(BASE_URL + "/admin/audit")
    browser.find_element(By.ID, "f-type").send_keys("policy.updated")
    browser.find_element(By.ID, "f-app").send_keys("bankapp")
    unfiltered = browser.find_element(By.ID, "audit-events")
    browser.find_element(By.ID, "filter").click()
    wait(browser).until(replaced(unfiltered))
    wait(browser).until(EC.presence_of_element_located((By.ID, "audit-events")))
    admins = [cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#audit-events td.audit-admin")]
    expect(admins and admins[0] == "alice", f"the audit log's latest policy change is not alice's: {admins}")
    what = browser.find_elements(By.CSS_SELECTOR, "#audit-events td.audit-what")[0]
    changes = [item.text for item in what.find_elements(By.CSS_SELECTOR, "ul.changes li")]
    expect("statelessAuthentication: off → on" in changes, f"the change does not read as the switch that moved: {changes}")
    expect(not any("redirectURIs" in change for change in changes), f"unchanged values are listed as changes: {changes}")
    record = what.find_element(By.TAG_NAME, "details")
    expect(record.get_attribute("open") is None and not record.find_element(By.TAG_NAME, "pre").is_displayed(),
           "the full record is not folded away behind one click")
    record.find_element(By.TAG_NAME, "summary").click()
    expect(record.find_element(By.TAG_NAME, "pre").is_displayed(), "the full record does not open")
    width = browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
    expect(width, "the open record spills out of the page")
    shot(browser, "audit")
    browser.get(BASE_URL + "/admin/apps/bankapp")
    lifetime = browser.find_element(By.ID, "f-policy-accessTokenLifetime")
    lifetime.clear()
    lifetime.send_keys("forever")
    browser.find_element(By.ID, "save-policy").click()
    error = wait(browser).until(EC.presence_of_element_located((By.ID, "f-policy-accessTokenLifetime-error")))
    expect("duration" in error.text, f"the field error says {error.text!r}")
    expect(browser.find_element(By.ID, "f-policy-accessTokenLifetime").get_attribute("aria-describedby") == "f-policy-accessTokenLifetime-error",
           "the field is not tied to its error")
    expect("invalid_request" in browser.find_element(By.ID, "error-summary").text, "the summary lacks the API's code")
    shot(browser, "field-error")
    browser.get(BASE_URL + "/admin/apps/bankapp")
    switch = browser.find_element(By.ID, "f-policy-statelessAuthentication")
    expect(switch.is_selected(), "the refused save changed the stored policy")
    in_view(browser, switch).click()
    browser.find_element(By.ID, "save-policy").click()
    saved(browser)
    refused = stateless_sign_in()
    expect(refused.get("error") == "stateless_disabled", f"stateless still works after switching it off: {refused}")


@check("C7. deleting an app: the confirmation, a fresh sign-in (the password asked again), then the app is gone")
def delete_with_reauthentication(ctx):
    browser = ctx.browser()
    browser.get(BASE_URL + "/admin/apps/new")
    browser.find_element(By.ID, "f-id").send_keys("throwaway")
    browser.find_element(By.ID, "f-redirectURIs").send_keys("not a uri")
    browser.find_element(By.ID, "create-app").click()
    wait(browser).until(EC.presence_of_element_located((By.ID, "f-redirectURIs-error")))
    shot(browser, "new-app-error")
    box = browser.find_element(By.ID, "f-redirectURIs")
    box.clear()
    box.send_keys(f"http://127.0.0.1:{CALLBACK_PORT}/throwaway")
    browser.find_element(By.ID, "create-app").click()
    secret = wait(browser).until(EC.presence_of_element_located((By.ID, "client-secret"))).text
    expect(len(secret) >= 40, "the new app's secret is not shown once")
    shot(browser, "secret-once")
    browser.get(BASE_URL + "/admin/reauthenticate?return=/admin/apps/throwaway/delete")
    # prompt=login: the broker asks for the password again although its session is alive.
    password_page(browser, "corp-ldap", LDAP_ALICE)
    wait(browser).until(EC.presence_of_element_located((By.ID, "confirm")))
    shot(browser, "confirm-delete")
    browser.find_element(By.ID, "confirm").click()
    wait(browser).until(lambda b: "Deleted." in b.page_source)
    gone = requests.get(BASE_URL + "/admin/v1/apps/throwaway", headers={"Authorization": "Bearer " + ADMIN_TOKEN}, timeout=TIMEOUT)
    expect(gone.status_code == 404, f"the deleted app is still there: {gone.status_code}")
    events = requests.get(BASE_URL + "/admin/v1/audit?type=app.deleted&admin=alice", headers={"Authorization": "Bearer " + ADMIN_TOKEN}, timeout=TIMEOUT).json()
    expect(events and events[0]["appID"] == "throwaway", f"no app.deleted event by alice: {events}")
    sign_out(browser)
    after = requests.get(BASE_URL + "/admin/apps", cookies=console_cookies(browser), timeout=TIMEOUT)
    expect("Sign in to the admin console" in after.text, "the console still answers after signing out")


@check("C8. users: an admin creates one (a generated, temporary password shown once), who is listed before any sign-in and must choose a password at the first; then disables and enables the account, each after a confirmation")
def manage_users(ctx):
    browser = console_sign_in(ctx, "corp-ldap", LDAP_ALICE)
    browser.get(BASE_URL + "/admin/users")
    browser.find_element(By.ID, "new-user").click()
    wait(browser).until(EC.presence_of_element_located((By.ID, "f-username"))).send_keys("pat")
    expect(browser.find_element(By.ID, "f-mustChange").is_selected(), "'must change' is not the default for a new user")
    browser.find_element(By.ID, "create-user").click()
    secret = wait(browser).until(EC.presence_of_element_located((By.ID, "client-secret"))).text
    expect(len(secret) >= 20, f"the generated password is not shown: {secret!r}")
    shot(browser, "user-created")
    browser.get(BASE_URL + "/admin/users?q=pat")
    wait(browser).until(EC.presence_of_element_located((By.LINK_TEXT, "pat"))).click()
    state = wait(browser).until(EC.presence_of_element_located((By.ID, "account-state"))).text
    expect(state == "Active", f"the new account's state reads {state!r}")
    # Disabling asks first, and says what it does.
    browser.find_element(By.ID, "disable-user").click()
    wait(browser).until(EC.presence_of_element_located((By.ID, "confirm")))
    expect("sessions and tokens end" in browser.page_source, "the confirmation does not say what disabling does")
    browser.find_element(By.ID, "f-reason").send_keys("left the company")
    browser.find_element(By.ID, "confirm").click()
    wait(browser).until(lambda b: "The account is disabled" in b.page_source)
    expect(browser.find_element(By.ID, "account-state").text.startswith("Disabled"), "the user page does not show the account disabled")
    events = requests.get(BASE_URL + "/admin/v1/audit?type=account.disabled&admin=alice", headers={"Authorization": "Bearer " + ADMIN_TOKEN}, timeout=TIMEOUT).json()
    expect(events and events[0]["details"].get("reason") == "left the company", f"no account.disabled event with the reason: {events}")
    browser.find_element(By.ID, "enable-user").click()
    wait(browser).until(EC.presence_of_element_located((By.ID, "confirm"))).click()
    wait(browser).until(lambda b: "The account is enabled again" in b.page_source)
    shot(browser, "user-managed")
    # The directory's people, found before they sign in: alice (signed in, so linked to her
    # account) and bob (not yet, unless an earlier check signed him in).
    def directory_rows(text):
        browser.get(BASE_URL + "/admin/users")
        Select(browser.find_element(By.ID, "directory-provider")).select_by_value("corp-ldap")
        browser.find_element(By.ID, "dq").send_keys(text)
        browser.find_element(By.ID, "directory-search").click()
        table = wait(browser).until(EC.presence_of_element_located((By.ID, "directory-results")))
        cells = [[td.text for td in r.find_elements(By.TAG_NAME, "td")] for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")]
        expect(all(len(c) == 4 for c in cells), f"searching the directory for {text!r} shows {table.text!r}")
        return {c[0]: c[3] for c in cells}
    rows = directory_rows("liddell")
    expect(rows == {"alice": "its account"}, f"searching the directory for liddell shows {rows}")
    rows = directory_rows("Bob Builder")
    expect(list(rows) == ["bob"] and rows["bob"] in ("its account", "not signed in yet"), f"searching the directory for Bob Builder shows {rows}")
    shot(browser, "directory-search")
    sign_out(browser)
    # pat's first sign-in: the temporary password only leads to choosing one of pat's own.
    browser = ctx.browser()
    browser.get(BASE_URL + "/healthz")
    browser.delete_all_cookies()
    browser.get(BASE_URL + "/admin/")
    wait(browser).until(EC.element_to_be_clickable((By.ID, "console-sign-in"))).click()
    password_page(browser, "local", ("pat", secret))
    wait(browser).until(lambda b: b.title.startswith("Choose a new password"))
    base.type_into(browser, "password", "violet river compass 9")
    wait(browser).until(lambda b: b.title.startswith("No admin role") or b.find_elements(By.CSS_SELECTOR, base.ALERT))
    alerts = browser.find_elements(By.CSS_SELECTOR, base.ALERT)
    expect(not alerts, f"the new password was refused: {alerts[0].text if alerts else ''} ({browser.title})")
    expect("pat" in browser.page_source, "pat did not arrive signed in after choosing a password")


@check("C9. the policy page guides: sections, durations with units, a save bar in view, the stateless switch says why it is off limits; an edit made as the session ends comes back after signing in again, unsaved, and saves")
def policy_page(ctx):
    browser = console_sign_in(ctx, "corp-ldap", LDAP_ALICE)
    browser.get(BASE_URL + "/admin/apps/webapp")
    for section in ("policy-sign-in", "policy-second-factor", "policy-tokens", "policy-devices"):
        expect(browser.find_elements(By.ID, section), f"the policy page has no section {section}")
    advanced = browser.find_element(By.ID, "policy-advanced")
    expect(advanced.tag_name == "details" and advanced.get_attribute("open") is None, "the advanced settings are not folded away")
    lifetime = browser.find_element(By.ID, "f-policy-refreshTokenLifetime").get_attribute("value")
    expect(lifetime[-1] in "smhd" and lifetime[:-1].isdigit(), f"a lifetime reads {lifetime!r}, not with a unit")
    switch = browser.find_element(By.ID, "f-policy-statelessAuthentication")
    hint = browser.find_element(By.ID, "f-policy-statelessAuthentication-hint").text
    expect(not switch.is_enabled() and "Unavailable" in hint and "bank" in hint, f"the stateless switch of a local-only app: enabled={switch.is_enabled()}, hint={hint!r}")
    bar = browser.find_element(By.CSS_SELECTOR, ".save-bar")
    expect(bar.value_of_css_property("position") == "sticky", "the save bar does not stay in view")
    in_view(browser, browser.find_element(By.ID, "policy-sign-in"))
    shot(browser, "policy")
    browser.set_window_size(390, 844)
    in_view(browser, browser.find_element(By.ID, "policy-sign-in"))
    shot(browser, "policy-phone")
    wide = browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
    browser.set_window_size(1280, 900)
    expect(wide, "the policy page does not fit 390 px")
    # The session ends while the admin types: the edit survives the sign-in.
    box = browser.find_element(By.ID, "f-policy-accessTokenLifetime")
    box.clear()
    box.send_keys("20m")
    # The session ends on the server (idle, or ended elsewhere); the browser still holds its cookie.
    browser.delete_cookie("gatehouse_console")
    browser.add_cookie({"name": "gatehouse_console", "value": "E" * 43, "path": "/"})
    browser.find_element(By.ID, "save-policy").click()
    link = wait(browser).until(EC.element_to_be_clickable((By.ID, "console-sign-in")))
    expect("gatehouse_console_draft" in [c["name"] for c in browser.get_cookies()], "the typed values were not kept for after the sign-in")
    link.click()
    kept = wait(browser).until(EC.presence_of_element_located((By.ID, "f-policy-accessTokenLifetime")))
    expect(kept.get_attribute("value") == "20m", f"the typed value did not survive the sign-in: {kept.get_attribute('value')!r}")
    expect("not saved yet" in browser.page_source, "the page does not say the draft is unsaved")
    app = requests.get(BASE_URL + "/admin/v1/apps/webapp", headers={"Authorization": "Bearer " + ADMIN_TOKEN}, timeout=TIMEOUT).json()
    expect(app["policy"]["accessTokenLifetime"] != 1200, "the draft was saved before the admin pressed Save")
    browser.find_element(By.ID, "save-policy").click()
    saved(browser)
    app = requests.get(BASE_URL + "/admin/v1/apps/webapp", headers={"Authorization": "Bearer " + ADMIN_TOKEN}, timeout=TIMEOUT).json()
    expect(app["policy"]["accessTokenLifetime"] == 1200, f"the saved lifetime is {app['policy']['accessTokenLifetime']}")
    # The console's own app follows the config file alone: its page offers no form that could only fail.
    browser.get(BASE_URL + "/admin/apps/gatehouse-console")
    expect(browser.find_elements(By.ID, "built-in") and not browser.find_elements(By.ID, "save-policy") and not browser.find_elements(By.ID, "delete-app"),
           "the console's own app offers forms")
    # A cross-site form cannot plant a draft: without the console's cookie nothing is kept.
    planted = requests.post(BASE_URL + "/admin/apps/webapp/policy", data={"policy.accessTokenLifetime": "1d"}, timeout=TIMEOUT, allow_redirects=False)
    expect("gatehouse_console_draft" not in planted.headers.get("Set-Cookie", ""), "a post without the console's cookie kept a draft")
    sign_out(browser)


@check("C10. accessibility: axe-core finds no serious or critical violation on any console page, at 1280 px and at 390 px")
def console_accessibility(ctx):
    browser = console_sign_in(ctx, "corp-ldap", LDAP_ALICE)
    users = requests.get(BASE_URL + "/admin/v1/users?q=pat", headers={"Authorization": "Bearer " + ADMIN_TOKEN}, timeout=TIMEOUT).json()
    pages = ["/admin/", "/admin/apps", "/admin/apps/bankapp", "/admin/apps/new", "/admin/providers", "/admin/providers/corp-ldap", "/admin/users",
             "/admin/users?directory=corp-ldap&dq=example", "/admin/users/new", "/admin/lockouts", "/admin/keys", "/admin/audit", "/admin/audit?type=policy."]
    if users:
        pages += [f"/admin/users/{users[0]['id']}", f"/admin/users/{users[0]['id']}/disable"]
    problems = []
    for width in (1280, 390):
        browser.set_window_size(width, 900)
        for path in pages:
            browser.get(BASE_URL + path)
            wait(browser).until(EC.presence_of_element_located((By.ID, "main")))
            problems += [f"{path} at {width} px: {problem}" for problem in page_support.accessibility_problems(browser)]
            if width == 390:
                fits = browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
                if not fits:
                    problems.append(f"{path} is wider than 390 px")
    browser.set_window_size(1280, 900)
    expect(not problems, "; ".join(problems[:8]))
    sign_out(browser)


def main():
    ctx = Context(callbacks=CallbackServer(CALLBACK_PORT))
    try:
        outcomes = [base.run_check(ctx, description, function) for description, function in CHECKS]
    finally:
        ctx.close()
    passed = outcomes.count(True)
    print(f"{passed} passed, {len(outcomes) - passed} failed")
    return 0 if all(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
