/* trimd's Cockpit page: the filesystems trimd tracks, live from its D-Bus API
 * (org.trimd.trimd1 on the system bus, see org.trimd.trimd1(5)), and its
 * actions, called as the logged-in user: trimd and polkit decide. */
"use strict";

(function () {
    const _ = cockpit.gettext;
    const f = window.trimdFormat;
    const BUS_NAME = "org.trimd.trimd1";
    const MANAGER_PATH = "/org/trimd/trimd1";
    const MANAGER = "org.trimd.trimd1.Manager";
    const FILESYSTEM = "org.trimd.trimd1.Filesystem";
    // States of filesystems trimd leaves alone: listed apart, folded.
    const LEFT_ALONE = new Set(["unsupported", "disabled"]);

    const page = {
        link: null, // the current connection: { client, manager, filesystems, owner }
        cards: new Map(), // object path -> card (tracked filesystems)
        adminAllowed: null, // cockpit.permission: root or administrative access
        polkitAllowed: false, // polkit grants org.trimd.trimd1.manage without asking
    };

    const $ = id => document.getElementById(id);

    function canManage() {
        return page.adminAllowed === true || page.polkitAllowed;
    }

    // trimd owns its name: the proxies say something (else they keep old values).
    function running() {
        return !!(page.link && page.link.owner);
    }

    // ---- alerts ----------------------------------------------------------------

    function alert(kind, text) {
        const box = document.createElement("div");
        box.className = "alert alert-" + kind;
        box.setAttribute("role", kind === "danger" ? "alert" : "status");
        const message = document.createElement("p");
        message.textContent = text;
        const close = document.createElement("button");
        close.type = "button";
        close.className = "btn btn-link";
        close.textContent = _("Dismiss");
        close.addEventListener("click", () => box.remove());
        box.append(message, close);
        $("alerts").append(box);
        if (kind !== "danger")
            window.setTimeout(() => box.remove(), 8000);
    }

    // Runs a bus call from `button`: disabled while it runs, an error in words.
    function run(button, what, call) {
        if (button)
            button.disabled = true;
        // A native promise: cockpit's own do not turn a throw into a rejection.
        return Promise.resolve().then(call)
            .then(() => {
                if (what)
                    alert("success", what);
            })
            .catch(ex => alert("danger", f.error(ex)))
            .finally(() => renderAll());
    }

    function callManager(method, args, signature) {
        return page.link.client.call(MANAGER_PATH, MANAGER, method, args, { type: signature });
    }

    // ---- the page's parts -----------------------------------------------------------

    function renderManager() {
        const link = page.link;
        const m = link && link.manager;
        if (!running() || !m.valid)
            return;
        $("manager-summary").textContent = cockpit.format(_("trimd $0: $1; $2 trimmed in $3"), m.Version,
                                                          f.managerState(m.State), f.bytes(m.BytesTrimmedTotal),
                                                          f.passes(m.PassesTotal));
        $("page").dataset.managerState = m.State;
        $("paused-banner").hidden = m.State !== "paused";
    }

    function leftAloneItem(p) {
        const item = document.createElement("li");
        item.dataset.mountPoint = p.MountPoint;
        item.dataset.state = p.State;
        const name = document.createElement("strong");
        name.textContent = p.MountPoint;
        item.append(name, cockpit.format(" ($0, $1): $2", p.Device, p.FsType, f.stateWhy(p)));
        return item;
    }

    function renderLeftAlone() {
        const list = $("left-alone-list");
        const proxies = running() ? Object.values(page.link.filesystems) : [];
        const alone = proxies.filter(p => p.valid && LEFT_ALONE.has(p.State))
                .sort((a, b) => a.MountPoint.localeCompare(b.MountPoint));
        list.replaceChildren(...alone.map(leftAloneItem));
        $("left-alone-summary").textContent = cockpit.format(_("Left alone ($0)"), alone.length);
        $("left-alone").hidden = alone.length === 0;
    }

    function renderFilesystem(proxy) {
        let card = page.cards.get(proxy.path);
        if (!running() || !proxy.valid || LEFT_ALONE.has(proxy.State)) {
            if (card) {
                card.root.remove();
                page.cards.delete(proxy.path);
            }
            return;
        }
        if (!card) {
            card = window.trimdCard.create(proxy.path, cardAction);
            page.cards.set(proxy.path, card);
            insertSorted(card, proxy.MountPoint);
        }
        window.trimdCard.update(card, proxy, canManage());
    }

    function insertSorted(card, mountPoint) {
        const list = $("filesystems");
        const after = Array.from(list.children).find(n => n.dataset.mountPoint > mountPoint);
        list.insertBefore(card.root, after || null);
        card.root.dataset.mountPoint = mountPoint;
    }

    function renderAll() {
        const link = page.link;
        if (link) {
            for (const proxy of Object.values(link.filesystems))
                renderFilesystem(proxy);
            renderManager();
        }
        renderLeftAlone();
        $("no-filesystems").hidden = page.cards.size > 0 || !running();
        const allowed = canManage();
        document.querySelectorAll(".page-header [data-manage]").forEach(b => { b.disabled = !allowed || !running() });
        $("start-trimd").disabled = !allowed;
        $("trim-all-ignore-idle").disabled = !allowed || !running();
        $("read-only-note").hidden = page.adminAllowed !== false || page.polkitAllowed;
        $("page").dataset.canManage = String(allowed);
    }

    function dropCards() {
        page.cards.forEach(card => card.root.remove());
        page.cards.clear();
    }

    // ---- actions ------------------------------------------------------------------------

    function loadHistory(card) {
        const mountPoint = card.root.dataset.mountPoint;
        return callManager("GetHistory", [mountPoint], "s")
                .then(([entries]) => window.trimdChart.render(card.history, entries))
                .catch(ex => {
                    if (ex.name && ex.name.endsWith(".NotFound"))
                        window.trimdChart.render(card.history, []);
                    else
                        card.history.textContent = f.error(ex);
                });
    }

    function toggleHistory(card, button) {
        const open = button.getAttribute("aria-expanded") !== "true";
        button.setAttribute("aria-expanded", String(open));
        button.textContent = open ? _("Hide history") : _("Show history");
        card.history.hidden = !open;
        if (open)
            loadHistory(card);
    }

    function cardAction(action, card, button) {
        const client = page.link.client;
        const call = (method, args, signature) => () =>
            client.call(card.path, FILESYSTEM, method, args, { type: signature });
        const mountPoint = [card.root.dataset.mountPoint];
        switch (action) {
        case "trim": return run(button, null, call("Trim", [card.ignoreIdle.checked], "b"));
        case "pause": return run(button, null, call("Pause", [], ""));
        case "resume": return run(button, null, call("Resume", [], ""));
        case "cancel": return run(button, null, call("Cancel", [], ""));
        case "take-over":
            return run(button, cockpit.format(_("$0 taken over: trimd trims it instead of inline discard."),
                                              mountPoint[0]),
                       () => callManager("TakeOver", [mountPoint], "as"));
        case "hand-back":
            return run(button, cockpit.format(_("$0 handed back: inline discard is on again."), mountPoint[0]),
                       () => callManager("HandBack", [mountPoint], "as"));
        case "history": return toggleHistory(card, button);
        }
    }

    function startTrimd(button) {
        const systemd = cockpit.dbus("org.freedesktop.systemd1", { bus: "system", superuser: "try" });
        const start = () => systemd.call("/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                                         "StartUnit", ["trimd.service", "replace"], { type: "ss" });
        return run(button, _("Starting trimd.service…"), () =>
            Promise.resolve().then(start)
                    .catch(ex => {
                        const why = ex.problem === "not-found" ? _("systemd is not on the system bus")
                            : f.error(ex);
                        throw new Error(cockpit.format(_("Could not start trimd.service: $0"), why));
                    })
                    .finally(() => systemd.close()));
    }

    function wireToolbar() {
        const ignoreIdle = () => $("trim-all-ignore-idle").checked;
        $("trim-all").addEventListener("click", ev =>
            run(ev.target, null, () => callManager("TrimNow", [[], ignoreIdle()], "asb")));
        $("pause-all").addEventListener("click", ev =>
            run(ev.target, null, () => callManager("Pause", [[]], "as")));
        $("resume-all").addEventListener("click", ev =>
            run(ev.target, null, () => callManager("Resume", [[]], "as")));
        $("cancel-all").addEventListener("click", ev =>
            run(ev.target, null, () => callManager("Cancel", [[]], "as")));
        $("reload-policy").addEventListener("click", ev =>
            run(ev.target, _("Policy reloaded."), () => callManager("Reload", [], "")));
        $("start-trimd").addEventListener("click", ev => startTrimd(ev.target));
    }

    // ---- the connection -----------------------------------------------------------------

    // Whether polkit grants this connection org.trimd.trimd1.manage without
    // asking (a group rule such as 50-trimd.rules). No polkit: no.
    function checkPolkit(link) {
        const subject = ["system-bus-name", { name: cockpit.variant("s", link.client.unique_name) }];
        const polkit = cockpit.dbus("org.freedesktop.PolicyKit1", { bus: "system" });
        polkit.call("/org/freedesktop/PolicyKit1/Authority", "org.freedesktop.PolicyKit1.Authority",
                    "CheckAuthorization", [subject, "org.trimd.trimd1.manage", {}, 0, ""],
                    { type: "(sa{sv})sa{ss}us" })
                .then(([result]) => { page.polkitAllowed = result[0] === true })
                .catch(() => { page.polkitAllowed = false })
                .finally(() => {
                    polkit.close();
                    renderAll();
                });
    }

    function ownerChanged(link, owner) {
        const before = link.owner;
        link.owner = owner;
        $("not-running").hidden = !!owner;
        $("content").hidden = !owner;
        $("page").dataset.running = String(!!owner);
        if (!owner) {
            $("manager-summary").textContent = _("trimd is not running");
            dropCards();
            // The name's return went unreported in about one browser-tier run
            // in four (cockpit 287): look again with a fresh connection.
            window.setTimeout(() => {
                if (page.link === link && !link.owner) {
                    link.client.close();
                    connect();
                }
            }, 2000);
        } else if (before === null) {
            // trimd (re)started: a fresh connection brings its objects back.
            link.client.close();
            connect();
            return;
        }
        renderAll();
    }

    function connect() {
        const client = cockpit.dbus(BUS_NAME, { bus: "system", superuser: "try" });
        const link = { client, owner: undefined };
        page.link = link;
        dropCards();
        client.addEventListener("owner", (ev, owner) => {
            if (page.link === link)
                ownerChanged(link, owner);
        });
        link.manager = client.proxy(MANAGER, MANAGER_PATH);
        link.manager.addEventListener("changed", renderManager);
        link.filesystems = client.proxies(FILESYSTEM, MANAGER_PATH);
        link.filesystems.addEventListener("added", (ev, proxy) => renderFilesystem(proxy));
        link.filesystems.addEventListener("changed", (ev, proxy) => {
            renderFilesystem(proxy);
            renderLeftAlone();
        });
        link.filesystems.addEventListener("removed", (ev, proxy) => {
            renderFilesystem(proxy);
            renderLeftAlone();
        });
        client.subscribe({ path: MANAGER_PATH, interface: MANAGER, member: "TrimFinished" }, (path, iface, signal, args) => {
            const card = page.cards.get(args[0]);
            if (card && !card.history.hidden)
                loadHistory(card);
        });
        link.filesystems.wait(renderAll);
        client.wait().then(() => checkPolkit(link)).catch(() => {});
    }

    function init() {
        // The words of index.html (translate="..."), and the page's language
        // for screen readers: a translation's po.js sets cockpit.language.
        cockpit.translate();
        document.documentElement.lang = f.locale();
        wireToolbar();
        const permission = cockpit.permission({ admin: true });
        const update = () => {
            page.adminAllowed = permission.allowed;
            renderAll();
        };
        permission.addEventListener("changed", update);
        update();
        connect();
        // Relative times ("3 minutes ago") move on.
        window.setInterval(renderAll, 30000);
        cockpit.transport.wait(() => document.body.classList.add("ready"));
    }

    document.addEventListener("DOMContentLoaded", init);
}());
