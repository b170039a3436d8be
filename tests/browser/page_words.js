// The words of the Cockpit page (cockpit/*.js, cockpit/index.html), read
// the way po/make_pot.py and cockpit.translate() read them, and the visible
// words that escape translation. Shared by test_strings.js and test_pot.js.
"use strict";

const fs = require("node:fs");
const path = require("node:path");

const TOP = path.join(__dirname, "..", "..");
const COCKPIT = path.join(TOP, "cockpit");
// What the scripts mark: _() and N_() take one word, ngettext() two.
const MARKERS = { _: 1, N_: 1, gettext: 1, ngettext: 2 };
// Members of other services' interfaces the page calls (systemd, polkit).
const OTHER_MEMBERS = ["StartUnit", "CheckAuthorization"];
// Tokens after which a slash starts a regular expression, not a division.
const BEFORE_REGEX = new Set(["(", ",", "=", ":", "[", "!", "&", "|", "?", "{", "}", ";", "return", ""]);

// The tokens of a script that matter here: strings (with their line),
// identifiers and punctuation; comments, regular expressions and numbers go.
function tokens(text) {
    const out = [];
    let i = 0;
    let line = 1;
    const last = () => (out.length ? out[out.length - 1].value : "");
    while (i < text.length) {
        const c = text[i];
        if (c === "\n") {
            line++;
            i++;
        } else if (/\s/.test(c)) {
            i++;
        } else if (text.startsWith("//", i)) {
            i = text.indexOf("\n", i);
            if (i < 0)
                i = text.length;
        } else if (text.startsWith("/*", i)) {
            const end = text.indexOf("*/", i + 2) + 2;
            line += (text.slice(i, end).match(/\n/g) || []).length;
            i = end;
        } else if (c === '"' || c === "'" || c === "`") {
            let j = i + 1;
            let value = "";
            while (j < text.length && text[j] !== c) {
                if (text[j] === "\\") {
                    value += JSON.parse('"' + (text[j + 1] === "'" ? "'" : text.slice(j, j + 2)) + '"');
                    j += 2;
                } else {
                    value += text[j++];
                }
            }
            out.push({ kind: "string", value, line, template: c === "`" });
            line += (text.slice(i, j).match(/\n/g) || []).length;
            i = j + 1;
        } else if (c === "/" && BEFORE_REGEX.has(last())) {
            let j = i + 1;
            let inClass = false;
            while (j < text.length && (text[j] !== "/" || inClass)) {
                if (text[j] === "\\")
                    j++;
                else if (text[j] === "[")
                    inClass = true;
                else if (text[j] === "]")
                    inClass = false;
                j++;
            }
            i = j + 1;
            while (/[a-z]/.test(text[i] || ""))
                i++;
            out.push({ kind: "regex", value: "/regex/", line });
        } else if (/[A-Za-z_$]/.test(c)) {
            const word = /^[A-Za-z0-9_$]+/.exec(text.slice(i))[0];
            out.push({ kind: "name", value: word, line });
            i += word.length;
        } else if (/[0-9]/.test(c)) {
            i += /^[0-9a-fA-FxXn._eE]+/.exec(text.slice(i))[0].length;
            out.push({ kind: "number", value: "0", line });
        } else {
            out.push({ kind: "punct", value: c, line });
            i++;
        }
    }
    return out;
}

// The marker a string at `index` is an argument of (its position within the
// marker's words), or null.
function markerOf(list, index) {
    for (let position = 0; position < 2; position++) {
        const open = index - 1 - 2 * position;
        const name = list[open - 1];
        if (list[open] && list[open].value === "(" && name && name.kind === "name" &&
            MARKERS[name.value] > position)
            return { marker: name.value, position };
        if (!list[index - 1 - 2 * position] || list[index - 2 - 2 * position]?.kind !== "string" ||
            list[index - 1 - 2 * position].value !== ",")
            return null;
    }
    return null;
}

function cssClasses() {
    const css = fs.readFileSync(path.join(COCKPIT, "trimd.css"), "utf8");
    return new Set(Array.from(css.matchAll(/\.([a-z][a-z0-9-]*)/g), m => m[1]));
}

function busMembers() {
    const xml = fs.readFileSync(path.join(TOP, "daemon", "dbus", "org.trimd.trimd1.xml"), "utf8");
    const names = Array.from(xml.matchAll(/<(?:method|signal|property) name="([A-Za-z]+)"/g), m => m[1]);
    return new Set(names.concat(OTHER_MEMBERS));
}

// Why a string left unmarked would be a word people read, or null when it
// is code: no letters (numbers, punctuation, $0), a name without spaces that
// is not a capitalised word (a D-Bus member is), or class names of trimd.css
// (also as a selector, with [attribute]s).
// A lower-case single word ("never") cannot be told from a name ("system"):
// that is the one kind of word this does not catch.
function visibleWord(value, context) {
    if (!/[A-Za-z]/.test(value.replace(/\$[0-9]+/g, "")))
        return null;
    if (!/\s/.test(value)) {
        if (/^[A-Z][a-z]+([A-Z][a-z]*)*$/.test(value) && !context.members.has(value))
            return "a capitalised word that names no D-Bus member";
        return null;
    }
    const classes = value.trim().split(/\s+/);
    const isClass = name => context.classes.has(name.replace(/^\./, "")) || /^\[[a-z-]+\]$/.test(name) ||
        (name.endsWith("-") && Array.from(context.classes).some(c => c.startsWith(name)));
    if (classes.every(isClass))
        return null;
    return "words with spaces that are not class names of trimd.css";
}

// A script's marked words ({ file, line, marker, text, plural }) and its
// unmarked visible words ({ file, line, text, why }).
function scanScript(file, text, context) {
    const list = tokens(text);
    const words = [];
    const unmarked = [];
    list.forEach((token, index) => {
        if (token.kind !== "string")
            return;
        const where = { file: path.relative(TOP, file), line: token.line };
        const mark = markerOf(list, index);
        if (mark && token.template) {
            unmarked.push({ ...where, text: token.value, why: "a template literal cannot be extracted" });
        } else if (mark && mark.position === 0) {
            const word = { ...where, marker: mark.marker, text: token.value };
            if (mark.marker === "ngettext")
                word.plural = list[index + 2] && list[index + 2].value;
            words.push(word);
        } else if (!mark && !(token.value === "use strict" && index === 0)) {
            const why = visibleWord(token.value, context);
            if (why)
                unmarked.push({ ...where, text: token.value, why });
        }
    });
    return { words, unmarked };
}

function pageContext() {
    return { classes: cssClasses(), members: busMembers() };
}

function scripts() {
    return fs.readdirSync(COCKPIT).filter(name => name.endsWith(".js")).sort()
            .map(name => path.join(COCKPIT, name));
}

// Every script of the page.
function scanScripts() {
    const context = pageContext();
    const result = { words: [], unmarked: [] };
    for (const file of scripts()) {
        const { words, unmarked } = scanScript(file, fs.readFileSync(file, "utf8"), context);
        result.words.push(...words);
        result.unmarked.push(...unmarked);
    }
    return result;
}

// Attributes people read (as labels, tooltips or placeholders).
const READ_ATTRIBUTES = ["aria-label", "title", "alt", "placeholder", "aria-description"];
const VOID = new Set(["meta", "link", "input", "br", "img", "hr", "area", "base", "col", "source", "wbr"]);

// The page's words as cockpit.translate() finds them, and every piece of
// text or read attribute it would miss.
function scanHtml(text, file) {
    const name = file || "cockpit/index.html";
    const words = [];
    const unmarked = [];
    const open = [];
    let line = 1;
    const body = text.replace(/<!--[\s\S]*?-->/g, comment => comment.replace(/[^\n]/g, " "));
    for (const part of body.split(/(<[^>]*>)/)) {
        if (part.startsWith("<!")) {
            // doctype
        } else if (part.startsWith("</")) {
            const element = open.pop();
            if (element && element.translate && element.text) {
                const value = element.text;
                if (value !== value.trim() || value.includes("\n"))
                    unmarked.push({ file: name, line: element.line, text: value,
                                    why: "a translated text must be one line without outer spaces" });
                words.push({ file: name, line: element.line, text: value });
            }
        } else if (part.startsWith("<")) {
            const tag = /^<([a-zA-Z0-9]+)/.exec(part)[1].toLowerCase();
            const attrs = Object.fromEntries(Array.from(part.matchAll(/([a-zA-Z-]+)(?:="([^"]*)")?/g))
                    .slice(1).map(m => [m[1].toLowerCase(), m[2] === undefined ? "" : m[2]]));
            const named = (attrs.translate || "").split(/\s+/);
            for (const attribute of READ_ATTRIBUTES) {
                if (!/[A-Za-z]/.test(attrs[attribute] || ""))
                    continue;
                if (named.includes(attribute))
                    words.push({ file: name, line, text: attrs[attribute] });
                else
                    unmarked.push({ file: name, line, text: attrs[attribute],
                                    why: `${attribute} not named in translate="..."` });
            }
            if (open.some(element => element.translate))
                unmarked.push({ file: name, line, text: part,
                                why: "an element inside a translated one: cockpit.translate() replaces its text" });
            if (!VOID.has(tag) && !part.endsWith("/>"))
                open.push({ tag, line, text: "", translate: named.includes("yes") });
        } else {
            const translated = open.findLast(element => element.translate);
            if (translated)
                translated.text += part;
            else if (/[A-Za-z]/.test(part))
                unmarked.push({ file: name, line, text: part.trim(), why: "text outside translate=\"yes\"" });
        }
        line += (part.match(/\n/g) || []).length;
    }
    return { words, unmarked };
}

function scanPage() {
    const file = path.join(COCKPIT, "index.html");
    return scanHtml(fs.readFileSync(file, "utf8"), path.relative(TOP, file));
}

module.exports = { TOP, tokens, scanScript, scanScripts, scanHtml, scanPage, pageContext };
