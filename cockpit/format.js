/* trimd's Cockpit page: numbers and states in words.
 * Pure functions, no DOM and no bus: the page (trimd.js) and the chart
 * (chart.js) share them. Timestamps are microseconds since the epoch, as on
 * the bus (0 = never); sizes are bytes. Every word goes through
 * cockpit.gettext (po/, docs/cockpit.md); sizes are Cockpit's
 * cockpit.format_bytes, times and numbers the browser's Intl in the page's
 * language (cockpit.language, set by a translation's po.js). */
"use strict";

(function (exports) {
    const _ = cockpit.gettext;
    const N_ = cockpit.noop; // marks a word for the template; translated where shown

    // The page's language as a BCP 47 tag for Intl ("pt_BR" -> "pt-BR").
    function locale() {
        const tag = String(cockpit.language || "en").replace("_", "-");
        try {
            return Intl.getCanonicalLocales(tag)[0];
        } catch { // a name Intl does not know: English, as the page
            return "en";
        }
    }

    // 1536 -> "1.50 KiB": Cockpit's powers of 1024, which stop at KiB; below
    // it Cockpit 287 gives the number alone, so the bytes are named here.
    function bytes(n) {
        const value = Number(n) || 0;
        if (value < 1024)
            return cockpit.format(_("$0 B"), cockpit.format_number(value));
        const text = cockpit.format_bytes(value, 1024);
        return Array.isArray(text) ? text.join(" ") : text;
    }

    function unit(value, name, digits) {
        return new Intl.NumberFormat(locale(), { style: "unit", unit: name, unitDisplay: "short",
                                                 minimumFractionDigits: digits || 0,
                                                 maximumFractionDigits: digits || 0 }).format(value);
    }

    const DURATION_PARTS = [[86400, "day"], [3600, "hour"], [60, "minute"], [1, "second"]];

    // A span in microseconds, at most two units: "850 ms", "4.2 sec",
    // "3 min 5 sec", "2 hr 10 min", "3 days 4 hr" (in English).
    function duration(usec) {
        const ms = Number(usec) / 1000 || 0;
        if (ms < 1000)
            return unit(Math.round(ms), "millisecond");
        const s = ms / 1000;
        if (s < 60)
            return s < 10 ? unit(s, "second", 1) : unit(Math.round(s), "second");
        let rest = Math.round(s);
        const parts = [];
        for (const [size, name] of DURATION_PARTS) {
            if (rest >= size && parts.length < 2) {
                parts.push(unit(Math.floor(rest / size), name));
                rest %= size;
            } else if (parts.length > 0) {
                break;
            }
        }
        return new Intl.ListFormat(locale(), { type: "unit", style: "narrow" }).format(parts);
    }

    const RELATIVE_STEPS = [[60, "second"], [3600, "minute"], [86400, "hour"],
        [7 * 86400, "day"], [30 * 86400, "week"], [365 * 86400, "month"], [Infinity, "year"]];
    const SECONDS_PER = {
        second: 1, minute: 60, hour: 3600, day: 86400, week: 7 * 86400,
        month: 30 * 86400, year: 365 * 86400,
    };

    // A timestamp relative to now: "3 minutes ago", "in 2 days"; within 10
    // seconds "just now" or "now"; "never" for 0.
    function relative(usec, nowMs) {
        if (!usec)
            return _("never");
        const deltaS = (Number(usec) / 1000 - nowMs) / 1000;
        const size = Math.abs(deltaS);
        let name = "second";
        for (const [limit, step] of RELATIVE_STEPS) {
            name = step;
            if (size < limit)
                break;
        }
        if (size < 10)
            return deltaS < 0 ? _("just now") : _("now");
        const format = new Intl.RelativeTimeFormat(locale(), { numeric: "auto" });
        return format.format(Math.round(deltaS / SECONDS_PER[name]), name);
    }

    // An absolute timestamp for tooltips and the history table.
    function when(usec) {
        if (!usec)
            return _("never");
        return new Intl.DateTimeFormat(locale(), { dateStyle: "medium", timeStyle: "medium" })
                .format(new Date(Number(usec) / 1000));
    }

    // A short date for the chart's axis: month, day, hour and minute.
    function shortDate(usec) {
        return new Intl.DateTimeFormat(locale(), { month: "numeric", day: "numeric", hour: "numeric",
                                                   minute: "2-digit" })
                .format(new Date(Number(usec) / 1000));
    }

    // 0.42 -> "42%".
    function percent(fraction) {
        return new Intl.NumberFormat(locale(), { style: "percent" }).format(fraction);
    }

    // The page's words for each key of WaitingFor: the keys are trimd's list
    // (to_string(WaitingFor), lib/engine/manager.hpp), and
    // tests/unit/test_waiting_for.cpp fails when this table has one too few
    // or too many.
    const WAITING_WORDS = {
        disks_busy: N_("its disks are busy"),
        outside_window: N_("outside its time window"),
        disk_shared: N_("another filesystem on the same disk is being trimmed"),
        paused: N_("until resumed"),
        retry: N_("its device went away mid-pass; looking again shortly"),
        fleet_slot: N_("a slot of its shared backend (every slot is held elsewhere)"),
        on_battery: N_("AC power (the machine runs on battery)"),
        due: N_("due: it starts at the next chance"),
        pacing: N_("its duty budget: a pause after each chunk keeps discards to a share of the time"),
    };

    const STATE_TITLES = {
        waiting: N_("Waiting"),
        scheduled: N_("Scheduled"),
        trimming: N_("Trimming"),
        paused: N_("Paused"),
        unsupported: N_("Not supported"),
        disabled: N_("Disabled"),
        error: N_("Error"),
    };

    // The Manager's State in words.
    const MANAGER_STATES = {
        idle: N_("idle"),
        trimming: N_("trimming"),
        paused: N_("all paused"),
    };

    // A pass's LastResult in words ('failed: reason' keeps trimd's reason).
    const RESULTS = {
        success: N_("success"),
        cancelled: N_("cancelled"),
        unsupported: N_("unsupported"),
    };

    const TAKEOVER_WORDS = {
        "taken-over": N_("taken over by trimd"),
        inline: N_("left on (trimd advises against it)"),
        ignored: N_("left on by policy"),
        "not-possible": N_("cannot be taken over"),
        failed: N_("takeover failed"),
    };

    // A word of a table, translated; a key the table lacks (newer trimd) as it is.
    function word(table, key) {
        return Object.hasOwn(table, key) ? _(table[key]) : key;
    }

    // The state's title, as a badge: "Waiting", "Trimming", ...
    function stateTitle(state) {
        return state ? word(STATE_TITLES, state) : _("Unknown");
    }

    function managerState(state) {
        return word(MANAGER_STATES, state);
    }

    function result(text) {
        const failed = /^failed: (.*)$/s.exec(text || "");
        return failed ? cockpit.format(_("failed: $0"), failed[1]) : word(RESULTS, text);
    }

    // Why a filesystem is in its state, in words: the bus's StateReason when
    // it says something, else what WaitingFor means, else nothing.
    function stateWhy(fs) {
        if (fs.StateReason)
            return fs.StateReason;
        if (fs.WaitingFor) {
            return Object.hasOwn(WAITING_WORDS, fs.WaitingFor) ? _(WAITING_WORDS[fs.WaitingFor])
                : cockpit.format(_("waiting ($0)"), fs.WaitingFor);
        }
        if (fs.State === "disabled")
            return _("disabled by the policy");
        if (fs.State === "unsupported")
            return _("its device does not support discard");
        return "";
    }

    // "inline (sync)", "async", "none"; with what trimd did about it.
    function discard(fs) {
        const mode = fs.DiscardMode === "sync" ? _("inline (sync)")
            : fs.DiscardMode === "async" ? _("async") : _("none");
        if (!Object.hasOwn(TAKEOVER_WORDS, fs.Takeover))
            return mode;
        return cockpit.format(_("$0, $1"), mode, _(TAKEOVER_WORDS[fs.Takeover]));
    }

    function passes(n) {
        const count = Number(n) || 0;
        return cockpit.format(cockpit.ngettext("$0 pass", "$0 passes", count), count);
    }

    function preempted(n) {
        const count = Number(n) || 0;
        return cockpit.format(cockpit.ngettext("$0 chunk preempted by foreground I/O",
                                               "$0 chunks preempted by foreground I/O", count), count);
    }

    // An org.trimd.trimd1.Error.X (or any D-Bus error) in words for people.
    function error(ex) {
        const name = (ex && ex.name) || "";
        const message = (ex && ex.message) || String(ex);
        if (name.endsWith(".AccessDenied") || name === "org.freedesktop.DBus.Error.AccessDenied")
            return _("Not allowed: changing trimd needs administrative access (root, or polkit's org.trimd.trimd1.manage).");
        if (name.endsWith(".Busy"))
            return cockpit.format(_("trimd is busy; try again shortly. $0"), message);
        if (name.endsWith(".ConfigInvalid"))
            return cockpit.format(_("The policy file has an error; the old policy stays in force. $0"), message);
        if (name.endsWith(".NotSupported"))
            return cockpit.format(_("Not possible: $0"), message);
        if (name.endsWith(".NotFound"))
            return cockpit.format(_("Not found: $0"), message);
        if (name === "org.freedesktop.DBus.Error.ServiceUnknown" ||
            name === "org.freedesktop.DBus.Error.NameHasNoOwner")
            return _("trimd is not running.");
        return message;
    }

    exports.locale = locale;
    exports.bytes = bytes;
    exports.duration = duration;
    exports.relative = relative;
    exports.when = when;
    exports.shortDate = shortDate;
    exports.percent = percent;
    exports.stateTitle = stateTitle;
    exports.managerState = managerState;
    exports.result = result;
    exports.stateWhy = stateWhy;
    exports.discard = discard;
    exports.passes = passes;
    exports.preempted = preempted;
    exports.error = error;
}(window.trimdFormat = {}));
