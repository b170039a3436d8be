// Every word of the Cockpit page goes through cockpit.gettext: the scripts'
// through _(), N_() or cockpit.ngettext(), index.html's through elements
// marked translate="..." (page_words.js reads both). Run by node's own test
// runner (ctest: cockpit_strings, label unit).
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const words = require("./page_words.js");

function listed(findings) {
    return findings.map(u => `${u.file}:${u.line}: ${JSON.stringify(u.text)}: ${u.why}`).join("\n");
}

test("the page's scripts show no word that is not marked for translation", () => {
    const { words: marked, unmarked } = words.scanScripts();
    assert.ok(marked.length >= 80, `only ${marked.length} marked words: is the scanner reading the scripts?`);
    assert.equal(unmarked.length, 0, "unmarked words:\n" + listed(unmarked));
});

test("index.html shows no text or label outside translate=\"...\"", () => {
    const { words: marked, unmarked } = words.scanPage();
    assert.ok(marked.length >= 15, `only ${marked.length} marked words in index.html`);
    assert.equal(unmarked.length, 0, "unmarked words:\n" + listed(unmarked));
});

// The scanner itself: each kind of miss is caught, and code is not.
const context = words.pageContext();
const scan = text => words.scanScript("cockpit/sample.js", text, context);

test("an unmarked sentence or capitalised word is caught, with its line", () => {
    const { unmarked } = scan('const a = _("Fine");\nnode.textContent = "Trim later";\nlabel("Dismiss");\n');
    assert.deepEqual(unmarked.map(u => [u.line, u.text]), [[2, "Trim later"], [3, "Dismiss"]]);
});

test("marked words are found with their plural; template literals in a marker are refused", () => {
    const { words: marked, unmarked } = scan('_("One"); N_("Two"); cockpit.ngettext("$0 pass", "$0 passes", n);\n' +
                                             "_(`Three ${x}`);");
    assert.deepEqual(marked.map(w => [w.marker, w.text, w.plural]),
                     [["_", "One", undefined], ["N_", "Two", undefined], ["ngettext", "$0 pass", "$0 passes"]]);
    assert.equal(unmarked.length, 1);
    assert.match(unmarked[0].why, /template literal/);
});

test("code is not taken for words: names, bus members, classes, selectors, formats, regexps", () => {
    const { unmarked } = scan('"use strict";\nclient.call(p, "org.trimd.trimd1.Manager", "TakeOver", [], { type: "as" });\n' +
                              'el("div", { class: "btn btn-primary", role: "group" });\n' +
                              'document.querySelectorAll(".page-header [data-manage]");\n' +
                              'cockpit.format("$0 ($1, $2)", a, b, c); const r = /^failed: (.*)$/s; // "A comment"\n' +
                              '/* "Another comment" */ x = a / b / "c";');
    assert.equal(unmarked.length, 0, listed(unmarked));
});

test("in index.html, bare text, an unnamed label and markup inside a translated element are caught", () => {
    const { words: marked, unmarked } = words.scanHtml(
        '<p translate="yes">Good</p>\n<p>Bare text</p>\n<div aria-label="Unnamed"></div>\n' +
        '<p translate="yes">Has <b>bold</b></p>\n<p translate="yes">Two\n lines</p>\n' +
        '<div aria-label="Named" translate="aria-label"></div>\n<code>org.x</code>');
    assert.deepEqual(unmarked.map(u => u.line), [2, 3, 4, 5, 8]);
    assert.deepEqual(marked.map(w => w.text), ["Good", "Has bold", "Two\n lines", "Named"]);
});
