/* trimd's Cockpit page: one card per tracked filesystem, built once and then
 * updated in place from the bus proxy's properties (so keyboard focus stays
 * where it is while Progress changes a few times a second). */
"use strict";

(function (exports) {
    const _ = cockpit.gettext;
    const f = window.trimdFormat;
    let serial = 0;

    function el(tag, attributes, text) {
        const node = document.createElement(tag);
        for (const key in attributes || {})
            node.setAttribute(key, attributes[key]);
        if (text !== undefined)
            node.textContent = text;
        return node;
    }

    // A button of the card: its label, and the mount point as its description
    // (a screen reader says "Trim now, /srv", not a row of bare "Trim now"s).
    function button(label, action, klass, titleId) {
        return el("button", { type: "button", class: "btn " + (klass || "btn-secondary"),
                              "data-action": action, "data-manage": "", "aria-describedby": titleId }, label);
    }

    function fact(list, term) {
        const row = el("div");
        row.append(el("dt", {}, term));
        const value = el("dd");
        row.append(value);
        list.append(row);
        return value;
    }

    // The DOM of one card; `actions(name, card)` is called by its buttons.
    function create(path, actions) {
        const id = "fs-" + (++serial);
        const root = el("article", { class: "fs-card", "data-path": path, "aria-labelledby": id + "-title" });
        const head = el("header", { class: "fs-head" });
        const title = el("h3", { id: id + "-title", class: "fs-title" });
        const badge = el("span", { class: "badge" });
        head.append(title, badge);
        const why = el("p", { class: "fs-why" });
        const progress = el("div", { class: "progress", role: "progressbar", "aria-valuemin": "0",
                                     "aria-valuemax": "100", "aria-valuenow": "0" });
        const bar = el("div", { class: "progress-bar" });
        const track = el("div", { class: "progress-track" });
        track.append(bar);
        const percent = el("span", { class: "progress-text" });
        progress.append(track, percent);
        const facts = el("dl", { class: "fs-facts" });
        const card = { path, root, title, badge, why, progress, bar, percent,
                       device: fact(facts, _("Device")), discard: fact(facts, _("Discard")),
                       last: fact(facts, _("Last trim")), next: fact(facts, _("Next trim")),
                       lifetime: fact(facts, _("Lifetime")) };
        const actionsBar = el("div", { class: "fs-actions", role: "group", "aria-labelledby": title.id });
        card.trim = button(_("Trim now"), "trim", "btn-primary", title.id);
        card.ignoreIdle = el("input", { type: "checkbox", id: id + "-ignore-idle" });
        const check = el("label", { class: "check", for: id + "-ignore-idle" });
        check.append(card.ignoreIdle, " ", _("Ignore idleness"));
        card.pause = button(_("Pause"), "pause", null, title.id);
        card.resume = button(_("Resume"), "resume", null, title.id);
        card.cancel = button(_("Cancel"), "cancel", null, title.id);
        card.takeOver = button(_("Take over"), "take-over", null, title.id);
        card.handBack = button(_("Hand back"), "hand-back", null, title.id);
        card.historyToggle = el("button", { type: "button", class: "btn btn-link", "aria-expanded": "false",
                                            "aria-controls": id + "-history", "data-action": "history",
                                            "aria-describedby": title.id },
                                _("Show history"));
        actionsBar.append(card.trim, check, card.pause, card.resume, card.cancel, card.takeOver, card.handBack,
                    card.historyToggle);
        card.history = el("div", { id: id + "-history", class: "fs-history", hidden: "" });
        root.append(head, why, progress, facts, actionsBar, card.history);
        actionsBar.addEventListener("click", ev => {
            const target = ev.target.closest("button");
            if (target)
                actions(target.dataset.action, card, target);
        });
        return card;
    }

    // A pass is under way (started, or due and held up): Cancel applies.
    function inPass(p) {
        return p.State === "trimming" || p.State === "waiting" ||
            (p.State === "paused" && p.Progress > 0 && p.Progress < 1);
    }

    function lastTrim(p) {
        if (!p.LastTrimEnd)
            return _("never");
        const figures = [f.relative(p.LastTrimEnd, Date.now()), f.bytes(p.LastBytesTrimmed),
            f.duration(p.LastTrimDuration), f.duration(p.LastWaitDuration)];
        if (p.LastResult && p.LastResult !== "success")
            return cockpit.format(_("$0: $1 in $2, waited $3 ($4)"), ...figures, f.result(p.LastResult));
        return cockpit.format(_("$0: $1 in $2, waited $3"), ...figures);
    }

    function nextTrim(p) {
        if (p.NextTrim)
            return f.relative(p.NextTrim, Date.now());
        return inPass(p) ? _("after this pass") : _("not scheduled");
    }

    function lifetime(p) {
        const total = cockpit.format(_("$0 in $1"), f.bytes(p.BytesTrimmedTotal), f.passes(p.PassesTotal));
        return p.PreemptionsTotal ? cockpit.format(_("$0, $1"), total, f.preempted(p.PreemptionsTotal)) : total;
    }

    function updateProgress(card, p) {
        const show = p.State === "trimming" || (inPass(p) && p.Progress > 0 && p.Progress < 1);
        const value = Math.round(100 * Math.min(Math.max(p.Progress || 0, 0), 1));
        card.progress.hidden = !show;
        card.progress.setAttribute("aria-valuenow", String(value));
        card.progress.setAttribute("aria-label", cockpit.format(_("Progress of the pass on $0"), p.MountPoint));
        card.bar.style.width = value + "%";
        card.percent.textContent = f.percent(value / 100);
    }

    function updateButtons(card, p, canManage) {
        const trimming = p.State === "trimming";
        const paused = p.State === "paused";
        card.trim.disabled = !canManage || trimming;
        card.pause.disabled = !canManage || paused;
        card.resume.disabled = !canManage || !paused;
        card.cancel.disabled = !canManage || !inPass(p);
        card.takeOver.hidden = !(p.InlineDiscard && p.Takeover !== "taken-over" && p.FsType !== "xfs");
        card.handBack.hidden = p.Takeover !== "taken-over";
        card.takeOver.disabled = card.handBack.disabled = !canManage;
        card.ignoreIdle.disabled = !canManage;
    }

    // Brings the card up to date with the proxy `p`.
    function update(card, p, canManage) {
        card.root.dataset.mountPoint = p.MountPoint;
        card.root.dataset.state = p.State;
        card.root.dataset.lastBytes = String(p.LastBytesTrimmed || 0);
        card.root.dataset.lastTrimEnd = String(p.LastTrimEnd || 0);
        card.title.textContent = p.MountPoint;
        card.badge.textContent = f.stateTitle(p.State);
        card.badge.className = "badge state-" + p.State;
        const why = f.stateWhy(p);
        card.why.textContent = why ? cockpit.format(_("$0: $1"), f.stateTitle(p.State), why) : "";
        card.why.hidden = !why;
        card.device.textContent = cockpit.format("$0 ($1, $2)", p.Device, p.FsType, f.bytes(p.Size));
        card.device.title = (p.BackingDisks || []).length
            ? cockpit.format(_("disks: $0"), p.BackingDisks.join(", ")) : "";
        card.discard.textContent = p.TakeoverReason
            ? cockpit.format(_("$0: $1"), f.discard(p), p.TakeoverReason) : f.discard(p);
        card.last.textContent = lastTrim(p);
        card.last.title = p.LastTrimEnd ? f.when(p.LastTrimEnd) : "";
        card.next.textContent = nextTrim(p);
        card.next.title = p.NextTrim ? f.when(p.NextTrim) : "";
        card.lifetime.textContent = lifetime(p);
        updateProgress(card, p);
        updateButtons(card, p, canManage);
    }

    exports.create = create;
    exports.update = update;
}(window.trimdCard = {}));
