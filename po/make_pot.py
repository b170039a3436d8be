#!/usr/bin/python3
"""Makes the Cockpit page's translation template, trimd.pot, from its
sources: xgettext reads the words the scripts pass to cockpit.gettext
(_ and N_) and cockpit.ngettext; index.html's words are the text of each
element marked translate="yes" and the attributes named in translate="...",
which cockpit.translate() looks up when the page starts. msgcat joins the two.

    make_pot.py --source-dir DIR --version VERSION --output trimd.pot
"""

import argparse
import html.parser
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SCRIPTS_GLOB = "cockpit/*.js"
PAGE = "cockpit/index.html"
HEADER = ('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
          '"Content-Transfer-Encoding: 8bit\\n"\n\n')


class PageWords(html.parser.HTMLParser):
    """(line, context, text) for each word of the page cockpit.translate() looks up."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.words, self.open = [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        what = attrs.get("translate", attrs.get("translatable"))
        line = self.getpos()[0]
        context = attrs.get("translate-context", attrs.get("context"))
        for name in (what or "").split():
            if name not in ("yes", "translate", "no") and attrs.get(name):
                self.words.append((line, context, attrs[name]))
        if what is not None and ("yes" in what.split() or "translate" in what.split() or what == ""):
            self.open.append([tag, line, context, ""])
        elif self.open:
            self.open.append([tag, None, None, ""])

    def handle_data(self, data):
        for element in self.open:
            element[3] += data

    def handle_endtag(self, tag):
        if self.open and self.open[-1][0] == tag:
            _, line, context, text = self.open.pop()
            if line is not None and text:
                self.words.append((line, context, text))


def quote(text):
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def page_pot(source_dir):
    parser = PageWords()
    parser.feed((source_dir / PAGE).read_text(encoding="utf-8"))
    parser.close()
    lines = {}  # (context, text) -> the lines it is on, in the page's order
    for line, context, text in parser.words:
        lines.setdefault((context, text), []).append(line)
    entries = []
    for (context, text), where in lines.items():
        entry = "#: " + " ".join(f"{PAGE}:{line}" for line in where) + "\n"
        if context:
            entry += f"msgctxt {quote(context)}\n"
        entries.append(entry + f'msgid {quote(text)}\nmsgstr ""\n')
    return HEADER + "\n".join(entries)


def scripts(source_dir):
    """The page's scripts, as paths from the top of the tree."""
    return sorted(str(path.relative_to(source_dir)) for path in source_dir.glob(SCRIPTS_GLOB))


def run(argv, cwd):
    result = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"make_pot: {argv[0]} failed:\n{result.stderr}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--source-dir", type=Path, required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    for tool in ("xgettext", "msgcat"):
        if not shutil.which(tool):
            sys.exit(f"make_pot: no {tool} (Debian's gettext)")
    with tempfile.TemporaryDirectory(prefix="trimd-pot-") as work:
        scripts_pot, page = Path(work) / "scripts.pot", Path(work) / "page.pot"
        run(["xgettext", "--language=JavaScript", "--from-code=UTF-8", "--keyword", "--keyword=_",
             "--keyword=N_", "--keyword=ngettext:1,2", "--add-comments=TRANSLATORS:",
             "--package-name=trimd", f"--package-version={args.version}", "--no-wrap",
             f"--output={scripts_pot}", *scripts(args.source_dir.resolve())], cwd=args.source_dir)
        page.write_text(page_pot(args.source_dir.resolve()), encoding="utf-8")
        args.output.parent.mkdir(parents=True, exist_ok=True)
        run(["msgcat", "--use-first", "--no-wrap", f"--output-file={args.output.resolve()}",
             str(scripts_pot), str(page)], cwd=args.source_dir)


if __name__ == "__main__":
    main()
