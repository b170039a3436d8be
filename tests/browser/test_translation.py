#!/usr/bin/python3
"""Browser tier: the Cockpit page in another language, through Cockpit's own
way. A pseudo-translation of the whole template (po/make_pot.py's trimd.pot,
every message as "⟦message⟧", compiled by po/po2js.py into po.de.js) is
installed with the page; with Cockpit's language cookie at "de", cockpit-ws
serves it as the page's po.js.

Checks, with a filesystem trimmed from the page and its history open: the
page's language is de; its text, labels and tooltips show the translation;
a sentence built of several messages and a count (cockpit.ngettext, through
the translation's plural rule) come translated; no message of the template
shows in English; the browser logged no JavaScript error. A screenshot goes to
--artefacts. Exit codes as test_browser.py's."""

import argparse
import ast
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser_kit as kit  # noqa: E402
from browser_page import Page  # noqa: E402
from pykit.checks import Checks  # noqa: E402
from pykit.cleanup import Cleanup, Undo  # noqa: E402
from pykit.ci import running_under_ci  # noqa: E402
from pykit.loopfs import LoopFs  # noqa: E402
from test_browser import FS_CONFIG  # noqa: E402

TOP = Path(__file__).resolve().parent.parent.parent
OPEN, CLOSE = "\u27e6", "\u27e7"

# Every visible text and read attribute of the page, one string each.
SHOWN = """
const out = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    if (node.textContent.trim() && !element.closest('[hidden]') &&
        (element.offsetParent !== null || element.closest('svg')))
        out.push(node.textContent.trim());
}
for (const element of document.querySelectorAll('[aria-label], [title]'))
    for (const name of ['aria-label', 'title'])
        if (element.getAttribute(name)) out.push(element.getAttribute(name));
out.push(document.title);
return out;
"""


def po_messages(pot_text):
    """(msgid, msgid_plural or None) of each message of a .pot, but the header."""
    messages, current, field = [], None, None
    for line in pot_text.splitlines():
        keyword = re.match(r'^(msgid|msgid_plural|msgstr(?:\[\d+\])?) (".*")$', line)
        if keyword:
            field = keyword.group(1)
            if field == "msgid":
                current = {"msgid": "", "msgid_plural": None}
                messages.append(current)
            if field in ("msgid", "msgid_plural"):
                current[field] = ast.literal_eval(keyword.group(2))  # a C string, as msgcat writes it
        elif line.startswith('"') and field in ("msgid", "msgid_plural"):
            current[field] = (current[field] or "") + ast.literal_eval(line)
    return [(m["msgid"], m["msgid_plural"]) for m in messages if m["msgid"]]


def quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def pseudo_po(messages):
    """A German translation of every message: the English, in brackets."""
    out = ['msgid ""', 'msgstr ""', '"Language: de\\n"', '"Plural-Forms: nplurals=2; plural=(n != 1);\\n"',
           ""]
    for msgid, plural in messages:
        out.append(f"msgid {quote(msgid)}")
        if plural:
            out += [f"msgid_plural {quote(plural)}", f"msgstr[0] {quote(OPEN + msgid + CLOSE)}",
                    f"msgstr[1] {quote(OPEN + plural + CLOSE)}"]
        else:
            out.append(f"msgstr {quote(OPEN + msgid + CLOSE)}")
        out.append("")
    return "\n".join(out)


def install_pseudo_translation(work, page_dir):
    pot = work / "trimd.pot"
    kit.run([sys.executable, str(TOP / "po" / "make_pot.py"), "--source-dir", str(TOP), "--version", "0",
             "--output", str(pot)])
    messages = po_messages(pot.read_text())
    (work / "de.po").write_text(pseudo_po(messages))
    kit.run([sys.executable, str(TOP / "po" / "po2js.py"), str(work / "de.po"), str(page_dir / "po.de.js")])
    return messages


def untranslated(text):
    """What of `text` is outside the translation's brackets (nested ones too)."""
    while True:
        stripped = re.sub(OPEN + "[^" + OPEN + CLOSE + "]*" + CLOSE, "", text)
        if stripped == text:
            return text.strip()
        text = stripped


def run_checks(args, checks, cleanup, work):
    prefix = work / "prefix"
    kit.run(["cmake", "--install", args.build, "--component", "cockpit", "--prefix", str(prefix)])
    messages = install_pseudo_translation(work, prefix / "share" / "cockpit" / "trimd")
    bus = kit.Bus.start(cleanup, args.bus_config, work)
    mount = work / "mnt" / "a"
    LoopFs.create(cleanup, work / "a.img", 64, mount)
    trimd = kit.Trimd(args.trimd, bus, work)
    trimd.config.write_text(FS_CONFIG.format(work=work))
    trimd.start(cleanup)
    ws = kit.CockpitWs(cleanup, bus, prefix / "share", work)
    driver = kit.chromium(cleanup, work)
    page = Page(driver, ws.url, args.artefacts, "translated-")
    page.load()
    driver.add_cookie({"name": "CockpitLang", "value": "de", "path": "/"})
    page.load()
    page.wait_state(mount, lambda s: s == "scheduled")
    page.click_card(mount, "ignore-idle")
    page.click_card(mount, "trim")
    page.wait_attribute(mount, "lastTrimEnd", lambda v: v not in (None, "0"), 30)
    page.open_history(mount)
    page.shot("1-history")

    checks.check(page.js("return document.documentElement.lang") == "de", "the page's language is de",
                 str(page.js("return document.documentElement.lang")))
    shown = page.js(SHOWN) or []
    translated = [text for text in shown if OPEN in text]
    checks.check(len(translated) >= 30 and f"{OPEN}Trim all now{CLOSE}" in shown,
                 "the page shows the translation: text, labels and tooltips",
                 f"{len(translated)} of {len(shown)} texts translated")
    english = {msgid for msgid, _ in messages if "$" not in msgid}
    left = sorted({text for text in shown if untranslated(text) in english})
    checks.check(not left, "no message of the template shows in English", "\n".join(left))
    card = page.card_text(mount) or ""
    checks.check(f" in {OPEN}1 pass{CLOSE}{CLOSE}" in card,
                 "a sentence made of several messages and a count's plural form come translated", card)
    errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    checks.check(not errors, "the page threw no JavaScript error", "\n".join(errors))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True, help="the build directory (cmake --install)")
    parser.add_argument("--trimd", required=True, help="the trimd binary")
    parser.add_argument("--bus-config", required=True,
                        help="the system bus's rules for tests (tests/common/bus-system.conf)")
    parser.add_argument("--artefacts", required=True, type=Path, help="where screenshots go")
    args = parser.parse_args()
    reason = kit.missing_prerequisite(Path(__file__))  # no axe-core needed here
    missing = [tool for tool in ("xgettext", "msgcat") if shutil.which(tool) is None]
    if reason or missing:
        print(f"browser tier (translation): {reason or 'missing: ' + ', '.join(missing)}")
        return 1 if running_under_ci() else 77

    checks = Checks()
    cleanup = Cleanup()
    try:
        # Its own network and mount namespaces: cockpit-ws's port and the
        # loop mount are this test's alone (before any thread starts).
        kit.enter_namespaces(kit.start_namespaces(cleanup))
        work = Path(tempfile.mkdtemp(prefix="trimd-browser-l10n-"))
        os.chmod(work, 0o755)
        cleanup.push(f"remove {work}", Undo.remove(work))
        args.artefacts.mkdir(parents=True, exist_ok=True)
        run_checks(args, checks, cleanup, work)
    except Exception as error:  # a broken step is a failure, and cleanup still runs
        checks.check(False, f"translation check aborted: {error!r}",
                     getattr(error, "stdout", "") or getattr(error, "msg", "") or "")
    finally:
        cleanup.run_all()
    print(f"browser (translation): {checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed or not checks.passed else 0


if __name__ == "__main__":
    sys.exit(main())
