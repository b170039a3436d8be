// The translation template and the translations' way to the page: po/make_pot.py
// makes trimd.pot from the page's sources (xgettext and the page's
// translate="..." elements), and po/po2js.py compiles a translation into the
// po.LANG.js Cockpit serves as the page's po.js. Run by node's own test runner
// (ctest: cockpit_pot, label unit; needs python3 and Debian's gettext).
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const vm = require("node:vm");
const { spawnSync } = require("node:child_process");
const words = require("./page_words.js");

const work = fs.mkdtempSync(path.join(os.tmpdir(), "trimd-pot-"));
process.on("exit", () => fs.rmSync(work, { recursive: true, force: true }));

function python(script, ...args) {
    return spawnSync("python3", [path.join(words.TOP, "po", script), ...args], { encoding: "utf8" });
}

// The messages of a PO file: { context, id, plural, strings, fuzzy }.
function readPo(text) {
    const messages = [];
    let message = null;
    let field = null;
    for (const line of text.split("\n")) {
        const keyword = /^(msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?) (".*")$/.exec(line);
        if (keyword) {
            if ((keyword[1] === "msgid" && !(message && message.idOpen)) || keyword[1] === "msgctxt") {
                message = { strings: [], idOpen: keyword[1] === "msgctxt" };
                messages.push(message);
            }
            field = keyword[1];
            if (field === "msgid")
                message.idOpen = false;
            set(message, field, JSON.parse(keyword[2]), true);
        } else if (/^".*"$/.test(line) && message) {
            set(message, field, JSON.parse(line), false);
        }
    }
    return messages.filter(m => m.id !== "" || m.context !== undefined);
}

function set(message, field, text, fresh) {
    const name = { msgctxt: "context", msgid: "id", msgid_plural: "plural" }[field];
    if (name) {
        message[name] = (fresh ? "" : message[name]) + text;
    } else {
        const index = Number((/\[(\d+)\]/.exec(field) || [0, 0])[1]);
        message.strings[index] = (fresh ? "" : message.strings[index]) + text;
    }
}

function makePot() {
    const pot = path.join(work, "trimd.pot");
    const result = python("make_pot.py", "--source-dir", words.TOP, "--version", "0", "--output", pot);
    assert.equal(result.status, 0, result.stderr);
    return fs.readFileSync(pot, "utf8");
}

// Runs a po.js as the page would, against cockpit.locale().
function loadPoJs(file) {
    let dictionary = null;
    vm.runInNewContext(fs.readFileSync(file, "utf8"), { cockpit: { locale: d => { dictionary = d } } });
    return dictionary;
}

const pot = readPo(makePot());

test("the template holds every marked word of the page and no other", () => {
    const page = words.scanScripts().words.concat(words.scanPage().words);
    const expected = new Set(page.map(w => w.text).concat(page.filter(w => w.plural).map(w => w.plural)));
    const found = new Set(pot.map(m => m.id).concat(pot.filter(m => m.plural).map(m => m.plural)));
    assert.deepEqual([...expected].filter(w => !found.has(w)), [], "in the page, not in trimd.pot");
    assert.deepEqual([...found].filter(w => !expected.has(w)), [], "in trimd.pot, not in the page");
    assert.ok(found.has("Trim all now") && found.has("its disks are busy") && found.has("Every filesystem"));
});

test("a plural word keeps its plural in the template", () => {
    const passes = pot.find(m => m.id === "$0 pass");
    assert.ok(passes, "no \"$0 pass\" in trimd.pot");
    assert.equal(passes.plural, "$0 passes");
    assert.equal(passes.strings.length, 2);
});

test("a translation of the whole template compiles to a po.js that Cockpit's locale() takes", () => {
    const header = 'msgid ""\nmsgstr ""\n"Language: xx\\n"\n"Plural-Forms: nplurals=2; plural=(n != 1);\\n"\n\n';
    const quote = text => JSON.stringify(text);
    const body = pot.map(m => {
        const id = `msgid ${quote(m.id)}\n`;
        if (m.plural)
            return id + `msgid_plural ${quote(m.plural)}\nmsgstr[0] ${quote("«" + m.id)}\nmsgstr[1] ${quote("«" + m.plural)}\n`;
        return id + `msgstr ${quote("«" + m.id)}\n`;
    }).join("\n");
    fs.writeFileSync(path.join(work, "xx.po"), header + body);
    const result = python("po2js.py", path.join(work, "xx.po"), path.join(work, "po.xx.js"));
    assert.equal(result.status, 0, result.stderr);
    const dictionary = loadPoJs(path.join(work, "po.xx.js"));
    assert.equal(dictionary[""].language, "xx");
    assert.equal(dictionary[""]["plural-forms"](1), false);
    assert.equal(dictionary[""]["plural-forms"](2), true);
    for (const m of pot) {
        const expected = m.plural ? [m.plural, "«" + m.id, "«" + m.plural] : [null, "«" + m.id];
        assert.deepEqual(Array.from(dictionary[m.id] || []), expected, m.id);
    }
});

test("fuzzy and untranslated messages stay English; a context and escapes are kept as Cockpit looks them up", () => {
    fs.writeFileSync(path.join(work, "yy.po"), [
        'msgid ""', 'msgstr ""', '"Language: he\\n"', '',
        '#, fuzzy', 'msgid "Pause"', 'msgstr "guess"', '',
        'msgid "Resume"', 'msgstr ""', '',
        'msgctxt "state"', 'msgid "Paused"', 'msgstr "p"', '',
        'msgid ""', '"a \\"quoted\\"\\n"', '"word"', 'msgstr "q\\tq"', '',
        '#~ msgid "Old"', '#~ msgstr "o"', ''].join("\n"));
    const result = python("po2js.py", path.join(work, "yy.po"), path.join(work, "po.yy.js"));
    assert.equal(result.status, 0, result.stderr);
    const dictionary = loadPoJs(path.join(work, "po.yy.js"));
    assert.deepEqual(Object.keys(dictionary).sort(), ["", "a \"quoted\"\nword", "state\u0004Paused"]);
    assert.deepEqual(Array.from(dictionary["a \"quoted\"\nword"]), [null, "q\tq"]);
    assert.equal(dictionary[""]["language-direction"], "rtl");
});

test("a Plural-Forms rule that is not an expression in n is refused, naming the file", () => {
    const file = path.join(work, "zz.po");
    fs.writeFileSync(file, 'msgid ""\nmsgstr ""\n"Language: zz\\n"\n"Plural-Forms: nplurals=2; plural=alert(1);\\n"\n');
    const result = python("po2js.py", file, path.join(work, "po.zz.js"));
    assert.notEqual(result.status, 0);
    assert.match(result.stderr, /zz\.po.*Plural-Forms/);
    assert.equal(fs.existsSync(path.join(work, "po.zz.js")), false);
});
