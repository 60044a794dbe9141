"""What the browser tests of plugins' pages share: the headless Chromium they drive (Debian's
chromium and chromedriver) and their `ok` / `FAIL` lines, counted in `failures`."""
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
