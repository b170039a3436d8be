/* trimd's Cockpit page: numbers and states in words.
 * Pure functions, no DOM and no bus: the page (trimd.js) and the chart
 * (chart.js) share them. Timestamps are microseconds since the epoch, as on
 * the bus (0 = never); sizes are bytes. */
"use strict";

(function (exports) {
    const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

    // 1536 -> "1.5 KiB": powers of 1024, as trimctl prints them.
    function bytes(n) {
        let value = Number(n) || 0;
        let unit = 0;
        while (value >= 1024 && unit < UNITS.length - 1) {
            value /= 1024;
            unit++;
        }
        const digits = unit === 0 || value >= 100 ? 0 : 1;
        return value.toFixed(digits) + " " + UNITS[unit];
    }

    // A span in microseconds -> "850 ms", "4.2 s", "3 min 5 s", "2 h 10 min", "3 d 4 h".
    function duration(usec) {
        const ms = Number(usec) / 1000;
        if (ms < 1000)
            return Math.round(ms) + " ms";
        const s = ms / 1000;
        if (s < 60)
            return (s < 10 ? s.toFixed(1) : Math.round(s)) + " s";
        const parts = [[86400, "d"], [3600, "h"], [60, "min"], [1, "s"]];
        let rest = Math.round(s);
        const words = [];
        for (const [size, name] of parts) {
            if (rest >= size && words.length < 2) {
                words.push(Math.floor(rest / size) + " " + name);
                rest %= size;
            } else if (words.length > 0) {
                break;
            }
        }
        return words.join(" ");
    }

    const RELATIVE_STEPS = [[60, "second"], [3600, "minute"], [86400, "hour"],
        [7 * 86400, "day"], [30 * 86400, "week"], [365 * 86400, "month"], [Infinity, "year"]];
    const SECONDS_PER = { second: 1, minute: 60, hour: 3600, day: 86400, week: 7 * 86400,
                          month: 30 * 86400, year: 365 * 86400 };

    // A timestamp relative to now: "3 minutes ago", "in 2 days"; "never" for 0.
    function relative(usec, nowMs) {
        if (!usec)
            return "never";
        const deltaS = (Number(usec) / 1000 - nowMs) / 1000;
        const size = Math.abs(deltaS);
        let unit = "second";
        for (const [limit, name] of RELATIVE_STEPS) {
            unit = name;
            if (size < limit)
                break;
        }
        if (size < 10)
            return deltaS < 0 ? "just now" : "now";
        const format = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
        return format.format(Math.round(deltaS / SECONDS_PER[unit]), unit);
    }

    // An absolute timestamp for tooltips: the browser's locale and time zone.
    function when(usec) {
        return usec ? new Date(Number(usec) / 1000).toLocaleString() : "never";
    }

    // The page's words for each key of WaitingFor: the keys are trimd's list
    // (to_string(WaitingFor), lib/engine/manager.hpp), and
    // tests/unit/test_waiting_for.cpp fails when this table has one too few
    // or too many.
    const WAITING_WORDS = {
        disks_busy: "its disks are busy",
        outside_window: "outside its time window",
        disk_shared: "another filesystem on the same disk is being trimmed",
        paused: "until resumed",
        retry: "its device went away mid-pass; looking again shortly",
        fleet_slot: "a slot of its shared backend (every slot is held elsewhere)",
        due: "due: it starts at the next chance",
        pacing: "its duty budget: a pause after each chunk keeps discards to a share of the time",
    };

    const STATE_TITLES = {
        waiting: "Waiting",
        scheduled: "Scheduled",
        trimming: "Trimming",
        paused: "Paused",
        unsupported: "Not supported",
        disabled: "Disabled",
        error: "Error",
    };

    // The state's title, as a badge: "Waiting", "Trimming", ...
    function stateTitle(state) {
        return STATE_TITLES[state] || (state ? state : "Unknown");
    }

    // Why a filesystem is in its state, in words: the bus's StateReason when
    // it says something, else what WaitingFor means, else nothing.
    function stateWhy(fs) {
        if (fs.StateReason)
            return fs.StateReason;
        if (fs.WaitingFor)
            return WAITING_WORDS[fs.WaitingFor] || "waiting (" + fs.WaitingFor + ")";
        if (fs.State === "disabled")
            return "disabled by the policy";
        if (fs.State === "unsupported")
            return "its device does not support discard";
        return "";
    }

    // "sync", "async (btrfs)", "none"; with what trimd did about it.
    function discard(fs) {
        const mode = fs.DiscardMode === "sync" ? "inline (sync)"
            : fs.DiscardMode === "async" ? "async" : "none";
        const takeover = {
            "taken-over": "taken over by trimd",
            inline: "left on (trimd advises against it)",
            ignored: "left on by policy",
            "not-possible": "cannot be taken over",
            failed: "takeover failed",
        }[fs.Takeover];
        return takeover ? mode + ", " + takeover : mode;
    }

    // "1 pass", "3 passes".
    function count(n, one, many) {
        return (Number(n) || 0) + " " + (Number(n) === 1 ? one : many);
    }

    // An org.trimd.trimd1.Error.X (or any D-Bus error) in words for people.
    function error(ex) {
        const name = (ex && ex.name) || "";
        const message = (ex && ex.message) || String(ex);
        if (name.endsWith(".AccessDenied") || name === "org.freedesktop.DBus.Error.AccessDenied")
            return "Not allowed: changing trimd needs administrative access " +
                "(root, or polkit's org.trimd.trimd1.manage).";
        if (name.endsWith(".Busy"))
            return "trimd is busy; try again shortly. " + message;
        if (name.endsWith(".ConfigInvalid"))
            return "The policy file has an error; the old policy stays in force. " + message;
        if (name.endsWith(".NotSupported"))
            return "Not possible: " + message;
        if (name.endsWith(".NotFound"))
            return "Not found: " + message;
        if (name === "org.freedesktop.DBus.Error.ServiceUnknown" ||
            name === "org.freedesktop.DBus.Error.NameHasNoOwner")
            return "trimd is not running.";
        return message;
    }

    exports.bytes = bytes;
    exports.duration = duration;
    exports.relative = relative;
    exports.when = when;
    exports.stateTitle = stateTitle;
    exports.stateWhy = stateWhy;
    exports.discard = discard;
    exports.error = error;
    exports.count = count;
}(window.trimdFormat = {}));
