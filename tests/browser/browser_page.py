"""The Cockpit page as the browser tier sees it: what a person reads and
clicks, found by the page's own structure (cards carry data-mount-point and
data-state; buttons data-action), never by wording alone."""

import json
import time
from pathlib import Path

from browser_kit import log, wait_for

CARD = 'article.fs-card[data-mount-point="{}"]'


class Page:
    def __init__(self, driver, url, artefacts, prefix):
        self.driver, self.url, self.artefacts, self.prefix = driver, url, Path(artefacts), prefix

    def load(self):
        self.driver.get(self.url)
        wait_for(lambda: self.js("return document.body.classList.contains('ready')"), 20)

    def js(self, script, *args):
        try:
            return self.driver.execute_script(script, *args)
        except Exception as error:  # a page in the middle of loading
            log(f"js: {error!s:.200}")
            return None

    def shot(self, name):
        path = self.artefacts / f"{self.prefix}{name}.png"
        self.driver.save_screenshot(str(path))
        return path

    # ---- reading ----

    def card_attribute(self, mount, name):
        return self.js(f"const c = document.querySelector('{CARD}');"
                       " return c ? c.dataset[arguments[0]] : null"
                       .format(mount), name)

    def card_state(self, mount):
        return self.card_attribute(mount, "state")

    def card_text(self, mount):
        return self.js(f"const c = document.querySelector('{CARD}'); return c ? c.innerText : ''"
                       .format(mount))

    def summary(self):
        return self.js("return document.getElementById('manager-summary').textContent")

    def page_attribute(self, name):
        return self.js("return document.getElementById('page').dataset[arguments[0]]", name)

    def visible(self, element_id):
        return bool(self.js("const e = document.getElementById(arguments[0]);"
                            "return !!e && !e.closest('[hidden]') && e.offsetParent !== null", element_id))

    def wait_visible(self, element_id, shown, timeout=10):
        return wait_for(lambda: self.visible(element_id) == shown, timeout)

    def wait_state(self, mount, accept, timeout=15):
        wait_for(lambda: accept(self.card_state(mount)), timeout)
        return self.card_state(mount)

    def wait_attribute(self, mount, name, accept, timeout):
        return wait_for(lambda: accept(self.card_attribute(mount, name)), timeout)

    def watch_progress(self, mount, timeout):
        """The progress bar's values (aria-valuenow) while the card says trimming, in order."""
        seen = []
        deadline = time.monotonic() + timeout
        wait_for(lambda: self.card_state(mount) == "trimming", 10, 0.05)
        shot_taken = False
        while time.monotonic() < deadline and self.card_state(mount) == "trimming":
            value = self.js(f"const b = document.querySelector('{CARD} [role=progressbar]');"
                            "return b && !b.hidden ? Number(b.getAttribute('aria-valuenow')) : null"
                            .format(mount))
            if value is not None and (not seen or value != seen[-1]):
                seen.append(value)
            if not shot_taken and value is not None and 30 <= value <= 70:
                self.shot("2-trimming")
                shot_taken = True
            time.sleep(0.05)
        return seen

    def button_visible(self, mount, action):
        selector = CARD.format(mount) + f' button[data-action="{action}"]'
        return bool(self.js("const b = document.querySelector(arguments[0]); return !!b && !b.hidden",
                            selector))

    def enabled_manage_buttons(self):
        return self.js("return Array.from(document.querySelectorAll('button[data-manage]'))"
                       ".filter(b => !b.disabled && b.offsetParent !== null).map(b => b.textContent)")

    def chart_bars(self, mount):
        return self.js(f"return document.querySelectorAll('{CARD} svg.history-chart rect').length"
                       .format(mount))

    def wait_alert(self, timeout=10):
        wait_for(lambda: self.js("return document.querySelector('.alert-danger p')") is not None, timeout)
        return self.js("const a = document.querySelector('.alert-danger p'); return a ? a.textContent : ''")

    # ---- acting: real clicks on the real elements ----

    def click(self, element_id):
        self.driver.find_element("id", element_id).click()

    def click_card(self, mount, action):
        card = self.driver.find_element("css selector", CARD.format(mount))
        if action == "ignore-idle":
            card.find_element("css selector", "input[type=checkbox]").click()
        else:
            card.find_element("css selector", f'button[data-action="{action}"]').click()

    def press_by_keyboard(self, element_id, limit=40):
        """Tabs from the top of the page to the element and presses Enter:
        False when Tab never reaches it."""
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.keys import Keys
        self.js("document.activeElement && document.activeElement.blur(); window.focus()")
        for _ in range(limit):
            ActionChains(self.driver).send_keys(Keys.TAB).perform()
            if self.js("return document.activeElement ? document.activeElement.id : ''") == element_id:
                ActionChains(self.driver).send_keys(Keys.ENTER).perform()
                return True
        return False

    def force_click(self, element_id):
        """Enables a disabled button and clicks it: what the bus does then."""
        self.js("document.getElementById(arguments[0]).disabled = false", element_id)
        self.click(element_id)

    def open_history(self, mount):
        self.click_card(mount, "history")
        wait_for(lambda: self.card_history_passes(mount), 10)
        return int(self.card_history_passes(mount) or 0)

    def card_history_passes(self, mount):
        return self.js(f"const h = document.querySelector('{CARD} .fs-history');"
                       "return h ? h.dataset.passes : null".format(mount))

    def axe(self, axe_js):
        """axe-core's violations on the page as it stands (WCAG 2 A and AA rules)."""
        self.js(Path(axe_js).read_text())
        result = self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'best-practice']}})"
            ".then(r => done(JSON.stringify(r.violations))).catch(e => done(JSON.stringify([{id: 'axe-error',"
            "impact: 'critical', help: String(e)}])))")
        return json.loads(result)
