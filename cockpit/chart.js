/* trimd's Cockpit page: one filesystem's pass history as an inline SVG chart
 * (bars: bytes trimmed per pass; line: time trimming per pass) and the same
 * figures as a table, for keyboards and screen readers. Drawn from
 * Manager.GetHistory's entries, oldest first:
 * (mount_point, start, end, trimming_usec, waited_usec, bytes, result, preempted). */
"use strict";

(function (exports) {
    const _ = cockpit.gettext;
    const SVG = "http://www.w3.org/2000/svg";
    const WIDTH = 560;
    const HEIGHT = 180;
    const PAD = { left: 64, right: 64, top: 16, bottom: 34 };

    function svg(name, attributes, text) {
        const node = document.createElementNS(SVG, name);
        for (const key in attributes)
            node.setAttribute(key, attributes[key]);
        if (text !== undefined)
            node.textContent = text;
        return node;
    }

    function entryOf(raw) {
        return { start: raw[1], end: raw[2], trimming: raw[3], waited: raw[4], bytes: raw[5],
                 result: raw[6], preempted: raw[7] };
    }

    function axisLabels(root, maxBytes, maxUsec) {
        const f = window.trimdFormat;
        const right = WIDTH - PAD.right;
        const bottom = HEIGHT - PAD.bottom;
        root.appendChild(svg("line", { x1: PAD.left, y1: bottom, x2: right, y2: bottom, class: "axis" }));
        root.appendChild(svg("text", { x: PAD.left - 6, y: PAD.top + 4, class: "label", "text-anchor": "end" },
                             f.bytes(maxBytes)));
        root.appendChild(svg("text", { x: PAD.left - 6, y: bottom, class: "label", "text-anchor": "end" }, "0"));
        root.appendChild(svg("text", { x: right + 6, y: PAD.top + 4, class: "label" }, f.duration(maxUsec)));
        root.appendChild(svg("text", { x: right + 6, y: bottom, class: "label" }, "0"));
    }

    // The chart: an <svg role="img"> whose label sums it up.
    function chart(entries) {
        const f = window.trimdFormat;
        const root = svg("svg", { viewBox: "0 0 " + WIDTH + " " + HEIGHT, class: "history-chart", role: "img" });
        const maxBytes = Math.max(1, ...entries.map(e => e.bytes));
        const maxUsec = Math.max(1, ...entries.map(e => e.trimming));
        const plotW = WIDTH - PAD.left - PAD.right;
        const plotH = HEIGHT - PAD.top - PAD.bottom;
        const slot = plotW / Math.max(entries.length, 1);
        const barW = Math.min(slot * 0.7, 48);
        const points = [];
        entries.forEach((e, i) => {
            const x = PAD.left + i * slot;
            const h = plotH * e.bytes / maxBytes;
            const bar = svg("rect", { x: x + (slot - barW) / 2, y: PAD.top + plotH - h, width: barW,
                                      height: Math.max(h, 1), class: e.result === "success" ? "bar" : "bar other" });
            bar.appendChild(svg("title", {}, cockpit.format(_("$0: $1 in $2 ($3)"), f.shortDate(e.start),
                                                            f.bytes(e.bytes), f.duration(e.trimming),
                                                            f.result(e.result))));
            root.appendChild(bar);
            points.push((x + slot / 2) + "," + (PAD.top + plotH - plotH * e.trimming / maxUsec));
            if (entries.length <= 6 || i % Math.ceil(entries.length / 6) === 0)
                root.appendChild(svg("text", { x: x + slot / 2, y: HEIGHT - PAD.bottom + 16, class: "label",
                                               "text-anchor": "middle" }, f.shortDate(e.start)));
        });
        root.appendChild(svg("polyline", { points: points.join(" "), class: "duration-line" }));
        points.forEach(p => {
            const [cx, cy] = p.split(",");
            root.appendChild(svg("circle", { cx, cy, r: 3, class: "duration-dot" }));
        });
        axisLabels(root, maxBytes, maxUsec);
        root.setAttribute("aria-label", cockpit.format(_("$0; the largest trimmed $1, the longest took $2"),
                                                       f.passes(entries.length), f.bytes(maxBytes),
                                                       f.duration(maxUsec)));
        return root;
    }

    function cell(row, text, header) {
        const node = document.createElement(header ? "th" : "td");
        node.textContent = text;
        if (header)
            node.scope = "col";
        row.appendChild(node);
    }

    // The same passes as a table, newest first.
    function table(entries) {
        const f = window.trimdFormat;
        const node = document.createElement("table");
        node.className = "history-table";
        const head = node.createTHead().insertRow();
        [_("Started"), _("Trimmed"), _("Trimming"), _("Waited"), _("Preempted"), _("Result")]
                .forEach(t => cell(head, t, true));
        const body = node.createTBody();
        entries.slice().reverse().forEach(e => {
            const row = body.insertRow();
            cell(row, f.when(e.start));
            cell(row, f.bytes(e.bytes));
            cell(row, f.duration(e.trimming));
            cell(row, f.duration(e.waited));
            cell(row, String(e.preempted));
            cell(row, f.result(e.result));
        });
        return node;
    }

    // Fills `container` with the chart, a legend and the table.
    function render(container, rawEntries) {
        const entries = rawEntries.map(entryOf);
        container.replaceChildren();
        container.dataset.passes = String(entries.length);
        if (entries.length === 0) {
            const p = document.createElement("p");
            p.textContent = _("No passes remembered yet.");
            container.appendChild(p);
            return;
        }
        container.appendChild(chart(entries));
        const legend = document.createElement("p");
        legend.className = "history-legend";
        const key = kind => {
            const node = document.createElement("span");
            node.className = "key " + kind;
            return node;
        };
        legend.append(key("bar"), " ", _("bytes trimmed per pass"), " ", key("duration-line"), " ",
                      _("time trimming per pass"));
        container.appendChild(legend);
        container.appendChild(table(entries));
    }

    exports.render = render;
}(window.trimdChart = {}));
