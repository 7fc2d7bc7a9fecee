// ump serve: the page. Routes (in the URL's fragment):
//   #/                     the store's manifests
//   #/m/HASH               a manifest: table, curves, cells, downloads
//   #/m/HASH/entry/R/C     one table entry (row R, column C, from 1 as cells): its cells by tuned value
//   #/m/HASH/cell/N        one cell: configuration, stages, partition, mixing
// The page asks the server for the store's state once a second; when it
// changed, the page fetches its view again.
"use strict";

const main = document.getElementById("main");
const tooltip = document.getElementById("tooltip");
const SVG = "http://www.w3.org/2000/svg";

// Per-manifest choices the user made: table figure, curve axes, lr, the
// scatter's parameter and figure.
const choice = { value: {}, x: {}, y: {}, pick: {}, cellY: {}, compare: {}, param: {}, cellFig: {} };

// el builds an HTML element: attributes (text: its text, on*: listeners),
// then children (strings become text).
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  setAttrs(e, attrs);
  for (const k of kids.flat(Infinity)) if (k !== null && k !== undefined && k !== false) e.append(k);
  return e;
}

function sv(tag, attrs, ...kids) {
  const e = document.createElementNS(SVG, tag);
  setAttrs(e, attrs);
  for (const k of kids.flat(Infinity)) if (k) e.append(k);
  return e;
}

function setAttrs(e, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
}

async function get(url) {
  const r = await fetch(url, { cache: "no-store" });
  let body;
  try { body = await r.json(); } catch { body = {}; }
  if (!r.ok) throw new Error(body.error || `${r.status} ${r.statusText}`);
  return body;
}

// Formatting.
const short = (h) => h.slice(0, 12);
const pad = (n) => String(n).padStart(2, "0");
function when(iso) {
  if (!iso) return "–";
  const d = new Date(iso);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
function duration(s) {
  if (s === null || s === undefined || !isFinite(s)) return "–";
  s = Math.round(s);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  return `${Math.floor(s / 3600)}h ${pad(Math.floor(s % 3600 / 60))}m`;
}
function spanSeconds(p) {
  return p.first && p.last ? (new Date(p.last) - new Date(p.first)) / 1000 : null;
}
function fmt(v, digits = 4) {
  if (v === null || v === undefined) return "–";
  if (Math.abs(v) >= 1e6 || (v !== 0 && Math.abs(v) < 1e-3)) return v.toExponential(2);
  return Number(v.toFixed(digits)).toString();
}

function badge(status, n) {
  return el("span", { class: `badge ${status}`, text: n === undefined ? status : `${n} ${status}` });
}
// counts shows cells by status; running: how many of the incomplete ones
// the store's writer runs.
function counts(c, running) {
  const shown = { ...c };
  if (running && shown.incomplete) { shown.running = Math.min(running, shown.incomplete); shown.incomplete -= shown.running; }
  return ["completed", "diverged", "failed", "running", "incomplete", "pending"].filter((s) => shown[s]).map((s) => badge(s, shown[s]));
}
function bar(done, total) {
  const fill = el("span");
  fill.style.width = `${total ? (100 * done / total).toFixed(1) : 0}%`;
  return el("span", { class: "bar", title: `${done} of ${total} rounds` }, fill);
}
function percent(done, total) {
  return total ? `${Math.floor(100 * done / total)}%` : "–";
}
function select(label, values, current, onchange, names) {
  const s = el("select", { "aria-label": label, onchange: (e) => onchange(e.target.value) },
    values.map((v, i) => el("option", { value: v, text: names ? names[i] : v, selected: v === current ? "" : null })));
  return el("label", {}, `${label} `, s);
}
function crumbs(...parts) {
  const out = el("div", { class: "crumbs" });
  parts.forEach((p, i) => {
    if (i) out.append(" › ");
    out.append(p[1] ? el("a", { href: p[1], text: p[0] }) : p[0]);
  });
  return out;
}
function section(title, ...kids) {
  return el("section", {}, el("h2", { text: title }), ...kids);
}
function downloads(hash, tables, formats, cell, unfinished) {
  const rows = tables.map((t) => el("tr", {}, el("td", { text: t }),
    el("td", {}, formats.map((f) => el("a", {
      href: `/api/manifests/${hash}/export?table=${t}&format=${f}${cell ? `&cell=${cell}` : ""}`,
      download: "", class: "download", "data-table": t, "data-format": f, text: f,
    })))));
  if (unfinished) {
    rows.push(el("tr", {}, el("td", { text: "rounds, with unfinished cells' rounds so far" }),
      el("td", {}, formats.map((f) => el("a", {
        href: `/api/manifests/${hash}/export?table=rounds&format=${f}&incomplete=1${cell ? `&cell=${cell}` : ""}`,
        download: "", text: f,
      })))));
  }
  return el("table", { class: "downloads" }, el("tr", {}, el("th", { text: "table" }), el("th", { text: "download (as ump export writes it)" })), rows);
}

// ---- charts -------------------------------------------------------------

// tickStep is the step of about n round numbers (1, 2 or 5 times a power
// of ten) over [lo, hi], as ump plot's.
function tickStep(lo, hi, n) {
  let step = Math.pow(10, Math.floor(Math.log10((hi - lo) / n)));
  for (const m of [1, 2, 5, 10]) if (m * step * n >= hi - lo) return step * m;
  return step * 10;
}

// ticks returns about n round numbers spanning [lo, hi].
function ticks(lo, hi, n) {
  if (!(hi > lo)) return [lo];
  const step = tickStep(lo, hi, n);
  const out = [];
  for (let k = Math.ceil(lo / step); k * step <= hi + step * 1e-9; k++) out.push(+(k * step).toPrecision(12));
  return out;
}

// tickLabel writes an axis value briefly, as ump plot does: SI suffixes
// from 10,000 on (25M), 2e-4 for tiny ones, never -0.
function tickLabel(t) {
  const a = Math.abs(t);
  if (a >= 1e15) return t.toExponential(3).replace(/\.?0*e\+?/, "e"); // a blow-up: 4e64, not 4e+52T
  if (a >= 1e4) {
    for (const [scale, name] of [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]]) {
      if (a >= scale) return `${+(t / scale).toPrecision(6)}${name}`;
    }
  }
  if (a > 0 && a < 1e-3) return t.toExponential().replace(/\.?0*e\+?/, "e");
  return String(t === 0 ? 0 : t);
}

// chart draws a figure: per series the mean over seeds with a band of ±
// one standard deviation, a cross where a diverged curve stops, a dot
// where a running one has got to, the legend under it; a log y axis when
// the means span more than two decades, as `ump plot` does. It takes its
// card's whole width.
function chart(fig, legendShown = true) {
  const W = 1100, H = 400, L = 66, R = 16, T = 26, B = 44;
  const series = fig.series.map((s, i) => {
    const pts = [];
    s.x.forEach((x, k) => {
      if (s.mean[k] !== null && x !== null) pts.push({ x, m: s.mean[k], sd: s.std[k] || 0 });
    });
    return { ...s, pts, dash: s.dashed ? "6 3" : null }; // colours as ump plot's (pipeline.SeriesColour)
  });
  const all = series.flatMap((s) => s.pts);
  const means = all.map((p) => p.m);
  const logY = means.length > 0 && means.every((m) => m > 0) && Math.max(...means) / Math.min(...means) > 100;
  const svg = sv("svg", { width: "100%", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": fig.title });
  svg.append(sv("text", { x: L, y: 16, class: "title" }, document.createTextNode(fig.title)));
  if (!all.length) {
    svg.append(sv("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "empty" }, document.createTextNode("no rounds reported yet")));
    return el("figure", { class: "chart", "data-name": fig.name }, svg);
  }
  let x0 = Math.min(...all.map((p) => p.x)), x1 = Math.max(...all.map((p) => p.x));
  if (x0 === x1) { x0 -= 1; x1 += 1; }
  let y0, y1;
  if (logY) {
    y0 = Math.log10(Math.min(...means)); y1 = Math.log10(Math.max(...means));
  } else {
    y0 = Math.min(...all.map((p) => p.m - p.sd)); y1 = Math.max(...all.map((p) => p.m + p.sd));
  }
  if (y0 === y1) { y0 -= 0.5; y1 += 0.5; }
  if (logY) {
    const padY = (y1 - y0) * 0.04; y0 -= padY; y1 += padY;
  } else { // a tick at or beyond each end of the data, as ump plot
    const step = tickStep(y0, y1, 7);
    y0 = Math.floor(y0 / step + 1e-9) * step; y1 = Math.ceil(y1 / step - 1e-9) * step;
  }
  const X = (x) => L + (x - x0) / (x1 - x0) * (W - L - R);
  const Y = (y) => T + (1 - ((logY ? Math.log10(Math.max(y, 1e-300)) : y) - y0) / (y1 - y0)) * (H - T - B);
  // grid, axes, ticks
  for (const t of ticks(x0, x1, 8)) {
    svg.append(sv("line", { x1: X(t), x2: X(t), y1: T, y2: H - B, class: "grid" }));
    svg.append(sv("text", { x: X(t), y: H - B + 15, "text-anchor": "middle" }, document.createTextNode(tickLabel(t))));
  }
  const yt = logY ? ticks(Math.ceil(y0), Math.floor(y1), 6).filter(Number.isInteger).map((e) => Math.pow(10, e)) : ticks(y0, y1, 7);
  for (const t of yt) {
    svg.append(sv("line", { x1: L, x2: W - R, y1: Y(t), y2: Y(t), class: "grid" }));
    svg.append(sv("text", { x: L - 6, y: Y(t) + 4, "text-anchor": "end" }, document.createTextNode(logY ? t.toExponential(0).replace("e+", "e") : tickLabel(t))));
  }
  svg.append(sv("line", { x1: L, x2: L, y1: T, y2: H - B, class: "axis" }), sv("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, class: "axis" }));
  svg.append(sv("text", { x: (L + W - R) / 2, y: H - 8, "text-anchor": "middle", class: "axis-label" }, document.createTextNode(fig.x)));
  svg.append(sv("text", { x: 14, y: (T + H - B) / 2, "text-anchor": "middle", transform: `rotate(-90 14 ${(T + H - B) / 2})`, class: "axis-label" },
    document.createTextNode(fig.y)));
  const clip = `clip-${Math.random().toString(36).slice(2)}`;
  svg.append(sv("clipPath", { id: clip }, sv("rect", { x: L, y: T, width: W - L - R, height: H - T - B })));
  const plot = sv("g", { "clip-path": `url(#${clip})` });
  svg.append(plot);
  const legend = el("ul", { class: "legend" });
  for (const s of series) {
    if (s.pts.length) {
      const lo = s.pts.map((p) => `${X(p.x)},${Y(logY && p.m - p.sd <= 0 ? p.m / 10 : p.m - p.sd)}`);
      const hi = s.pts.map((p) => `${X(p.x)},${Y(p.m + p.sd)}`).reverse();
      plot.append(sv("polygon", { points: lo.concat(hi).join(" "), fill: s.color, "fill-opacity": 0.16, stroke: "none" }));
      plot.append(sv("path", {
        d: "M" + s.pts.map((p) => `${X(p.x).toFixed(1)},${Y(p.m).toFixed(1)}`).join("L"),
        fill: "none", stroke: s.color, "stroke-width": 2, "stroke-dasharray": s.dash,
        class: "series", "data-label": s.label, "data-points": s.pts.length,
      }));
      const end = s.pts[s.pts.length - 1];
      if (s.diverged > 0) {
        const cx = X(end.x), cy = Y(end.m);
        svg.append(sv("path", { d: `M${cx - 6},${cy - 6}L${cx + 6},${cy + 6}M${cx - 6},${cy + 6}L${cx + 6},${cy - 6}`, stroke: s.color, "stroke-width": 2.5, class: "diverged-mark" }));
      } else if (s.running > 0) {
        svg.append(sv("circle", { cx: X(end.x), cy: Y(end.m), r: 3.5, fill: s.color, class: "running-mark" }));
      }
    }
    const extra = [];
    if (s.select) extra.push(s.untuned ? `${s.select}, not tuned yet` : s.select);
    if (s.seeds > 1) extra.push(`${s.seeds} seeds`);
    if (s.running) extra.push(`${s.running} running`);
    if (s.diverged) extra.push(`diverged (${s.diverged} of ${s.seeds} seeds) at ×`);
    if (!s.seeds) extra.push("no rounds yet");
    const sw = el("span", { class: "swatch" });
    sw.style.background = s.dash ? `repeating-linear-gradient(90deg, ${s.color} 0 6px, transparent 6px 9px)` : s.color;
    legend.append(el("li", {}, sw, el("span", {}, s.label, extra.length ? el("span", { class: "extra", text: ` (${extra.join(", ")})` }) : null)));
  }
  // hover: the values of every series at the nearest x
  const xs = [...new Set(all.map((p) => p.x))].sort((a, b) => a - b);
  const rule = sv("line", { y1: T, y2: H - B, class: "rule", visibility: "hidden" });
  svg.append(rule);
  const overlay = sv("rect", { x: L, y: T, width: W - L - R, height: H - T - B, fill: "transparent" });
  overlay.addEventListener("mousemove", (ev) => {
    const box = svg.getBoundingClientRect();
    const px = (ev.clientX - box.left) * (W / box.width);
    let best = xs[0];
    for (const x of xs) if (Math.abs(X(x) - px) < Math.abs(X(best) - px)) best = x;
    rule.setAttribute("x1", X(best)); rule.setAttribute("x2", X(best)); rule.setAttribute("visibility", "visible");
    tooltip.replaceChildren(el("div", { text: `${fig.x} ${best}` }),
      ...series.map((s) => {
        const p = s.pts.find((q) => q.x === best);
        return p ? el("div", { text: `${s.label}: ${fmt(p.m)}${p.sd ? ` ± ${fmt(p.sd)}` : ""}` }) : null;
      }).filter(Boolean));
    tooltip.hidden = false;
    tooltip.style.left = `${ev.clientX + 14}px`;
    tooltip.style.top = `${ev.clientY + 10}px`;
  });
  overlay.addEventListener("mouseleave", () => { tooltip.hidden = true; rule.setAttribute("visibility", "hidden"); });
  svg.append(overlay);
  return el("figure", { class: "chart", "data-name": fig.name }, svg, legendShown ? legend : null);
}

// scatter draws each cell's final figure against a swept parameter: a dot
// per cell in its group's colour (a click opens the cell), a cross for a
// cell that diverged (at its figure, or at the top where it has none),
// the x axis numeric where every value is a number (logarithmic where
// they are positive and span more than a decade), else the values evenly
// spaced.
function scatter(points, xTitle, yTitle, onpick) {
  const W = 1100, H = 360, L = 66, R = 16, T = 14, B = 44;
  const svg = sv("svg", { width: "100%", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `${yTitle} against ${xTitle}`, class: "scatter" });
  const finite = (p) => p.y !== null && p.y !== undefined && isFinite(p.y);
  const shown = points.filter((p) => finite(p) || p.diverged);
  if (!shown.length) {
    svg.append(sv("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "empty" }, document.createTextNode("no finished cell yet")));
    return svg;
  }
  const values = [...new Set(points.map((p) => p.x))];
  const numeric = values.every((v) => v !== "" && isFinite(Number(v)));
  const xs = numeric ? values.map(Number) : [];
  const logX = numeric && xs.every((v) => v > 0) && Math.max(...xs) / Math.min(...xs) > 10;
  if (numeric) values.sort((a, b) => Number(a) - Number(b));
  const pos = (v) => (logX ? Math.log10(Number(v)) : numeric ? Number(v) : values.indexOf(v));
  let x0 = Math.min(...values.map(pos)), x1 = Math.max(...values.map(pos));
  const padX = x1 > x0 ? (x1 - x0) * 0.06 : 1;
  x0 -= padX; x1 += padX;
  const ys = shown.filter(finite).map((p) => p.y);
  let y0 = ys.length ? Math.min(...ys) : 0, y1 = ys.length ? Math.max(...ys) : 1;
  if (y0 === y1) { y0 -= 0.5; y1 += 0.5; }
  const step = tickStep(y0, y1, 6);
  y0 = Math.floor(y0 / step + 1e-9) * step; y1 = Math.ceil(y1 / step - 1e-9) * step;
  const X = (v) => L + (pos(v) - x0) / (x1 - x0) * (W - L - R);
  const Y = (y) => T + (1 - (y - y0) / (y1 - y0)) * (H - T - B);
  const room = Math.floor((W - L - R) / values.length / 6.5); // characters that fit under a value
  for (const v of values) {
    const text = numeric ? tickLabel(Number(v)) : v.length > room ? `${v.slice(0, Math.max(1, room - 1))}…` : v;
    svg.append(sv("line", { x1: X(v), x2: X(v), y1: T, y2: H - B, class: "grid" }));
    svg.append(sv("text", { x: X(v), y: H - B + 15, "text-anchor": "middle", class: "x-value" }, document.createTextNode(text), sv("title", {}, document.createTextNode(v))));
  }
  for (const t of ticks(y0, y1, 6)) {
    svg.append(sv("line", { x1: L, x2: W - R, y1: Y(t), y2: Y(t), class: "grid" }));
    svg.append(sv("text", { x: L - 6, y: Y(t) + 4, "text-anchor": "end" }, document.createTextNode(tickLabel(t))));
  }
  svg.append(sv("line", { x1: L, x2: L, y1: T, y2: H - B, class: "axis" }), sv("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, class: "axis" }));
  svg.append(sv("text", { x: (L + W - R) / 2, y: H - 8, "text-anchor": "middle", class: "axis-label" },
    document.createTextNode(logX ? `${xTitle} (log scale)` : xTitle)));
  svg.append(sv("text", { x: 14, y: (T + H - B) / 2, "text-anchor": "middle", transform: `rotate(-90 14 ${(T + H - B) / 2})`, class: "axis-label" },
    document.createTextNode(yTitle)));
  // Dots at one value side by side, so that seeds do not hide each other.
  const at = {};
  for (const p of shown) (at[p.x] = at[p.x] || []).push(p);
  for (const group of Object.values(at)) {
    group.forEach((p, k) => {
      const dx = (k - (group.length - 1) / 2) * Math.min(7, 60 / group.length);
      const cx = X(p.x) + dx, cy = finite(p) ? Y(p.y) : T + 6;
      const tip = sv("title", {}, document.createTextNode(`cell ${p.cell}: ${p.label}\n${p.diverged ? "diverged" : ""}${p.diverged && finite(p) ? `, ${yTitle} ${fmt(p.y)}` : p.diverged ? "" : `${yTitle} ${fmt(p.y)}`}`));
      const dot = p.diverged
        ? sv("path", { d: `M${cx - 5},${cy - 5}L${cx + 5},${cy + 5}M${cx - 5},${cy + 5}L${cx + 5},${cy - 5}`, stroke: p.color, "stroke-width": 2.5, class: "point diverged", "data-cell": p.cell }, tip)
        : sv("circle", { cx, cy, r: 4.5, fill: p.color, "fill-opacity": 0.85, class: "point", "data-cell": p.cell }, tip);
      dot.addEventListener("click", () => onpick(p.cell));
      svg.append(dot);
    });
  }
  return svg;
}

// keepInside moves the x values of a scatter that run past its edges
// (a long last label) inside, measured as drawn: anchored at the edge.
function keepInside(svg) {
  const width = svg.viewBox.baseVal.width;
  for (const t of svg.querySelectorAll("text.x-value")) {
    const b = t.getBBox();
    if (b.x + b.width > width - 2) setAttrs(t, { x: width - 2, "text-anchor": "end" });
    else if (b.x < 2) setAttrs(t, { x: 2, "text-anchor": "start" });
  }
}

// heatmap draws a partition's class histogram: workers across, classes up.
function heatmap(h) {
  const cw = Math.max(8, Math.min(28, Math.floor(640 / h.workers))), ch = Math.max(10, Math.min(22, Math.floor(260 / h.classes)));
  const L = 40, T = 8, B = 34;
  const W = L + cw * h.workers + 6, H = T + ch * h.classes + B;
  const max = Math.max(1, ...h.counts);
  const colour = (v) => {
    const t = Math.sqrt(v / max); // more contrast among small counts
    const c0 = [247, 251, 255], c1 = [8, 48, 107];
    return `rgb(${c0.map((a, i) => Math.round(a + (c1[i] - a) * t)).join(",")})`;
  };
  const svg = sv("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: "heatmap-svg", role: "img", "aria-label": "class histogram" });
  for (let w = 0; w < h.workers; w++) {
    for (let c = 0; c < h.classes; c++) {
      const v = h.counts[w * h.classes + c];
      svg.append(sv("rect", { x: L + w * cw, y: T + (h.classes - 1 - c) * ch, width: cw - 1, height: ch - 1, fill: colour(v) },
        sv("title", {}, document.createTextNode(`worker ${w}, class ${c}: ${v} samples`))));
    }
  }
  const every = (n, room) => Math.max(1, Math.ceil(n * 14 / room));
  for (let w = 0; w < h.workers; w += every(h.workers, cw * h.workers)) {
    svg.append(sv("text", { x: L + w * cw + cw / 2, y: T + ch * h.classes + 13, "text-anchor": "middle" }, document.createTextNode(String(w))));
  }
  for (let c = 0; c < h.classes; c += every(h.classes, ch * h.classes)) {
    svg.append(sv("text", { x: L - 5, y: T + (h.classes - 1 - c) * ch + ch / 2 + 4, "text-anchor": "end" }, document.createTextNode(String(c))));
  }
  svg.append(sv("text", { x: L + cw * h.workers / 2, y: H - 4, "text-anchor": "middle", class: "axis-label" }, document.createTextNode("worker")));
  svg.append(sv("text", { x: 10, y: T + ch * h.classes / 2, "text-anchor": "middle", transform: `rotate(-90 10 ${T + ch * h.classes / 2})`, class: "axis-label" },
    document.createTextNode("class")));
  const scale = el("div", { class: "scale" });
  scale.style.background = `linear-gradient(to top, ${colour(0)}, ${colour(max / 4)}, ${colour(max)})`;
  return el("div", { class: "heatmap" }, svg, scale,
    el("div", { class: "scale-labels" }, el("span", { text: `${max} samples` }), el("span", { text: "0" })));
}

// ---- pages --------------------------------------------------------------

async function pageStore() {
  const s = await get("/api/store");
  const out = [el("h1", { text: "Sweeps" }), el("div", { class: "muted", text: `store ${s.dir}` })];
  if (s.note) out.push(el("div", { class: "note", text: s.note }));
  if (s.state.error) out.push(el("div", { class: "error", text: `reading the store: ${s.state.error}` }));
  if (s.run && s.run.state === "running") {
    out.push(el("div", { class: "banner" }, "Running ", el("a", { href: `#/m/${s.run.manifest}`, text: s.run.name }),
      ` — cell ${s.run.cell}/${s.run.cells} ${s.run.label || ""}`, s.run.stage ? `, ${s.run.stage}` : "",
      s.run.stage === "train" ? ` round ${s.run.round}/${s.run.rounds}` : "",
      s.run.eta_seconds ? ` · ETA ${duration(s.run.eta_seconds)}` : ""));
  }
  if (!s.manifests.length) {
    out.push(el("p", { class: "muted", text: "This store holds no manifests yet: `ump run MANIFEST` registers one." }));
    return out;
  }
  const rows = s.manifests.map((m) => el("tr", { class: "manifest", "data-hash": m.hash },
    el("td", {}, el("a", { href: `#/m/${m.hash}`, text: m.name }), ...aboutLines(m)),
    el("td", { class: "mono", text: short(m.hash) }),
    el("td", { text: when(m.first) }),
    el("td", { class: "num", text: m.first ? duration(spanSeconds(m)) : "" }, m.reused ? el("div", { class: "about muted", text: `${m.reused} cells reused` }) : null),
    el("td", {}, `${m.cells} cells `, counts(m.counts, m.running ? (m.running_cells || []).length : 0)),
    el("td", {}, bar(m.rounds_done, m.rounds_total), percent(m.rounds_done, m.rounds_total)),
    el("td", { class: "num", text: m.running ? duration(m.eta_seconds) : "" }),
    el("td", { class: "best", title: m.best_of ? `best ${m.best_of}` : null, text: m.best || "–" })));
  out.push(el("section", {}, el("table", { class: "manifests" },
    el("tr", {}, ["manifest", "hash", "started", "ran for", "cells", "progress", "ETA", "best entry"].map((h) => el("th", { text: h }))), rows)));
  return out;
}

// aboutLines are what tells a manifest apart besides its hash: the
// overrides it was run with and its notes (ump note), one line each.
function aboutLines(a) {
  const lines = [];
  if (a.overrides && a.overrides.length) lines.push(el("div", { class: "about muted", text: `run with ${a.overrides.join(" ")}` }));
  for (const n of a.notes || []) lines.push(el("div", { class: "about annotation", text: `${when(n.time)}: ${n.text}` }));
  return lines;
}

async function pageManifest(hash) {
  const m = await get(`/api/manifests/${hash}`);
  const H = m.hash;
  const value = choice.value[H] || m.layout.value;
  const y = choice.y[H] || m.layout.value;
  const x = choice.x[H] || "round";
  const pick = choice.pick[H] || "";
  const other = choice.compare[H] || "";
  const [table, figs, store, theirs] = await Promise.all([
    get(`/api/manifests/${H}/table?value=${encodeURIComponent(value)}`),
    get(`/api/manifests/${H}/curves?x=${x}&y=${encodeURIComponent(y)}&choice=${encodeURIComponent(pick)}`),
    get("/api/store"),
    other ? get(`/api/manifests/${other}/curves?x=${x}&y=${encodeURIComponent(y)}`).catch((e) => e) : null,
  ]);
  // Another manifest's curves of the same figure, overlaid dashed, its
  // series named by its manifest (same colour: the same row of its table).
  const others = store.manifests.filter((o) => o.hash !== H);
  let compareNote = null;
  if (theirs instanceof Error) {
    compareNote = el("p", { class: "muted", text: `${short(other)} has no curves of ${y}: ${theirs.message}` });
  } else if (theirs) {
    const name = (others.find((o) => o.hash === other) || { name: short(other) }).name;
    figs.forEach((f, i) => {
      const t = theirs.find((g) => g.name === f.name) || (theirs.length === 1 ? theirs[0] : null);
      if (t) f.series = f.series.concat(t.series.map((sr) => ({ ...sr, label: `${name} ${short(other)}: ${sr.label}`, dashed: true })));
    });
  }
  const p = m.progress;
  const out = [crumbs(["Sweeps", "#/"], [m.name]),
    el("h1", {}, m.name, " ", el("span", { class: "mono muted", text: short(H) })),
    ...aboutLines(m.about),
    el("div", {}, `${p.cells} cells `, counts(p.counts, p.running ? (p.running_cells || []).length : 0), " ", bar(p.rounds_done, p.rounds_total), percent(p.rounds_done, p.rounds_total),
      p.first ? ` · started ${when(p.first)}, ran for ${duration(spanSeconds(p))}` : p.reused ? "" : " · not started",
      p.reused ? ` · ${p.reused} cells' results reused from other manifests' runs` : "",
      p.running ? ` · running cell${(p.running_cells || []).length > 1 ? "s" : ""} ${(p.running_cells || []).join(", ")}, ETA ${duration(p.eta_seconds)}` : "")];

  // The table, as `ump table` lays it out.
  let sortBy = null, desc = true;
  const tbody = el("tbody");
  const head = el("tr", {}, el("th", { text: table.row_header }));
  const fillRows = () => {
    const order = table.rows.map((r, i) => i);
    if (sortBy !== null) {
      const key = (i) => table.rows[i].entries[sortBy].mean;
      order.sort((a, b) => {
        const ka = key(a), kb = key(b);
        if (ka === null || table.rows[a].entries[sortBy].missing || table.rows[a].entries[sortBy].diverged) return 1;
        if (kb === null || table.rows[b].entries[sortBy].missing || table.rows[b].entries[sortBy].diverged) return -1;
        return desc ? kb - ka : ka - kb;
      });
    }
    tbody.replaceChildren(...order.map((ri) => {
      const r = table.rows[ri];
      return el("tr", {}, el("td", { class: "mono", text: r.label }), r.entries.map((e, ci) => el("td", { class: e.best ? "best" : e.provisional ? "provisional" : null },
        el("a", { class: "entry", href: `#/m/${H}/entry/${ri + 1}/${ci + 1}`, title: `cells ${e.cells.join(", ")}`, text: e.text }),
        e.note ? el("span", { class: "sel", text: e.note }) : null)));
    }));
  };
  table.columns.forEach((c, ci) => {
    const th = el("th", { class: "sortable", text: c, title: "sort by this column" });
    th.addEventListener("click", () => {
      if (sortBy === ci) desc = !desc; else { sortBy = ci; desc = table.layout.best !== "min"; }
      head.querySelectorAll("th").forEach((t) => t.classList.remove("sorted-asc", "sorted-desc"));
      th.classList.add(desc ? "sorted-desc" : "sorted-asc");
      fillRows();
    });
    head.append(th);
  });
  fillRows();
  out.push(section("Table",
    el("div", { class: "controls" }, select("figure", m.figures, value, (v) => { choice.value[H] = v; render(); }, m.figures.map((c) => m.words[c] || c))),
    el("div", { class: "scroll" }, el("table", { class: "results" }, el("thead", {}, head), tbody)),
    el("p", { class: "muted", text: table.legend + ". Click an entry for its cells." })));

  // Curves.
  const ys = m.columns.filter((c) => c !== "round");
  out.push(section("Curves",
    el("div", { class: "controls" },
      select("y", ys, y, (v) => { choice.y[H] = v; render(); }, ys.map((c) => m.words[c] || c)),
      select("x", ["round", "bits_sent_per_worker"], x, (v) => { choice.x[H] = v; render(); }, ["round", "bits sent per worker"]),
      m.select_path ? select(m.select_path, [""].concat(m.choices), pick, (v) => { choice.pick[H] = v; render(); },
        ["tuned, as in the table"].concat(m.choices)) : null,
      others.length ? select("compare with", [""].concat(others.map((o) => o.hash)), other, (v) => { choice.compare[H] = v; render(); },
        ["(none)"].concat(others.map((o) => `${o.name} ${short(o.hash)}`))) : null),
    compareNote,
    el("div", { class: "figures" }, figs.map((f) => chart(f)))));

  // Each cell's final figure against a swept parameter.
  if (m.swept.length && m.cell_figures.length) {
    const param = m.swept.includes(choice.param[H]) ? choice.param[H] : (m.swept.includes(m.select_path) ? m.select_path : m.swept[0]);
    const fig = m.cell_figures.includes(choice.cellFig[H]) ? choice.cellFig[H] : m.cell_figures[0];
    // Colours: the table rows', unless the x axis is what tells the rows
    // apart; then the other swept paths' values.
    const groupOf = {}, groups = [];
    if ((m.layout.rows || []).includes(param)) {
      const others = m.swept.filter((q) => q !== param && q !== "seed" && q !== m.select_path);
      for (const c of m.cells) {
        const label = others.map((q) => `${m.words[q] || q} = ${(c.values || {})[q] ?? ""}`).join(", ") || "every cell";
        let g = groups.find((x) => x.label === label);
        if (!g) groups.push(g = { label, color: m.palette[groups.length % m.palette.length] });
        groupOf[c.n] = g;
      }
    } else {
      table.rows.forEach((r) => { groups.push(r); r.entries.forEach((e) => e.cells.forEach((n) => { groupOf[n] = r; })); });
    }
    const points = m.cells.map((c) => ({ cell: c.n, label: c.label, x: (c.values || {})[param] || "", y: c.figures ? c.figures[fig] : null,
      diverged: c.status === "diverged", color: groupOf[c.n] ? groupOf[c.n].color : "#7f7f7f" }));
    const rowsShown = groups.map((r) => {
      const dot = el("span", { class: "dot" });
      dot.style.background = r.color; // a style attribute would break the page's content security policy
      return el("li", {}, dot, r.label);
    });
    if (points.some((p) => p.diverged)) rowsShown.push(el("li", { class: "extra" }, "× diverged"));
    out.push(section("Final figure against a parameter",
      el("div", { class: "controls" },
        select("parameter", m.swept, param, (v) => { choice.param[H] = v; render(); }, m.swept.map((p) => m.words[p] || p)),
        select("figure", m.cell_figures, fig, (v) => { choice.cellFig[H] = v; render(); }, m.cell_figures.map((c) => m.words[c] || c))),
      el("figure", { class: "chart sweep" }, scatter(points, m.words[param] || param, m.words[fig] || fig, (n) => { location.hash = `#/m/${H}/cell/${n}`; }),
        el("ul", { class: "legend" }, rowsShown)),
      el("p", { class: "muted", text: "One dot per finished cell (a cross where it diverged), in its group's colour; a click opens the cell." })));
  }

  // Cells, with their final figures; a click on a figure's header sorts by it.
  const cellRows = el("tbody");
  let cellSort = null, cellDesc = true;
  const fillCells = () => {
    const order = m.cells.slice();
    if (cellSort !== null) {
      const key = (c) => (c.figures && c.figures[cellSort] !== null && c.figures[cellSort] !== undefined ? c.figures[cellSort] : null);
      order.sort((a, b) => {
        const ka = key(a), kb = key(b);
        if (ka === null) return 1;
        if (kb === null) return -1;
        return cellDesc ? kb - ka : ka - kb;
      });
    }
    cellRows.replaceChildren(...order.map((c) => el("tr", { "data-cell": c.n },
      el("td", {}, el("a", { href: `#/m/${H}/cell/${c.n}`, class: "cell-link", text: String(c.n) })),
      el("td", { class: "mono", text: c.label }),
      el("td", {}, badge(c.status === "incomplete" && p.running && (p.running_cells || []).includes(c.n) ? "running" : c.status)),
      el("td", {}, c.status === "diverged" ? `diverged by round ${c.round} of ${c.rounds}` : [bar(c.round, c.rounds), `${c.round}/${c.rounds}`]),
      ...m.cell_figures.map((f) => c.status === "diverged"
        ? el("td", { class: "num", title: c.figures && c.figures[f] !== undefined ? `diverged; its last figure ${fmt(c.figures[f])}` : "diverged", text: "*" })
        : el("td", { class: "num", text: c.figures && c.figures[f] !== undefined ? fmt(c.figures[f]) : "" })))));
  };
  const cellHead = el("tr", {}, ...["cell", "swept values", "status", "progress"].map((h) => el("th", { text: h })),
    ...m.cell_figures.map((f) => {
      const th = el("th", { class: "sortable num", text: f, title: `sort the cells by ${f}` });
      th.addEventListener("click", () => {
        if (cellSort === f) cellDesc = !cellDesc; else { cellSort = f; cellDesc = !/(loss|gap|distance|norm_sq)$/.test(f); }
        fillCells();
      });
      return th;
    }));
  fillCells();
  out.push(section(`Cells (${m.cells.length})`, el("table", { class: "cells" }, el("thead", {}, cellHead), cellRows)));

  out.push(section("Downloads", downloads(H, m.tables, m.formats, 0, m.unfinished)));
  out.push(el("section", {}, el("details", {}, el("summary", { text: "Normalised manifest" }),
    el("pre", { text: JSON.stringify(m.manifest, null, 2) }))));
  return out;
}

async function pageEntry(hash, row, col) {
  const m = await get(`/api/manifests/${hash}`);
  const value = choice.value[m.hash] || m.layout.value;
  const e = await get(`/api/manifests/${m.hash}/entries/${row}/${col}?value=${encodeURIComponent(value)}`);
  const out = [crumbs(["Sweeps", "#/"], [m.name, `#/m/${m.hash}`], ["table entry"]),
    el("h1", {}, "Entry ", el("code", { text: e.row })),
    el("div", {}, `${e.column}: `, el("b", { text: e.text }), e.note, e.select ? el("span", { class: "muted", text: ` — ${e.select} chosen by the best mean of ${e.value} over seeds` }) : null)];
  for (const g of e.groups) {
    const title = e.select ? `${e.select} = ${g.value}${g.selected ? " (chosen: the best mean)" : ""}` : "cells";
    out.push(section(title, el("table", { class: "entry-cells" },
      el("tr", {}, ["cell", "swept values", "status", e.value].map((h) => el("th", { text: h }))),
      g.cells.map((c) => el("tr", {},
        el("td", {}, el("a", { href: `#/m/${m.hash}/cell/${c.n}`, class: "cell-link", text: String(c.n) })),
        el("td", { class: "mono", text: c.label }),
        el("td", {}, badge(c.status)),
        el("td", { class: "num", text: fmt(c.value) }))))));
  }
  return out;
}

async function pageCell(hash, n) {
  const c = await get(`/api/manifests/${hash}/cells/${n}`);
  const out = [crumbs(["Sweeps", "#/"], [c.name, `#/m/${c.manifest}`], [`cell ${c.n}`]),
    el("h1", {}, `Cell ${c.n} `, badge(c.status)),
    el("div", { class: "mono", text: c.label })];
  const facts = el("dl", { class: "facts" }, el("dt", { text: "cell key" }), el("dd", { class: "mono", text: c.key }),
    el("dt", { text: "manifest" }), el("dd", { class: "mono", text: c.manifest }),
    el("dt", { text: "progress" }), el("dd", { text: `round ${c.round} of ${c.rounds}` }),
    Object.entries(c.fingerprint || {}).map(([k, v]) => [el("dt", { text: k }), el("dd", { class: "mono", text: v })]));
  out.push(el("div", { class: "grid2" }, section("Fingerprint", facts), section("Settings", settings(c.config, c.values))));

  if (c.rounds_table) {
    const col = Object.fromEntries(c.rounds_table.map((k) => [k.name, k.values]));
    const cols = c.rounds_table.map((k) => k.name).filter((k) => k !== "round");
    const y = cols.includes(choice.cellY[c.manifest]) ? choice.cellY[c.manifest] : c.value;
    const words = (k) => c.words[k] || k;
    const fig = { name: y, title: `cell ${c.n}`, x: words("round"), y: words(y), series: [{ label: words(y), color: c.color, x: col.round, mean: col[y], std: [], seeds: 1,
      diverged: c.stages.some((s) => s.diverged) ? 1 : 0, running: c.status === "incomplete" ? 1 : 0 }] };
    out.push(section("Rounds", el("div", { class: "controls" }, select("y", cols, y, (v) => { choice.cellY[c.manifest] = v; render(); }, cols.map(words))), chart(fig, false)));
  }

  out.push(section("Stages", el("table", { class: "stages" },
    el("tr", {}, ["stage", "status", "cache key, inputs and outputs"].map((h) => el("th", { text: h }))),
    c.stages.map((s) => el("tr", {},
      el("td", { text: s.name }),
      el("td", {}, badge(s.status === "running" ? "incomplete" : s.status), s.cached ? el("div", { class: "muted", text: "reused an identical stage" }) : null,
        s.restarts ? el("div", { class: "muted", text: `started ${s.restarts + 1} times` }) : null,
        s.rounds ? el("div", { class: "muted", text: `round ${s.round}/${s.rounds}` }) : null,
        s.diverged ? el("div", { class: "muted", text: "diverged" }) : null),
      el("td", {},
        el("div", {}, "key ", el("code", { text: s.key })),
        s.inputs && s.inputs.length ? el("div", {}, "inputs ", s.inputs.map((i) => el("code", { text: i + " " }))) : null,
        s.outputs.map((o) => el("div", {}, `${o.name} `, el("code", { text: o.ref.digest }), el("span", { class: "muted", text: ` (${o.ref.size} bytes)` }))),
        s.summary ? el("div", { class: "muted" }, "summary ", el("code", { text: JSON.stringify(s.summary) })) : null,
        s.error ? el("div", { class: "error", text: s.error }) : null))))));

  const pair = [];
  if (c.histogram) pair.push(section("Partition (samples per worker and class)", heatmap(c.histogram)));
  if (c.mixing) {
    pair.push(section("Mixing matrices", el("p", { class: "muted", text: "spectral gap ρ = 1 − max(|λ₂|, |λₙ|)²" }),
      el("table", { class: "mixing" }, el("tr", {}, ["from round", "edges", "spectral gap"].map((h) => el("th", { class: "num", text: h }))),
        c.mixing.map((x) => el("tr", {}, el("td", { class: "num", text: String(x.from_round) }), el("td", { class: "num", text: String(x.edges) }),
          el("td", { class: "num", text: x.spectral_gap.toFixed(6) }))))));
  }
  if (pair.length) out.push(el("div", { class: "grid2" }, pair));
  out.push(section("Downloads (this cell)", downloads(c.manifest, c.tables, c.formats, c.n,
    c.status !== "completed" && c.status !== "diverged" && c.rounds_table)));
  out.push(el("section", {}, el("details", {}, el("summary", { text: "Configuration as JSON (normalised)" }),
    el("pre", { text: JSON.stringify(c.config, null, 2) }))));
  return out;
}

// settings lays a cell's configuration out as a table, one row per
// setting (nested blocks as dotted paths), the swept ones marked.
function settings(config, swept) {
  const rows = [];
  const walk = (v, path) => {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      for (const k of Object.keys(v)) walk(v[k], path ? `${path}.${k}` : k);
    } else {
      rows.push([path, Array.isArray(v) ? JSON.stringify(v) : String(v)]);
    }
  };
  walk(config, "");
  const isSwept = (p) => Object.keys(swept || {}).some((s) => p === s || p.startsWith(`${s}.`));
  return el("table", { class: "settings" }, el("tr", {}, el("th", { text: "setting" }), el("th", { text: "value" })),
    rows.map(([p, v]) => el("tr", { class: isSwept(p) ? "swept" : null }, el("td", { class: "mono", text: p }),
      el("td", { class: "mono" }, v, isSwept(p) ? el("span", { class: "muted", text: " (swept)" }) : null))));
}

// ---- routing and live updates ---------------------------------------------

let rendering = 0;
let renderMs = 0; // how long the last page took to fetch and draw
async function render() {
  const id = ++rendering;
  const started = performance.now();
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean);
  let page;
  try {
    if (parts[0] === "m" && parts[2] === "entry") page = await pageEntry(parts[1], parts[3], parts[4]);
    else if (parts[0] === "m" && parts[2] === "cell") page = await pageCell(parts[1], parts[3]);
    else if (parts[0] === "m") page = await pageManifest(parts[1]);
    else page = await pageStore();
  } catch (err) {
    page = [crumbs(["Sweeps", "#/"]), el("div", { class: "error", text: err.message })];
  }
  if (id !== rendering) return; // a newer render started meanwhile
  const y = window.scrollY;
  main.replaceChildren(...page);
  for (const svg of main.querySelectorAll("svg.scatter")) keepInside(svg);
  window.scrollTo(0, y);
  renderMs = performance.now() - started;
  main.dataset.seq = String(lastState.seq);
}

let lastState = { seq: 0 };
let pending = null;
// changed fetches the page again while a sweep records events: after a
// second, or five times as long as the last page took, so that a big
// sweep's page costs the machine running it little.
function changed() {
  if (pending) return;
  pending = setTimeout(() => { pending = null; render(); }, Math.max(1000, 5 * renderMs));
}

const writer = document.getElementById("writer");
// follow asks for the store's state once a second (a request that ends,
// unlike an open event stream, lets the page go idle: a headless browser
// screenshots it) and fetches the page again when the state changed.
async function follow() {
  try {
    onState(await get("/api/state"));
  } catch (err) {
    writer.textContent = `the server does not answer: ${err.message}`;
  }
  setTimeout(follow, 1000);
}
function onState(st) {
  writer.textContent = st.writer ? `written by ${st.writer}` : "no writer: the store is idle";
  writer.title = writer.textContent;
  writer.classList.toggle("live", !!st.writer);
  const first = lastState.seq === 0 && !lastState.updated;
  const differs = st.seq !== lastState.seq || st.updated !== lastState.updated || st.writer !== lastState.writer;
  lastState = st;
  if (!first && differs) changed();
}
follow();
window.addEventListener("hashchange", () => { window.scrollTo(0, 0); render(); });
render();
