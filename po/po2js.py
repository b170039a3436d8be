#!/usr/bin/python3
"""Compiles a translation of the Cockpit page (po/LANG.po) into po.LANG.js,
the form Cockpit loads: one cockpit.locale({...}) call whose "" entry carries
the language and its plural rule, and each translated message as
msgid: [msgid_plural or null, msgstr, msgstr[1], ...] ("context\\u0004msgid"
when it has a context). Fuzzy and untranslated messages are left out, so
the page shows them in English.

    po2js.py LANG.po po.LANG.js
"""

import ast
import json
import re
import sys

# Languages written right to left, for cockpit.language_direction.
RTL = {"ar", "fa", "he", "ur", "yi"}
# A plural rule is a C expression in n: nothing else may reach the page.
PLURAL_RULE = re.compile(r"^[n0-9\s()?:<>=!&|%+*/-]+$")


class PoError(Exception):
    pass


def unquote(text, where):
    if not (len(text) >= 2 and text[0] == '"' and text[-1] == '"'):
        raise PoError(f"{where}: expected a quoted string, found {text!r}")
    try:  # PO strings are C strings; Python reads the escapes PO uses the same way
        return ast.literal_eval(text)
    except (SyntaxError, ValueError) as error:
        raise PoError(f"{where}: {error}") from None


def entries(path):
    """The messages of a PO file: dicts of msgctxt, msgid, msgid_plural,
    msgstr (a list) and fuzzy; obsolete ones (#~) are skipped."""
    entry, key = {}, None
    with open(path, encoding="utf-8") as po:
        for number, raw in enumerate(po, 1):
            line, where = raw.strip(), f"{path}:{number}"
            if not line:
                continue
            if line.startswith("#"):
                if line.startswith("#,") and "fuzzy" in line:
                    if "msgid" in entry:
                        yield entry
                        entry, key = {}, None
                    entry["fuzzy"] = True
                continue
            word, _, rest = line.partition(" ")
            if word.startswith('"'):
                if key is None:
                    raise PoError(f"{where}: a string outside a message")
                add(entry, key, unquote(line, where))
                continue
            if word in ("msgctxt", "msgid") and "msgid" in entry:
                yield entry
                entry = {}
            key = word
            if not re.fullmatch(r"msgctxt|msgid|msgid_plural|msgstr(\[\d+\])?", key):
                raise PoError(f"{where}: unknown keyword {key!r}")
            add(entry, key, unquote(rest.strip(), where), new=True)
    if "msgid" in entry:
        yield entry


def add(entry, key, text, new=False):
    match = re.fullmatch(r"msgstr\[(\d+)\]", key)
    if match or key == "msgstr":
        index = int(match.group(1)) if match else 0
        strings = entry.setdefault("msgstr", [])
        while len(strings) <= index:
            strings.append("")
        strings[index] = text if new else strings[index] + text
    else:
        entry[key] = text if new else entry.get(key, "") + text


def header(text, path):
    fields = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
    language = fields.get("Language", "").strip()
    if not language:
        raise PoError(f"{path}: the header has no Language")
    plural = "n != 1"
    forms = fields.get("Plural-Forms", "")
    match = re.search(r"plural\s*=\s*([^;]+);?", forms)
    if match:
        plural = match.group(1).strip()
    if not PLURAL_RULE.match(plural):
        raise PoError(f"{path}: a Plural-Forms rule that is not an expression in n: {plural!r}")
    direction = "rtl" if language.split("_")[0] in RTL else "ltr"
    return language, plural, direction


def compile_po(path):
    messages, meta = {}, None
    for entry in entries(path):
        if entry["msgid"] == "" and "msgctxt" not in entry:
            meta = header(entry["msgstr"][0], path)
            continue
        strings = entry.get("msgstr", [])
        if entry.get("fuzzy") or not strings or not all(strings):
            continue
        key = entry["msgid"]
        if "msgctxt" in entry:
            key = entry["msgctxt"] + "\u0004" + key
        messages[key] = [entry.get("msgid_plural")] + strings
    if meta is None:
        raise PoError(f"{path}: no header (msgid \"\")")
    language, plural, direction = meta
    head = (f'"": {{"plural-forms": function (n) {{ return {plural}; }}, '
            f'"language": {json.dumps(language)}, "language-direction": "{direction}"}}')
    body = "".join(f",\n{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in messages.items())
    return f"cockpit.locale({{{head}{body}\n}});\n"


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    try:
        text = compile_po(argv[1])
    except (PoError, OSError, UnicodeDecodeError) as error:
        sys.exit(f"po2js: {error}")
    with open(argv[2], "w", encoding="utf-8") as out:
        out.write(text)


if __name__ == "__main__":
    main(sys.argv)
