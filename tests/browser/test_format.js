// Unit tests of the Cockpit page's words (cockpit/format.js): pure
// functions, run by node's own test runner (ctest: cockpit_format, label unit).
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

function loadFormat() {
    const file = path.join(__dirname, "..", "..", "cockpit", "format.js");
    const context = { window: {}, Intl, Date };
    vm.runInNewContext(fs.readFileSync(file, "utf8"), context, { filename: file });
    return context.window.trimdFormat;
}

const f = loadFormat();
const MIN = 60e6; // a minute in microseconds

test("bytes are written in powers of 1024, as trimctl prints them", () => {
    assert.equal(f.bytes(0), "0 B");
    assert.equal(f.bytes(1536), "1.5 KiB");
    assert.equal(f.bytes(241067008), "230 MiB");
    assert.equal(f.bytes(5 * 1024 ** 4), "5.0 TiB");
});

test("durations name at most two units", () => {
    assert.equal(f.duration(850e3), "850 ms");
    assert.equal(f.duration(4.25e6), "4.3 s");
    assert.equal(f.duration(42e6), "42 s");
    assert.equal(f.duration(3 * MIN + 5e6), "3 min 5 s");
    assert.equal(f.duration(26 * 60 * MIN + 10 * MIN), "1 d 2 h");
});

test("times are relative to now, and 0 is never", () => {
    const now = Date.UTC(2026, 11, 2, 12, 0, 0);
    assert.equal(f.relative(0, now), "never");
    assert.equal(f.relative((now - 3 * 60e3) * 1000, now), "3 minutes ago");
    assert.equal(f.relative((now + 2 * 86400e3) * 1000, now), "in 2 days");
    assert.equal(f.relative((now - 2e3) * 1000, now), "just now");
});

test("the why of a state is trimd's StateReason when it gives one", () => {
    assert.equal(f.stateWhy({ State: "waiting", WaitingFor: "disks_busy",
                              StateReason: "disk sdb: IOPS above max_iops" }),
                 "disk sdb: IOPS above max_iops");
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

test("counts agree with their noun", () => {
    assert.equal(f.count(1, "pass", "passes"), "1 pass");
    assert.equal(f.count(0, "pass", "passes"), "0 passes");
    assert.equal(f.count(undefined, "pass", "passes"), "0 passes");
});
