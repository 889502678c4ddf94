// The visual review's checks, run in the page by bench/screens.py (page.evaluate(source, opts)).
// One arrow function, no globals: it reads the DOM as drawn and returns plain data.
//
// opts: {presenter: bool, revealLabel: str}. Returns
//   overlaps:  pairs of text labels inside one Plotly chart whose glyph boxes intersect
//   uniform:   heatmap panels that use under a quarter of their colour scale (unless it
//              is their declared least range, trace.meta.least_range)
//   first:     the first figure's top (a table's, on a view that draws only tables), a
//              pending predict box's and a "start the work" button's, against the viewport
//   truncated: chart titles cut by the chart's edge or ending in "…", tick labels cut by
//              the chart's edge, legends that scroll, HTML text cut with an ellipsis and
//              tables whose columns run off the page
//   scales:    value axes (linear, log, date) of a drawn trace that name fewer than two
//              values: one label gives no scale (a sweep's length axis read "1000" alone)
//   small:     (presenter) a chart's words a room reads (titles, axis titles, legends, notes
//              and panel titles) drawn under o.minPresenterPx: 12-13 px read as specks there
//   cells:     heatmaps whose numbers in cells plotly.js fitted under o.minCellPx (10 px on
//              a screen, 12 on a projector): one finding per chart, with its smallest size
//   ragged:    table columns of numbers (and "–" gaps) whose cells are not set flush right
//   stretched: panels of a grid of square maps (two or more heatmaps, each with as many
//              rows as columns) drawn over MAX_STRETCH times wider than tall, or taller
//   texts:     visible text runs outside data (inputs, code, tokens), for the language check
//   widgets:   each choice / number widget's label and the value it shows
(opts) => {
  const o = Object.assign({ presenter: false, revealLabel: "Reveal", minArea: 4, minPresenterPx: 14 }, opts || {});
  if (o.minCellPx === undefined) o.minCellPx = o.presenter ? 12 : 10;
  // A text's box across the line is its em box (one font size, centred in the line box of
  // ascent + descent, about 1.3 em): the glyphs of Latin text fit in it, so labels whose
  // line boxes overlap while their letters stay apart are not counted.
  const emInset = (el, across) => {
    const fs = parseFloat(getComputedStyle(el).fontSize) || 0;
    return Math.max(0, (across - fs) / 2);
  };
  const MIN_RATIO = 0.25;
  const MAX_STRETCH = 1.25; // a square map's panel drawn up to 5:4 reads as square
  const main = document.querySelector("[data-testid=stMain]") || document.body;
  const app = document.querySelector("[data-testid=stApp]") || document.body;
  const FIGURES = [
    ".js-plotly-plot",
    "[data-testid=stIFrame]",
    "[data-testid=stImage] img",
    ".kit-agrid",
    ".kit-vgrid",
    ".kit-strip",
  ].join(", ");

  const shown = (el) => {
    if (!el.getClientRects().length) return false;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.display === "none" || s.visibility === "hidden" || parseFloat(s.opacity) === 0) {
        return false;
      }
    }
    return true;
  };
  // Plotly puts zero-width spaces around a <sup>'s text, and an HTML grid's panel title a word
  // joiner after its range's dash (kit-vgrid): a finding quotes the words only.
  const clean = (s) => (s || "").replace(/[\u200b\u2060]/g, "").replace(/\s+/g, " ").trim();
  const round = (x) => Math.round(x * 10) / 10;

  // ---- geometry: a text's box as a screen polygon (rotated labels stay rotated) ----------
  const polygon = (el) => {
    const b = el.getBBox();
    const m = el.getScreenCTM() || el.closest("text").getScreenCTM();
    if (!m || b.width <= 0 || b.height <= 0) return null;
    const inset = emInset(el, b.height);
    const y0 = b.y + inset;
    const y1 = b.y + b.height - inset;
    return [
      [b.x, y0],
      [b.x + b.width, y0],
      [b.x + b.width, y1],
      [b.x, y1],
    ].map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
  };
  const area = (p) => {
    let s = 0;
    for (let i = 0; i < p.length; i++) {
      const [x0, y0] = p[i];
      const [x1, y1] = p[(i + 1) % p.length];
      s += x0 * y1 - x1 * y0;
    }
    return s / 2;
  };
  // Sutherland–Hodgman: the part of convex polygon `subject` inside convex polygon `clip`.
  const intersection = (subject, clip) => {
    const sign = area(clip) >= 0 ? 1 : -1;
    const inside = (p, a, b) => sign * ((b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])) >= 0;
    const cross = (p, q, a, b) => {
      const [x1, y1, x2, y2, x3, y3, x4, y4] = [...p, ...q, ...a, ...b];
      const d = (x1 - x2) * (y3 - y4) - (y1 - y2) * (x3 - x4);
      if (d === 0) return p;
      const t = ((x1 - x3) * (y3 - y4) - (y1 - y3) * (x3 - x4)) / d;
      return [x1 + t * (x2 - x1), y1 + t * (y2 - y1)];
    };
    let out = subject;
    for (let i = 0; i < clip.length && out.length; i++) {
      const a = clip[i];
      const b = clip[(i + 1) % clip.length];
      const input = out;
      out = [];
      for (let j = 0; j < input.length; j++) {
        const p = input[j];
        const q = input[(j + 1) % input.length];
        if (inside(q, a, b)) {
          if (!inside(p, a, b)) out.push(cross(p, q, a, b));
          out.push(q);
        } else if (inside(p, a, b)) {
          out.push(cross(p, q, a, b));
        }
      }
    }
    return out.length >= 3 ? Math.abs(area(out)) : 0;
  };
  const aabb = (p) => {
    const xs = p.map((v) => v[0]);
    const ys = p.map((v) => v[1]);
    return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
  };

  // ---- one Plotly chart ----------------------------------------------------------------
  const KINDS = [
    ["xtick", "x tick"],
    ["ytick", "y tick"],
    ["gtitle", "title"],
    ["g-xtitle", "x title"],
    ["g-ytitle", "y title"],
    ["annotation", "annotation"],
    ["legend", "legend"],
    ["colorbar", "colour bar"],
    ["textpoint", "point label"],
  ];
  const kindOf = (el) => {
    for (let e = el; e && !e.classList.contains("js-plotly-plot"); e = e.parentElement) {
      for (const [cls, name] of KINDS) {
        if (e.classList && (e.classList.contains(cls) || [...e.classList].some((c) => c.startsWith(cls)))) return name;
      }
    }
    return "text";
  };
  // A text's words, its lines (Plotly's <tspan class="line">) joined by a space.
  const words = (el) => {
    const lines = el.querySelectorAll("tspan.line");
    return clean(lines.length ? [...lines].map((l) => l.textContent).join(" ") : el.textContent);
  };
  const chartName = (gd, index) => {
    const title = gd.querySelector(".gtitle");
    const text = title ? words(title) : "";
    return text ? `#${index + 1} ${text.slice(0, 60)}` : `#${index + 1}`;
  };
  const labels = (gd) => {
    const found = [];
    for (const el of gd.querySelectorAll("svg text")) {
      if (el.closest(".hoverlayer, .modebar, .modebar-container")) continue;
      if (el.parentElement && el.parentElement.closest("text")) continue;
      const text = words(el);
      if (!text || !shown(el)) continue;
      // A title of several lines is one box per line: a short second line leaves room.
      const lines = [...el.querySelectorAll("tspan.line")].filter((l) => clean(l.textContent));
      for (const part of lines.length > 1 ? lines : [el]) {
        const poly = polygon(part);
        if (poly) found.push({ el, text, kind: kindOf(el), poly, box: aabb(poly) });
      }
    }
    return found;
  };

  const charts = [...main.querySelectorAll(".js-plotly-plot")].filter(shown);
  const overlaps = [];
  const uniform = [];
  const truncated = [];
  const scales = [];
  const small = [];
  const cells = [];
  const stretched = [];
  charts.forEach((gd, index) => {
    const chart = chartName(gd, index);
    const texts = labels(gd);
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        const a = texts[i];
        const b = texts[j];
        if (a.box[2] <= b.box[0] || b.box[2] <= a.box[0] || a.box[3] <= b.box[1] || b.box[3] <= a.box[1]) continue;
        if (a.el === b.el || a.el.contains(b.el) || b.el.contains(a.el)) continue;
        const px = intersection(a.poly, b.poly);
        if (px > o.minArea) {
          overlaps.push({ chart, a: a.text.slice(0, 40), b: b.text.slice(0, 40), kinds: `${a.kind}/${b.kind}`, px2: round(px) });
        }
      }
    }

    const layout = gd._fullLayout || {};
    (gd._fullData || []).forEach((trace, t) => {
      if (!["heatmap", "contour", "histogram2d"].includes(trace.type) || trace.visible === false) return;
      let lo = trace.zmin;
      let hi = trace.zmax;
      const axis = trace.coloraxis && layout[trace.coloraxis];
      if (axis) {
        lo = axis.cmin;
        hi = axis.cmax;
      }
      let min = Infinity;
      let max = -Infinity;
      for (const row of trace.z || []) {
        for (const v of row && row.length !== undefined ? row : [row]) {
          if (v === null || !Number.isFinite(+v)) continue;
          if (+v < min) min = +v;
          if (+v > max) max = +v;
        }
      }
      if (!Number.isFinite(lo) || !Number.isFinite(hi) || hi <= lo || min > max) return;
      // A scale held at its stated least range on purpose (an effect map whose every value
      // is negligible: views.causal.EFFECT_FLOOR, said on the page) is pale by design.
      const least = trace.meta && trace.meta.least_range;
      if (least && Math.abs(hi - lo - 2 * least) < 1e-9 * least) return;
      const share = (max - min) / (hi - lo);
      if (share < MIN_RATIO) {
        uniform.push({ chart, panel: trace.name || trace.xaxis + trace.yaxis || `trace ${t + 1}`, used: [min, max].map((v) => +v.toPrecision(3)), scale: [lo, hi].map((v) => +(+v).toPrecision(3)), share: +share.toFixed(3) });
      }
    });

    // A grid of square maps (a head per panel) keeps its panels square: drawn 1.9:1 on a
    // wide page, an attention pattern's diagonals and stripes flatten. A lone map, and
    // panels of other shapes (tokens × dimensions, strips), are laid out by their labels.
    const squares = (gd._fullData || []).filter((tr) => tr.type === "heatmap" && tr.visible === true
      && (tr.z || []).length > 1 && (tr.z || []).length === ((tr.z || [])[0] || []).length);
    if (new Set(squares.map((tr) => tr.xaxis)).size > 1) {
      for (const tr of squares) {
        const x = layout[`xaxis${tr.xaxis.slice(1)}`];
        const y = layout[`yaxis${tr.yaxis.slice(1)}`];
        const [w, h] = [x && x._length, y && y._length];
        if (w > 0 && h > 0 && Math.max(w / h, h / w) > MAX_STRETCH) {
          stretched.push({ chart, panel: `${tr.xaxis}${tr.yaxis}`, px: [round(w), round(h)] });
        }
      }
    }

    // A value axis a trace is drawn on, its tick labels shown: two named values at least.
    const drawn = new Set((gd._fullData || []).filter((tr) => tr.visible === true)
      .flatMap((tr) => [tr.xaxis, tr.yaxis]).filter(Boolean));
    for (const [name, axis] of Object.entries(layout)) {
      if (!/^[xy]axis\d*$/.test(name) || !axis || !drawn.has(axis._id)) continue;
      if (!["linear", "log", "date"].includes(axis.type) || !axis.visible || !axis.showticklabels) continue;
      const named = [...gd.querySelectorAll(`.${axis._id}tick text`)].filter((el) => shown(el) && words(el));
      if (named.length < 2) {
        scales.push({ chart, axis: name, labels: named.map((el) => words(el).slice(0, 20)) });
      }
    }

    // On a projector: the words a room reads, at the projector's type. Tick labels and the
    // numbers in cells and on bars are laid out by the rows they name, and are not counted.
    if (o.presenter) {
      for (const el of gd.querySelectorAll(".gtitle, .g-xtitle text, .g-ytitle text, .annotation-text, .legendtext, .cbtitle text")) {
        const text = words(el);
        // A part in its own type counts too: a <sup> (70 % of its line) or a <span> sized.
        const parts = [el, ...el.querySelectorAll("tspan")].filter((p) => clean(p.textContent));
        const px = Math.min(...parts.map((p) => parseFloat(getComputedStyle(p).fontSize) || 0));
        if (text && shown(el) && px < o.minPresenterPx) small.push({ chart, kind: kindOf(el), text: text.slice(0, 60), px: round(px) });
      }
    }

    // Numbers in cells: plotly.js shrinks them to their cell (textfont "auto"), to specks.
    const numbers = [...gd.querySelectorAll(".heatmap-label text")].filter((el) => shown(el) && words(el));
    const sizes = numbers.map((el) => parseFloat(getComputedStyle(el).fontSize) || 0);
    const least = Math.min(...sizes);
    if (numbers.length && least < o.minCellPx) {
      cells.push({ chart, px: round(least), numbers: numbers.length, text: words(numbers[sizes.indexOf(least)]) });
    }

    const frame = gd.getBoundingClientRect();
    const width = layout.width || frame.width;
    for (const el of gd.querySelectorAll(".gtitle, .g-xtitle text, .g-ytitle text, .annotation-text, .cbtitle text, .legendtitletext")) {
      const text = words(el);
      if (!text || !shown(el)) continue;
      const r = el.getBoundingClientRect();
      const why = [];
      if (/(…|\.\.\.)$/.test(text)) why.push("ends in an ellipsis");
      if (r.width > width + 1) why.push(`${Math.round(r.width)} px wide in a ${Math.round(width)} px chart`);
      else if (r.left < frame.left - 1 || r.right > frame.right + 1 || r.top < frame.top - 1 || r.bottom > frame.bottom + 1) why.push("cut by the chart's edge");
      if (why.length) truncated.push({ chart, kind: kindOf(el), text: text.slice(0, 80), why: why.join("; ") });
    }
    // Tick labels past the figure's edge are cut off by it (a margin narrower than its
    // labels). A label's own "…" is the figure's choice, with the whole text beside it.
    for (const el of gd.querySelectorAll(".xtick text, .ytick text")) {
      const text = words(el);
      if (!text || !shown(el)) continue;
      const r = el.getBoundingClientRect();
      if (r.left < frame.left - 1 || r.right > frame.right + 1 || r.top < frame.top - 1 || r.bottom > frame.bottom + 1) {
        truncated.push({ chart, kind: kindOf(el), text: text.slice(0, 80), why: "cut by the chart's edge" });
      }
    }
    // A legend taller than its figure scrolls (Plotly draws a scrollbar): the entries past
    // its bottom edge name lines the reader cannot find.
    const legend = gd.querySelector(".legend");
    const bar = legend && legend.querySelector(".scrollbar");
    if (bar && shown(legend) && bar.getBoundingClientRect().height > 0) {
      const edge = legend.querySelector(".bg").getBoundingClientRect();
      const hidden = [...legend.querySelectorAll(".traces")].filter((el) => el.getBoundingClientRect().bottom > edge.bottom + 1);
      const text = hidden.map((el) => words(el.querySelector(".legendtext") || el)).join(", ");
      truncated.push({ chart, kind: "legend", text: text.slice(0, 80), why: "a scrolling legend hides entries" });
    }
  });
  // The HTML map grids' labels: each text node's box (CSS-rotated text as its bounding box).
  [...main.querySelectorAll(".kit-agrid, .kit-vgrid, .kit-strip")].filter(shown).forEach((grid, index) => {
    const boxes = [];
    const walker = document.createTreeWalker(grid, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const text = clean(n.nodeValue);
      if (!text || !n.parentElement || !shown(n.parentElement)) continue;
      const range = document.createRange();
      range.selectNodeContents(n);
      const r = range.getBoundingClientRect();
      if (r.width <= 0 || r.height <= 0) continue;
      // Shrink across the line: horizontally for vertical writing modes.
      const vertical = getComputedStyle(n.parentElement).writingMode.startsWith("vertical");
      const dx = vertical ? emInset(n.parentElement, r.width) : 0;
      const dy = vertical ? 0 : emInset(n.parentElement, r.height);
      boxes.push({ text, box: [r.left + dx, r.top + dy, r.right - dx, r.bottom - dy] });
    }
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const [a, b] = [boxes[i].box, boxes[j].box];
        const px = Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0])) * Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
        if (px > o.minArea) {
          overlaps.push({ chart: `html map #${index + 1}`, a: boxes[i].text.slice(0, 40), b: boxes[j].text.slice(0, 40), kinds: "html", px2: round(px) });
        }
      }
    }
  });

  // Text that CSS cuts with an ellipsis: HTML titles (map grids, headings), and the labels
  // Streamlit cuts to one line (a metric's label, a button's): "target words looking
  // ahead to an ag…" on a projector. A select's chosen value is left out: its options
  // open in full.
  for (const el of main.querySelectorAll("*")) {
    if (el.closest(".js-plotly-plot, [data-baseweb=select], input, textarea") || !shown(el)) continue;
    const s = getComputedStyle(el);
    if (s.textOverflow === "ellipsis" && el.scrollWidth > el.clientWidth + 1 && clean(el.textContent)) {
      truncated.push({ chart: "html", kind: el.tagName.toLowerCase(), text: clean(el.textContent).slice(0, 80), why: "cut with an ellipsis" });
    }
  }

  // A table (st.table, HTML: what presenter mode draws) whose columns run off the page's
  // edge: a room cannot scroll sideways. The chat page's cache table hid three columns.
  for (const table of main.querySelectorAll("[data-testid=stTable]")) {
    const box = table.querySelector(":scope > div"); // after a fitted table's own <style>
    if (box && shown(table) && box.scrollWidth > box.clientWidth + 1) {
      const head = clean(table.querySelector("th")?.textContent).slice(0, 40);
      truncated.push({ chart: "html", kind: "table", text: head, why: `columns run ${box.scrollWidth - box.clientWidth} px off the page` });
    }
  }

  // ---- ragged: a table's column of numbers set flush left ---------------------------------
  // st.table aligns a cell by its column's Arrow type: a number column with a gap ("–") is
  // text, and its numbers stood flush left, ragged under one another (Alignment › Measured).
  const ragged = [];
  const NUMBER = /^[-−+]?\d[\d,]*(\.\d+)?(e[-+]?\d+)?%?$/;
  for (const table of main.querySelectorAll("[data-testid=stTable] table")) {
    if (!shown(table)) continue;
    const rows = [...table.querySelectorAll("tbody tr")];
    const heads = [...table.querySelectorAll("thead th")];
    for (let c = 0; rows.length && c < rows[0].children.length; c++) {
      const cells = rows.map((r) => r.children[c]).filter(Boolean);
      const texts = cells.map((td) => clean(td.textContent));
      if (!texts.some((x) => NUMBER.test(x)) || !texts.every((x) => x === "–" || NUMBER.test(x))) continue;
      const left = cells.filter((td) => !["right", "end"].includes(getComputedStyle(td).textAlign));
      if (left.length) ragged.push({ column: clean(heads[c]?.textContent).slice(0, 40), left: left.length, cells: cells.length });
    }
  }

  // ---- the first screen ----------------------------------------------------------------
  const mainTop = main.getBoundingClientRect().top;
  const scrolled = main.scrollTop || 0;
  const top = (el) => el.getBoundingClientRect().top - mainTop + scrolled;
  const figures = [...main.querySelectorAll(FIGURES)]
    .filter((el) => shown(el) && el.getBoundingClientRect().width > 20 && el.getBoundingClientRect().height > 20)
    .map((el) => ({ kind: el.matches(".js-plotly-plot") ? "chart" : el.tagName.toLowerCase() === "iframe" || el.matches("[data-testid=stIFrame]") ? "iframe" : el.tagName.toLowerCase() === "img" ? "image" : "html map", top: Math.round(top(el)) }))
    .sort((a, b) => a.top - b.top);
  const reveal = [...main.querySelectorAll("button")].find((b) => shown(b) && clean(b.innerText) === o.revealLabel);
  let pending = null;
  if (reveal) {
    const box = reveal.closest("[data-testid=stVerticalBlock]") || reveal;
    pending = { top: Math.round(top(box)), bottom: Math.round(top(box) + box.getBoundingClientRect().height) };
  }
  // A view whose figure waits for heavy work (a live training run, a queued job) offers
  // the button that starts it: keyed "…-run" or "…-train".
  const keyOf = (el) => [...el.classList].find((c) => /^st-key-.+-(run|train)$/.test(c));
  const starter = [...main.querySelectorAll('[class*="st-key-"]')]
    .find((el) => keyOf(el) && shown(el) && el.querySelector("button"));
  const start = starter ? {
    key: keyOf(starter),
    top: Math.round(top(starter)),
    bottom: Math.round(top(starter) + starter.getBoundingClientRect().height),
  } : null;
  // A view that draws only a table (a vocabulary, measured numbers): the table is its figure.
  const tables = figures.length ? [] : [...main.querySelectorAll("[data-testid=stDataFrame], [data-testid=stTable]")]
    .filter((el) => shown(el) && el.getBoundingClientRect().height > 20)
    .map((el) => ({ kind: "table", top: Math.round(top(el)) }));
  const first = {
    viewport: innerHeight,
    figure: figures.length ? figures[0] : tables.length ? tables[0] : null,
    figures: figures.length,
    pending,
    start,
  };

  // ---- text runs, for the language check ---------------------------------------------
  const SKIP = [
    "script", "style", "noscript", "textarea", "input", "code", "pre", ".katex",
    ".xtick", ".ytick", ".textpoint", ".hoverlayer", ".modebar-container",
    "[data-testid=stIFrame]", "[data-testid^=stIcon]", ".kit-agrid-src", ".kit-agrid-tgt", ".kit-vgrid-q",
    ".kit-vgrid-k", ".kit-strip-cells", "[data-testid=stSliderTickBar]",
  ].join(", ");
  const texts = [];
  const walker = document.createTreeWalker(app, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = clean(n.nodeValue);
    const parent = n.parentElement;
    if (!text || !parent || parent.closest(SKIP) || !shown(parent)) continue;
    const holder = parent.closest("[data-testid]");
    texts.push({ text: text.slice(0, 300), where: holder ? holder.getAttribute("data-testid") : parent.tagName.toLowerCase() });
  }

  // A data frame is drawn on a canvas; its column names are in the grid's accessible table.
  for (const frame of main.querySelectorAll("[data-testid=stDataFrame]")) {
    if (!shown(frame)) continue;
    for (const th of frame.querySelectorAll("th[role=columnheader]")) {
      const text = clean(th.textContent);
      if (text) texts.push({ text: text.slice(0, 300), where: "stDataFrame column" });
    }
  }

  // ---- widgets: label and shown value ----------------------------------------------------
  const widgets = [];
  const WIDGETS = "[data-testid=stSelectbox], [data-testid=stButtonGroup], [data-testid=stRadio], [data-testid=stSlider], [data-testid=stNumberInput]";
  for (const el of main.querySelectorAll(WIDGETS)) {
    if (!shown(el)) continue;
    const id = el.getAttribute("data-testid");
    const labelEl = el.querySelector("[data-testid=stWidgetLabel]");
    const label = labelEl ? clean(labelEl.innerText) : "";
    const w = { kind: id.replace(/^st/, "").toLowerCase(), label, shown: null, index: null };
    if (id === "stSelectbox") {
      const input = el.querySelector("input");
      w.shown = input ? input.value : clean(el.innerText.replace(label, ""));
    } else if (id === "stButtonGroup" || id === "stRadio") {
      const options = id === "stRadio"
        ? [...el.querySelectorAll("[data-testid=stRadioOption]")]
        : [...el.querySelectorAll("[role=radio], [role=checkbox]")];
      const on = options.findIndex((b) => b.getAttribute("aria-checked") === "true" || b.getAttribute("data-selected") === "true" || (b.querySelector("input") && b.querySelector("input").checked));
      w.index = on < 0 ? null : on;
      w.shown = on < 0 ? null : clean(options[on].innerText);
    } else if (id === "stSlider") {
      const thumbs = [...el.querySelectorAll("[data-testid=stSliderThumbValue]")].map((v) => clean(v.innerText));
      w.shown = thumbs.join(" – ");
      const range = el.querySelector("input[type=range]");
      w.index = range ? Number(range.value) : null;
    } else {
      const input = el.querySelector("input");
      w.shown = input ? input.value : null;
    }
    widgets.push(w);
  }

  return { overlaps, uniform, truncated, scales, small, cells, ragged, stretched, first, texts, widgets, charts: charts.length, url: location.href };
}
