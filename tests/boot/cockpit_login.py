#!/usr/bin/python3
"""The boot tier's look at the Cockpit page: headless Chromium (Debian's, on
the host) logs in to the booted container's Cockpit as a real user, opens
Trim in Cockpit's shell and reports what the page shows, as one JSON line:
{"state": <the card's state of --mount or null>, "can_manage": "true"/"false",
 "read_only_note": bool}. Runs with /usr/bin/python3 (python3-selenium)."""

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "browser"))
import browser_kit as kit  # noqa: E402

IFRAME = 'iframe[name="cockpit1:localhost/trimd"]'


def log_in(driver, url, user, password):
    driver.get(url + "/trimd")
    kit.wait_for(lambda: driver.find_elements("id", "login-user-input"), 30)
    driver.find_element("id", "login-user-input").send_keys(user)
    driver.find_element("id", "login-password-input").send_keys(password)
    driver.find_element("id", "login-button").click()


def page_report(driver, mount):
    frames = kit.wait_for(lambda: driver.find_elements("css selector", IFRAME), 30)
    if not frames:
        return {"state": None, "error": "no trimd iframe in the shell"}
    driver.switch_to.frame(frames[0])
    card = f'article.fs-card[data-mount-point="{mount}"]'
    script = "const c = document.querySelector(arguments[0]); return c ? c.dataset.state : null"
    state = kit.wait_for(lambda: driver.execute_script(script, card), 30)
    can_manage = kit.wait_for(lambda: driver.execute_script(
        "return document.getElementById('page').dataset.canManage") == "true", 10)
    note = driver.execute_script("return !document.getElementById('read-only-note').hidden")
    return {"state": state, "can_manage": bool(can_manage), "read_only_note": note}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--mount", required=True)
    parser.add_argument("--screenshot")
    args = parser.parse_args()
    cleanup = kit.Cleanup()
    work = tempfile.mkdtemp(prefix="trimd-boot-cockpit-")
    cleanup.push("remove " + work, lambda: kit.run(["rm", "-rf", work], check=False))
    try:
        driver = kit.chromium(cleanup, work)
        log_in(driver, args.url, args.user, args.password)
        report = page_report(driver, args.mount)
        if args.screenshot:
            driver.switch_to.default_content()
            driver.save_screenshot(args.screenshot)
    except Exception as error:  # reported, not raised: the boot tier counts it
        report = {"state": None, "error": repr(error)}
    finally:
        cleanup.run_all()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
