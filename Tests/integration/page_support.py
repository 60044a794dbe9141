"""What the browser tests of plugins' pages share: the headless Chromium they drive (Debian's
chromium and chromedriver) and their `ok` / `FAIL` lines, counted in `failures`."""
from pathlib import Path

import axe_core_python
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

failures = 0


def check(description, condition, detail=""):
    global failures
    print(("ok   " if condition else "FAIL ") + description + ("" if condition else f" ({detail})"))
    if not condition:
        failures += 1


def browser(window="1000,900", browser_log=False):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--window-size={window}"):
        options.add_argument(argument)
    if browser_log:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)


# axe-core (Deque's accessibility engine), as the PyPI package axe-core-python ships it: run in the
# page through WebDriver, which the pages' Content-Security-Policy does not restrict.
AXE_SCRIPT = (Path(axe_core_python.__file__).parent / "axe.min.js").read_text()


def accessibility_problems(driver):
    """The serious and critical violations axe finds on the current page (WCAG 2.x A and AA rules
    and best practices), each as `rule-id: help (selector, ...)`."""
    driver.execute_script(AXE_SCRIPT)
    violations = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations)).catch(e => done([{id: 'axe-error', impact: 'critical', help: String(e), nodes: []}]));"
    )
    return [
        f"{v['id']}: {v['help']} ({', '.join(' '.join(n['target']) for n in v['nodes'][:3])})"
        for v in violations if v.get("impact") in ("serious", "critical")
    ]


def shot(driver, name, focus=None):
    """A screenshot for docs/images at 1280 and 390 px wide (`name`.png and `name`-phone.png), when
    GATEHOUSE_SCREENSHOTS names a folder, with the element whose id is `focus` in view; the
    window's size comes back afterwards."""
    import os
    folder = os.environ.get("GATEHOUSE_SCREENSHOTS")
    if not folder:
        return
    os.makedirs(folder, exist_ok=True)
    size = driver.get_window_size()
    for suffix, width in (("", 1280), ("-phone", 390)):
        driver.set_window_size(width, 900)
        if focus:
            driver.execute_script("document.getElementById(arguments[0]).scrollIntoView({block: 'center'})", focus)
        check(f"the screenshot {name}{suffix} is saved", driver.save_screenshot(os.path.join(folder, f"{name}{suffix}.png")))
    driver.set_window_size(size["width"], size["height"])
