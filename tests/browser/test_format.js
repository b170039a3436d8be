// Unit tests of the Cockpit page's words (cockpit/format.js): pure
// functions, run by node's own test runner (ctest: cockpit_format, label unit).
// Sizes are Cockpit's cockpit.format_bytes and times the browser's Intl:
// what is tested here is what stays the page's own (which unit, which
// words, in which language), against a stand-in for cockpit.js.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

// cockpit.js as far as format.js uses it. `translations` maps an English
// msgid to its translation, as a po.js would (cockpit.locale).
function fakeCockpit(options) {
    const { language = "en", translations = {} } = options || {};
    const calls = { format_bytes: [] };
    const cockpit = {
        language,
        gettext: (msgid) => translations[msgid] || msgid,
        ngettext: (one, many, n) => translations[n === 1 ? one : many] || (n === 1 ? one : many),
        noop: (msgid) => msgid,
        format: (pattern, ...args) => pattern.replace(/\$([0-9]+)/g, (m, i) => String(args[i])),
        format_number: (n) => String(n),
        format_bytes: (n, factor) => {
            calls.format_bytes.push([n, factor]);
            return `${n / factor ** Math.floor(Math.log(n) / Math.log(factor))} x${factor}`;
        },
    };
    return { cockpit, calls };
}

function loadFormat(options) {
    const file = path.join(__dirname, "..", "..", "cockpit", "format.js");
    const { cockpit, calls } = fakeCockpit(options);
    const context = { window: {}, cockpit, Intl, Date };
    vm.runInNewContext(fs.readFileSync(file, "utf8"), context, { filename: file });
    return { f: context.window.trimdFormat, calls };
}

const { f, calls } = loadFormat();
const MIN = 60e6; // a minute in microseconds

test("sizes from 1 KiB up are Cockpit's, in powers of 1024", () => {
    calls.format_bytes.length = 0;
    assert.equal(f.bytes(1536), "1.5 x1024");
    assert.equal(f.bytes(5 * 1024 ** 4), "5 x1024");
    assert.deepEqual(calls.format_bytes, [[1536, 1024], [5 * 1024 ** 4, 1024]]);
});

test("sizes below 1 KiB are bytes, which Cockpit 287 leaves without a unit", () => {
    calls.format_bytes.length = 0;
    assert.equal(f.bytes(0), "0 B");
    assert.equal(f.bytes(undefined), "0 B");
    assert.equal(f.bytes(1023), "1023 B");
    assert.deepEqual(calls.format_bytes, []);
});

test("durations name at most two units", () => {
    assert.equal(f.duration(850e3), "850 ms");
    assert.equal(f.duration(4.25e6), "4.3 sec");
    assert.equal(f.duration(42e6), "42 sec");
    assert.equal(f.duration(3 * MIN + 5e6), "3 min 5 sec");
    assert.equal(f.duration(26 * 60 * MIN + 10 * MIN), "1 day 2 hr");
    assert.equal(f.duration(2 * 60 * MIN), "2 hr");
});

test("times are relative to now, and 0 is never", () => {
    const now = Date.UTC(2026, 11, 2, 12, 0, 0);
    assert.equal(f.relative(0, now), "never");
    assert.equal(f.relative((now - 3 * 60e3) * 1000, now), "3 minutes ago");
    assert.equal(f.relative((now + 2 * 86400e3) * 1000, now), "in 2 days");
    assert.equal(f.relative((now - 2e3) * 1000, now), "just now");
    assert.equal(f.relative((now + 2e3) * 1000, now), "now");
    assert.equal(f.when(0), "never");
    assert.match(f.when(now * 1000), /2026/);
});

test("numbers and times follow the page's language, cockpit.language", () => {
    const { f: de } = loadFormat({ language: "de" });
    const now = Date.UTC(2026, 11, 2, 12, 0, 0);
    assert.equal(de.locale(), "de");
    assert.equal(de.relative((now - 3 * 60e3) * 1000, now), "vor 3 Minuten");
    assert.equal(de.percent(0.42), "42\u00a0%");
    assert.equal(de.duration(4.25e6), "4,3 Sek.");
    assert.equal(loadFormat({ language: "pt_BR" }).f.locale(), "pt-BR");
    assert.equal(loadFormat({ language: "ca@valencia" }).f.locale(), "en");
});

test("the why of a state is trimd's StateReason when it gives one", () => {
    assert.equal(f.stateWhy({ State: "waiting", WaitingFor: "disks_busy",
                              StateReason: "disk sdb: IOPS above max_iops" }),
                 "disk sdb: IOPS above max_iops");
    assert.equal(f.stateWhy({ State: "waiting", WaitingFor: "fleet_slot",
                              StateReason: "pool-a: 2/2 slots held by web3:/srv, db1:/var" }),
                 "pool-a: 2/2 slots held by web3:/srv, db1:/var");
});

test("without a StateReason, WaitingFor says why in words, an unknown key too", () => {
    assert.equal(f.stateWhy({ State: "waiting", WaitingFor: "outside_window", StateReason: "" }),
                 "outside its time window");
    assert.equal(f.stateWhy({ State: "waiting", WaitingFor: "new_key", StateReason: "" }),
                 "waiting (new_key)");
    assert.equal(f.stateWhy({ State: "disabled", WaitingFor: "", StateReason: "" }),
                 "disabled by the policy");
    assert.equal(f.stateWhy({ State: "scheduled", WaitingFor: "", StateReason: "" }), "");
});

test("discard says the mode and what trimd did about it", () => {
    assert.equal(f.discard({ DiscardMode: "", Takeover: "none" }), "none");
    assert.equal(f.discard({ DiscardMode: "sync", Takeover: "inline" }),
                 "inline (sync), left on (trimd advises against it)");
    assert.equal(f.discard({ DiscardMode: "", Takeover: "taken-over" }), "none, taken over by trimd");
});

test("a pass's result is in words, a failure with trimd's reason", () => {
    assert.equal(f.result("cancelled"), "cancelled");
    assert.equal(f.result("failed: Input/output error"), "failed: Input/output error");
    assert.equal(f.result("newer_result"), "newer_result");
});

test("an AccessDenied is said in words, never as the error's name", () => {
    const words = f.error({ name: "org.trimd.trimd1.Error.AccessDenied", message: "denied" });
    assert.match(words, /^Not allowed: changing trimd needs administrative access/);
    assert.doesNotMatch(words, /org\.trimd\.trimd1\.Error/);
});

test("a broken policy keeps trimd's message with file, line and column", () => {
    const words = f.error({ name: "org.trimd.trimd1.Error.ConfigInvalid",
                            message: "/etc/trimd/trimd.toml:3:1: unknown key" });
    assert.match(words, /old policy stays in force/);
    assert.match(words, /trimd\.toml:3:1/);
});

test("counts agree with their noun, through ngettext", () => {
    assert.equal(f.passes(1), "1 pass");
    assert.equal(f.passes(0), "0 passes");
    assert.equal(f.passes(undefined), "0 passes");
    assert.equal(f.preempted(2), "2 chunks preempted by foreground I/O");
});

test("every word, the WaitingFor table's too, is looked up in the translation", () => {
    const translations = {
        "its disks are busy": "seine Platten sind beschäftigt",
        Waiting: "Wartet",
        "cancelled": "abgebrochen",
        "$0 pass": "$0 Durchgang",
        "$0 passes": "$0 Durchgänge",
        "Not found: $0": "Nicht gefunden: $0",
        "$0, $1": "$0; $1",
        none: "keins",
        "taken over by trimd": "von trimd übernommen",
    };
    const { f: de } = loadFormat({ language: "de", translations });
    assert.equal(de.stateWhy({ State: "waiting", WaitingFor: "disks_busy", StateReason: "" }),
                 "seine Platten sind beschäftigt");
    assert.equal(de.stateTitle("waiting"), "Wartet");
    assert.equal(de.result("cancelled"), "abgebrochen");
    assert.equal(de.passes(3), "3 Durchgänge");
    assert.equal(de.passes(1), "1 Durchgang");
    assert.equal(de.error({ name: "org.trimd.trimd1.Error.NotFound", message: "/srv" }), "Nicht gefunden: /srv");
    assert.equal(de.discard({ DiscardMode: "", Takeover: "taken-over" }), "keins; von trimd übernommen");
});
