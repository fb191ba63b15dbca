// report.js — the HeadLab report's figures, runs table and run filter (core/report/HtmlReport.h).
// Everything it draws is in the page: the data (#headlab-data, computed by HeadLab: decimated
// curves, run values, learned fractions with their Wilson intervals, the search's crossings and
// law) and D3, above. No network, no server.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("headlab-data").textContent);
  const runs = data.runs;
  const tooltip = document.getElementById("tooltip");
  // Numbers as a reader takes them in: below 0.001 (and from 100,000) as 2.923e-5, not 0.00002923.
  // `digits` significant (as many as the number needs where not given), trailing zeros dropped.
  const numberText = (digits) => {
    const exponent = d3.format(digits ? `.${digits - 1}~e` : "~e"), plain = d3.format(digits ? `.${digits}~g` : "~g");
    return (v) => (v !== 0 && (Math.abs(v) < 1e-3 || Math.abs(v) >= 1e5) ? exponent : plain)(v);
  };
  const fmt = numberText(4);
  const colours = d3.schemeTableau10;
  const colourOf = (i) => colours[i % colours.length];
  const $ = (id) => document.getElementById(id);
  let selected = runs.map(() => true); // the runs the table's filter selects
  const listeners = []; // redrawn when the selection changes

  // --- header --------------------------------------------------------------------------------------
  $("title").textContent = data.name || "HeadLab session";
  $("description").textContent = data.lesson ? "" : data.description;
  if (data.lesson && data.description) {
    $("lesson").hidden = false;
    $("lesson").textContent = "What to look for: " + data.description;
  }
  const tagSpans = (tags) => tags.map((t) => `<span class="tag">${escapeHtml(t)}</span>`).join("");
  $("session-note").innerHTML = tagSpans(data.tags) + escapeHtml(data.note || "");
  function escapeHtml(s) {
    return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
  }

  // The session inside the page, as its file held it (HtmlEmbed.h): gzip, then base64.
  const sessionElement = document.getElementById("headlab-session");
  async function sessionBlob() {
    const raw = atob(sessionElement.textContent.trim());
    const bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; ++i) bytes[i] = raw.charCodeAt(i);
    let blob = new Blob([bytes]);
    if (sessionElement.dataset.encoding === "gzip")
      blob = await new Response(blob.stream().pipeThrough(new DecompressionStream("gzip"))).blob();
    return new Blob([blob], { type: "application/x-yaml" });
  }
  function download(blob, name) {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.appendChild(a);
    a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }
  $("download-session").addEventListener("click", async (e) => {
    e.preventDefault();
    download(await sessionBlob(), (data.name || "session") + ".yaml");
  });
  $("download-runs").addEventListener("click", (e) => {
    e.preventDefault();
    const lines = [columns.map((c) => csvField(c.title)).join(",")];
    runs.forEach((r, i) => { if (selected[i]) lines.push(columns.map((c) => csvField(c.text(r))).join(",")); });
    download(new Blob([lines.join("\n") + "\n"], { type: "text/csv" }), (data.name || "session") + "-runs.csv");
  });
  function csvField(s) {
    s = String(s);
    return /[",\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }
  const kib = (n) => (n / 1024 < 1024 ? (n / 1024).toFixed(0) + " KiB" : (n / 1048576).toFixed(1) + " MiB");
  $("sizes").textContent = `${runs.length} runs · the session ${kib(+sessionElement.dataset.bytes)} inside`;

  // --- the run filter (core/session/RunFilter.h; the same grammar, over values HeadLab computed) ---
  $("filter-help").textContent = data.filter_help;
  const STATUSES = data.statuses;
  const INTEGER = /^[+-]?[0-9]{1,30}$/;
  const TAG = /^[A-Za-z0-9_.:+\-/]{1,64}$/;
  const metricKeys = new Set(runs.flatMap((r) => Object.keys(r.metrics)));
  const quoted = (t) => (t.length <= 40 ? `'${t}'` : `'${t.slice(0, 16)}…${t.slice(-16)}' (${t.length} characters)`);
  function parseKey(key) {
    const open = key.indexOf("(");
    if (open <= 0 || key.length < open + 3 || !key.endsWith(")")) return null;
    const curve = key.slice(open + 1, -1);
    if (curve.includes("(") || curve.includes(")")) return null;
    return [key.slice(0, open), curve];
  }
  const lowerIsBetter = (key) => data.lower_is_better[key] ?? true; // HeadLab's answer per key
  function number(text) {
    const t = text.toLowerCase();
    if (t === ".nan" || t === "nan") return NaN;
    if ([".inf", "+.inf", "inf", "+inf"].includes(t)) return Infinity;
    if (["-.inf", "-inf"].includes(t)) return -Infinity;
    if (!/^[0-9.e+\-]+$/.test(t)) return null;
    const v = Number(text);
    return Number.isNaN(v) ? null : v;
  }
  function compare(a, op, b) {
    switch (op) {
      case "<": return a < b;
      case "<=": return a <= b;
      case ">": return a > b;
      case ">=": return a >= b;
      case "=": return a === b;
      default: return a !== b;
    }
  }
  function compareText(a, op, b) {
    if (INTEGER.test(a) && INTEGER.test(b)) return compare(BigInt(a), op, BigInt(b));
    const x = number(a), y = number(b);
    if (x !== null && y !== null) return compare(x, op, y);
    if (op === "=" || op === "!=") return (a === b) === (op === "=");
    return false;
  }
  // A run's value of `key`: a statistic of a curve, else a stored metric (HeadLab wrote NaN and
  // ±inf as text: JSON has no such numbers); undefined where it has none.
  function runValue(r, key) {
    const v = key in r.values ? r.values[key] : key in r.metrics ? r.metrics[key] : undefined;
    return typeof v === "string" ? Number(v) : v;
  }
  function parseFilter(text) {
    const terms = [];
    const known = (key) => data.axes.includes(key) || metricKeys.has(key);
    const unknown = (word, key) => {
      if (known(key)) return "";
      const p = parseKey(key);
      if (p) return data.statistics.includes(p[0]) ? "" : `${quoted(word)}: no statistic '${p[0]}' (${data.statistics.join(", ")})`;
      return `${quoted(word)}: no axis or metric ${quoted(key)} (axes: ${[...data.axes].sort().map((a) => a + ", ").join("")}status, learned, tag, a metric such as final_test_loss, or STAT(CURVE) such as min(test_loss))`;
    };
    for (const word of text.split(/\s+/).filter((w) => w)) {
      if (["learned", "!learned", "not-learned"].includes(word)) {
        terms.push({ key: "learned", op: "", value: word === "learned" ? "1" : "0" });
        continue;
      }
      const colon = word.indexOf(":");
      const head = colon < 0 ? word : word.slice(0, colon);
      if (["best", "worst", "!outliers"].includes(head)) {
        let rest = colon < 0 ? "" : word.slice(colon + 1), value = "", key = data.rank_key;
        if (head !== "!outliers") {
          const c = rest.indexOf(":");
          value = c < 0 ? rest : rest.slice(0, c);
          rest = c < 0 ? "" : rest.slice(c + 1);
          if (!INTEGER.test(value) || +value < 1 || +value > 1e9) throw `${quoted(word)}: expected ${head}:K or ${head}:K:KEY, K a whole number from 1`;
        } else if (colon >= 0 && !rest) throw `${quoted(word)}: expected !outliers or !outliers:KEY`;
        if (rest) key = rest;
        const why = unknown(word, key);
        if (why) throw why;
        terms.push({ key, op: head, value });
        continue;
      }
      const at = word.search(/[=!<>]/);
      if (at <= 0) throw `${quoted(word)}: expected KEY=VALUE, KEY<X, status=S or learned`;
      let op = ["==", "!=", "<=", ">=", "=", "<", ">"].find((o) => word.startsWith(o, at)) || "";
      const key = word.slice(0, at), value = word.slice(at + op.length);
      if (op === "==") op = "=";
      if (!op || !value) throw `${quoted(word)}: expected KEY=VALUE, KEY<X, status=S or learned`;
      const ordered = op !== "=" && op !== "!=";
      if (ordered && number(value) === null) throw `${quoted(word)}: ${op} compares numbers, and ${quoted(value)} is not one`;
      if (key === "tag") {
        if (ordered || !TAG.test(value)) throw `${quoted(word)}: tag=T or tag!=T, T one word (a run's tags)`;
      } else if (key === "status") {
        if (!STATUSES.includes(value) || ordered) throw `${quoted(word)}: status is one of ${STATUSES.join(", ")} (= or !=)`;
      } else {
        const why = unknown(word, key);
        if (why) throw why;
      }
      terms.push({ key, op, value });
    }
    return terms;
  }
  function quantile(sorted, q) {
    const at = (sorted.length - 1) * q, below = Math.floor(at), above = Math.min(below + 1, sorted.length - 1);
    return sorted[below] + (sorted[above] - sorted[below]) * (at - below);
  }
  // Which runs meet the filter (RunFilter::select): the terms of one run, then those over the runs
  // together in the order typed.
  function select(terms) {
    let keep = runs.map((r) => terms.every((t) => {
      if (["best", "worst", "!outliers"].includes(t.op)) return true;
      if (t.key === "learned") return r.learned !== null && r.learned === (t.value === "1");
      if (t.key === "status") return (r.status === t.value) === (t.op === "=");
      if (t.key === "tag") return r.tags.includes(t.value) === (t.op === "=");
      if (t.key in r.labels) return compareText(r.labels[t.key], t.op, t.value);
      const v = runValue(r, t.key);
      if (v === undefined) return false;
      const y = number(t.value);
      if (Number.isNaN(v)) return t.op === "!="; // NaN equals nothing, itself included
      return y !== null ? compare(v, t.op, y) : (t.op === "!=");
    }));
    for (const t of terms) {
      if (!["best", "worst", "!outliers"].includes(t.op)) continue;
      const lower = lowerIsBetter(t.key);
      const values = [];
      runs.forEach((r, i) => { const v = runValue(r, t.key); if (keep[i] && v !== undefined) values.push([i, v]); });
      if (t.op === "!outliers") {
        const finite = values.map((x) => x[1]).filter(Number.isFinite).sort((a, b) => a - b);
        const fenced = finite.length >= 4;
        const q1 = fenced ? quantile(finite, 0.25) : 0, q3 = fenced ? quantile(finite, 0.75) : 0;
        for (const [i, v] of values)
          if (!Number.isFinite(v) || (fenced && (lower ? v > q3 + 3 * (q3 - q1) : v < q1 - 3 * (q3 - q1)))) keep[i] = false;
        continue;
      }
      const ascending = (t.op === "best") === lower;
      const ranked = values.filter((x) => !Number.isNaN(x[1]))
        .map((x, order) => [...x, order])
        .sort((a, b) => (a[1] === b[1] ? a[2] - b[2] : ascending ? a[1] - b[1] : b[1] - a[1]));
      const chosen = new Set(ranked.slice(0, +t.value).map((x) => x[0]));
      keep = keep.map((k, i) => k && chosen.has(i));
    }
    return keep;
  }
  function applyFilter() {
    const text = $("filter").value, status = $("filter-status");
    try {
      selected = select(parseFilter(text));
      status.classList.remove("error");
      status.textContent = `${selected.filter((x) => x).length} of ${runs.length} runs`;
    } catch (why) {
      selected = runs.map(() => true);
      status.classList.add("error");
      status.textContent = String(why);
    }
    drawTable();
    listeners.forEach((f) => f());
  }
  $("filter").addEventListener("input", applyFilter);
  // The page's state as the filter's text in the address (report.html#filter=heads%3D12).
  $("filter").addEventListener("change", () => { history.replaceState(null, "", "#filter=" + encodeURIComponent($("filter").value)); });
  if (location.hash.startsWith("#filter=")) $("filter").value = decodeURIComponent(location.hash.slice(8));

  // --- the runs table ------------------------------------------------------------------------------
  const hasMetric = (k) => runs.some((r) => k in r.metrics);
  const columns = [
    { title: "run", text: (r) => r.index, num: true },
    { title: "run_id", text: (r) => r.id, cls: "text" },
    ...data.axes.map((a) => ({ title: a, text: (r) => r.labels[a] ?? "", num: true })),
    { title: "status", text: (r) => r.status, cls: "text" },
    { title: "learned", text: (r) => (r.learned === null ? "" : r.learned ? "yes" : "no"), cls: "text learned" },
    ...["final_test_loss", "min_test_loss"].filter(hasMetric).map((k) => ({ title: k, text: (r) => (k in r.metrics ? fmt(runValue(r, k)) : ""), num: true })),
    { title: "tags", html: (r) => tagSpans(r.tags), text: (r) => r.tags.join(" "), cls: "text" },
    { title: "note", text: (r) => r.note, cls: "note" },
  ];
  let sortBy = 0, sortUp = true;
  function drawTable() {
    const table = $("runs-table");
    const order = runs.map((r, i) => i).filter((i) => selected[i]);
    const c = columns[sortBy];
    order.sort((a, b) => {
      const x = c.text(runs[a]), y = c.text(runs[b]);
      const nx = Number(x), ny = Number(y);
      const d = c.num && x !== "" && y !== "" && !isNaN(nx) && !isNaN(ny) ? nx - ny : String(x).localeCompare(String(y));
      return (sortUp ? d : -d) || a - b;
    });
    const head = "<thead><tr>" + columns.map((col, k) => `<th class="${col.cls || ""}" data-k="${k}">${escapeHtml(col.title)}${k === sortBy ? (sortUp ? " ▲" : " ▼") : ""}</th>`).join("") + "</tr></thead>";
    const body = order.map((i) => {
      const r = runs[i];
      return `<tr data-run="${i}" class="learned-${r.learned === null ? "none" : r.learned ? "yes" : "no"}">` +
        columns.map((col) => `<td class="${col.cls || ""}">${col.html ? col.html(r) : escapeHtml(col.text(r))}</td>`).join("") + "</tr>";
    }).join("");
    table.innerHTML = head + "<tbody>" + body + "</tbody>";
    table.querySelectorAll("th").forEach((th) => th.addEventListener("click", () => {
      const k = +th.dataset.k;
      sortUp = k === sortBy ? !sortUp : true;
      sortBy = k;
      drawTable();
    }));
  }

  // --- one figure: axes, lines or points with whiskers, reference lines, a legend that toggles
  // series, and the value nearest the cursor ------------------------------------------------------
  function chart(container, spec) {
    const width = 960, height = spec.height || 420, m = { top: 14, right: 96, bottom: 48, left: 64 };
    container.innerHTML = "";
    const svg = d3.select(container).append("svg").attr("viewBox", `0 0 ${width} ${height}`)
      .attr("width", width).attr("height", height).attr("role", "img").attr("aria-label", spec.title || "");
    const finite = (v) => v !== null && Number.isFinite(v) && (!spec.logY || v > 0);
    const xs = [], ys = [];
    for (const s of spec.series) for (const p of s.points) {
      if (Number.isFinite(p.x) && (!spec.logX || p.x > 0)) xs.push(p.x);
      if (finite(p.y)) ys.push(p.y);
      if (p.low !== undefined && finite(p.low)) ys.push(p.low);
      if (p.high !== undefined && finite(p.high)) ys.push(p.high);
    }
    for (const r of spec.refs || []) ys.push(r.y);
    if (!xs.length || !ys.length) {
      svg.append("text").attr("x", width / 2).attr("y", height / 2).attr("text-anchor", "middle").text(spec.empty || "Nothing to draw yet");
      return;
    }
    // Markers keep clear of the frame: a tenth of the span (in decades on a log axis) each side.
    const padded = (e, log) => {
      if (!spec.pad) return e;
      if (log) { const k = Math.pow(e[1] / e[0], 0.08) || 1.5; return [e[0] / k, e[1] * k]; }
      const k = (e[1] - e[0]) * 0.08 || 1; return [e[0] - k, e[1] + k];
    };
    const xDomain = padded(d3.extent(xs), spec.logX);
    let yDomain = spec.yDomain || padded(d3.extent(ys), spec.logY);
    if (spec.yFromZero && !spec.logY && yDomain[0] >= 0) yDomain = [0, yDomain[1]];
    const x = (spec.logX ? d3.scaleLog() : d3.scaleLinear()).domain(xDomain).range([m.left, width - m.right]);
    const y = (spec.logY ? d3.scaleLog() : d3.scaleLinear()).domain(yDomain).range([height - m.bottom, m.top]);
    if (!spec.logX) x.nice();
    if (!spec.logY && !spec.yDomain) y.nice();
    // Round ticks on a log axis: 1, 2 and 5 times a power of ten, or only the powers where that
    // crowds it.
    const logTicks = (scale) => {
      const mantissa = (t) => t / Math.pow(10, Math.floor(Math.log10(t) + 1e-9));
      let t = scale.ticks();
      if (t.length > 10) t = t.filter((v) => [1, 2, 5].some((k) => Math.abs(mantissa(v) - k) < 1e-6));
      if (t.length > 10) t = t.filter((v) => Math.abs(mantissa(v) - 1) < 1e-6);
      return t;
    };
    // Short tick labels (5e-5, not 0.00005), clear of the axis title.
    const tickText = numberText();
    const xTicks = spec.logX ? logTicks(x) : x.ticks(8);
    const yTicks = spec.logY ? logTicks(y) : y.ticks(6);
    svg.append("g").attr("class", "grid").selectAll("line").data(yTicks).enter().append("line")
      .attr("x1", m.left).attr("x2", width - m.right).attr("y1", y).attr("y2", y);
    svg.append("g").attr("class", "axis").attr("transform", `translate(0,${height - m.bottom})`)
      .call(d3.axisBottom(x).tickValues(xTicks).tickFormat(spec.xFormat || tickText));
    svg.append("g").attr("class", "axis").attr("transform", `translate(${m.left},0)`)
      .call(d3.axisLeft(y).tickValues(yTicks).tickFormat(tickText));
    svg.append("text").attr("class", "axis-title").attr("x", (m.left + width - m.right) / 2).attr("y", height - 10).attr("text-anchor", "middle").text(spec.xTitle);
    svg.append("text").attr("class", "axis-title").attr("transform", `translate(16,${(m.top + height - m.bottom) / 2}) rotate(-90)`).attr("text-anchor", "middle").text(spec.yTitle);
    for (const r of spec.refs || []) {
      if (r.y < y.domain()[0] || r.y > y.domain()[1]) continue;
      svg.append("line").attr("class", "plateau").attr("x1", m.left).attr("x2", width - m.right).attr("y1", y(r.y)).attr("y2", y(r.y));
      svg.append("text").attr("class", "plateau-label").attr("x", width - m.right + 4).attr("y", y(r.y) + 4).text(r.label);
    }
    const plot = svg.append("g");
    const groups = spec.series.map((s, k) => {
      const g = plot.append("g").attr("class", "series").attr("data-series", s.name);
      const pts = s.points.filter((p) => Number.isFinite(p.x) && finite(p.y) && (!spec.logX || p.x > 0));
      if (s.line !== false) {
        g.append("path").attr("class", "line").attr("stroke", s.colour).attr("stroke-dasharray", s.dash || null)
          .attr("d", d3.line().defined((p) => finite(p.y)).x((p) => x(p.x)).y((p) => y(p.y))(pts));
      }
      if (s.markers) {
        for (const p of pts) {
          if (p.low !== undefined && finite(p.low) && finite(p.high))
            g.append("line").attr("x1", x(p.x)).attr("x2", x(p.x)).attr("y1", y(p.low)).attr("y2", y(p.high)).attr("stroke", s.colour).attr("stroke-width", 1.2).attr("opacity", spec.whiskerOpacity || 1);
          g.append("circle").attr("cx", x(p.x)).attr("cy", y(p.y)).attr("r", 3.5).attr("stroke", s.colour)
            .attr("fill", p.hollow ? "white" : s.colour).attr("stroke-width", 1.5);
        }
      }
      return { g, s, pts, shown: true, k };
    });
    // The legend: one entry per series; a click hides or shows it (and the other entries keep
    // their place), a double click shows that one alone, and again every one.
    const legend = document.createElement("div");
    legend.className = "legend";
    container.appendChild(legend);
    for (const item of groups) {
      const entry = document.createElement("span");
      entry.className = "entry";
      entry.dataset.series = item.s.name;
      entry.innerHTML = `<span class="swatch" style="background:${item.s.colour}"></span>${escapeHtml(item.s.name)}` +
        (item.s.note ? ` <span class="note">${escapeHtml(item.s.note)}</span>` : "");
      entry.addEventListener("click", () => {
        item.shown = !item.shown;
        item.g.classed("hidden", !item.shown);
        entry.classList.toggle("off", !item.shown);
      });
      entry.addEventListener("dblclick", () => {
        const alone = groups.every((other) => other.shown === (other === item));
        for (const other of groups) {
          other.shown = alone || other === item;
          other.g.classed("hidden", !other.shown);
          legend.querySelector(`[data-series="${CSS.escape(other.s.name)}"]`).classList.toggle("off", !other.shown);
        }
      });
      legend.appendChild(entry);
    }
    // The value under the cursor: the nearest point of a shown series, within 30 pixels.
    const marker = svg.append("circle").attr("r", 5).attr("fill", "none").attr("stroke", "#000").style("display", "none");
    svg.append("rect").attr("class", "hover").attr("x", m.left).attr("y", m.top).attr("width", width - m.left - m.right)
      .attr("height", height - m.top - m.bottom).attr("fill", "transparent")
      .on("mousemove", function () {
        const [mx, my] = d3.mouse(this);
        let best = null, bestD = 900;
        for (const item of groups) {
          if (!item.shown) continue;
          for (const p of item.pts) {
            const dx = x(p.x) - mx, dy = y(p.y) - my, d = dx * dx + dy * dy;
            if (d < bestD) { bestD = d; best = [item, p]; }
          }
        }
        if (!best) { marker.style("display", "none"); tooltip.hidden = true; return; }
        const [item, p] = best;
        marker.style("display", null).attr("cx", x(p.x)).attr("cy", y(p.y));
        tooltip.hidden = false;
        tooltip.textContent = spec.describe ? spec.describe(item.s, p) : `${item.s.name}\n${spec.xTitle} ${fmt(p.x)}\n${spec.yTitle} ${fmt(p.y)}`;
        tooltip.style.left = d3.event.clientX + 14 + "px";
        tooltip.style.top = d3.event.clientY + 10 + "px";
      })
      .on("mouseleave", () => { marker.style("display", "none"); tooltip.hidden = true; });
  }

  // --- the loss curves -----------------------------------------------------------------------------
  const curveSelect = $("loss-curve");
  for (const c of data.curves) curveSelect.add(new Option(c, c));
  curveSelect.value = data.curves.includes("test_loss") ? "test_loss" : data.curves[0];
  const isLoss = (c) => /loss/.test(c);
  function drawLoss() {
    if (!runs.some((r) => Object.keys(r.curves).length)) {
      $("loss").hidden = true; // an archive of each run's metrics: the table and figures have them
      return;
    }
    const curve = curveSelect.value, onlySelected = $("loss-selected").checked;
    const series = [];
    runs.forEach((r, i) => {
      if (onlySelected && !selected[i]) return;
      const c = r.curves[curve];
      if (!c) return;
      series.push({ name: `#${i} ${r.name}`, colour: colourOf(i), run: i,
        note: r.learned === null ? "" : r.learned ? "learned" : "stuck",
        points: c[0].map((s, k) => ({ x: s, y: c[1][k] })) });
    });
    chart($("loss-figure"), {
      title: "Loss curves", xTitle: "step", yTitle: curve.replace(/_/g, " "), series,
      logX: $("loss-logx").checked, logY: $("loss-logy").checked, yFromZero: true,
      refs: isLoss(curve) ? data.plateaus.map((p) => ({ y: p.loss, label: p.label })) : [],
      empty: "No run of the selection has this curve",
      describe: (s, p) => `${s.name}\nstep ${p.x}\n${curve} ${fmt(p.y)}`,
    });
  }
  [curveSelect, $("loss-logx"), $("loss-logy"), $("loss-selected")].forEach((el) => el.addEventListener("change", drawLoss));
  listeners.push(drawLoss);

  // --- the trainability heatmap --------------------------------------------------------------------
  function drawHeatmap() {
    const h = data.heatmap;
    const panel = $("heatmap-panel").value;
    const cells = h.cells.filter((c) => c.panel === panel);
    const xv = [...new Set(cells.map((c) => c.x))].sort((a, b) => a - b);
    const yv = [...new Set(cells.map((c) => c.y))].sort((a, b) => a - b);
    const size = Math.max(28, Math.min(64, Math.floor(760 / Math.max(xv.length, 1))));
    const m = { top: 16, right: 160, bottom: 52, left: 70 };
    const width = m.left + xv.length * size + m.right, height = m.top + yv.length * size + m.bottom;
    const el = $("heatmap-figure");
    el.innerHTML = "";
    const svg = d3.select(el).append("svg").attr("viewBox", `0 0 ${width} ${height}`).attr("width", width).attr("height", height);
    const colour = d3.scaleSequential(d3.interpolateViridis).domain([0, 1]);
    const gx = (v) => m.left + xv.indexOf(v) * size, gy = (v) => m.top + (yv.length - 1 - yv.indexOf(v)) * size;
    for (const c of cells) {
      const f = c.learned / c.n;
      const g = svg.append("g").attr("class", "cell").attr("data-x", c.x).attr("data-y", c.y);
      g.append("rect").attr("x", gx(c.x)).attr("y", gy(c.y)).attr("width", size - 2).attr("height", size - 2).attr("fill", colour(f));
      g.append("text").attr("x", gx(c.x) + size / 2 - 1).attr("y", gy(c.y) + size / 2 + 4).attr("text-anchor", "middle")
        .attr("font-size", 11).attr("fill", f > 0.6 ? "#000" : "#fff").text(`${c.learned}/${c.n}`);
      g.on("mousemove", () => {
        tooltip.hidden = false;
        tooltip.textContent = `d_model ${c.x} · heads ${c.y} · m_H ${fmt(c.x / c.y)}\nlearned ${c.learned} of ${c.n} (${fmt(100 * f)} %)\n95 % Wilson interval ${fmt(100 * c.low)}–${fmt(100 * c.high)} %`;
        tooltip.style.left = d3.event.clientX + 14 + "px";
        tooltip.style.top = d3.event.clientY + 10 + "px";
      }).on("mouseleave", () => { tooltip.hidden = true; });
    }
    xv.forEach((v) => svg.append("text").attr("x", gx(v) + size / 2).attr("y", height - m.bottom + 16).attr("text-anchor", "middle").attr("font-size", 12).text(v));
    yv.forEach((v) => svg.append("text").attr("x", m.left - 6).attr("y", gy(v) + size / 2 + 4).attr("text-anchor", "end").attr("font-size", 12).text(v));
    svg.append("text").attr("class", "axis-title").attr("x", m.left + (xv.length * size) / 2).attr("y", height - 12).attr("text-anchor", "middle").text("width m (d_model)");
    svg.append("text").attr("class", "axis-title").attr("transform", `translate(18,${m.top + (yv.length * size) / 2}) rotate(-90)`).attr("text-anchor", "middle").text("heads n_H");
    const lx = m.left + xv.length * size + 24;
    [0, 0.25, 0.5, 0.75, 1].forEach((f, k) => {
      svg.append("rect").attr("x", lx).attr("y", m.top + k * 20).attr("width", 16).attr("height", 16).attr("fill", colour(f));
      svg.append("text").attr("x", lx + 22).attr("y", m.top + k * 20 + 12).attr("font-size", 11).text(`${f * 100} % learned`);
    });
  }
  if (data.heatmap) {
    $("heatmap").hidden = false;
    for (const p of [...new Set(data.heatmap.cells.map((c) => c.panel))]) $("heatmap-panel").add(new Option(p || "every run", p));
    $("heatmap-panel").addEventListener("change", drawHeatmap);
    drawHeatmap();
  }

  // --- the learned fraction against η·√m_H --------------------------------------------------------
  // A search's probes are single runs (a fraction of 0 or 1): markers alone, their wide intervals faint.
  if (data.collapse) {
    $("collapse").hidden = false;
    chart($("collapse-figure"), {
      title: "Learned fraction", xTitle: "η·√m_H", yTitle: "learned fraction", logX: true, yDomain: [-0.03, 1.03], pad: true,
      whiskerOpacity: data.search ? 0.25 : 0.8,
      series: data.collapse.series.map((s, k) => ({ name: s.name, colour: colourOf(k), markers: true, line: !data.search,
        points: s.points.map((p) => ({ x: p.x, y: p.learned / p.n, low: p.low, high: p.high, p })) })),
      describe: (s, q) => `${s.name}\nη ${fmt(q.p.lr)} · η·√m_H ${fmt(q.x)}\nlearned ${q.p.learned} of ${q.p.n}\n95 % Wilson ${fmt(q.p.low)}–${fmt(q.p.high)}`,
    });
  }

  // --- the search ------------------------------------------------------------------------------------
  if (data.search) {
    const s = data.search;
    $("search").hidden = false;
    $("search-text").textContent = s.text;
    const found = s.points.filter((p) => p.estimate !== undefined);
    // A side the search left open (its bound is the range's end) gets no bar: the bar runs from the
    // estimate to the closed side, and the axis does not stretch to the range's end for it.
    const series = [{ name: `${s.symbol} per configuration (95 % interval, none on a side left open; hollow: not converged)`, colour: colours[0], markers: true, line: false,
      points: found.map((p) => ({ x: p.x, y: p.estimate, low: p.low_open ? p.estimate : p.low, high: p.high_open ? p.estimate : p.high, p, hollow: p.state !== "converged" })) }];
    if (s.law) series.push({ name: `power law: α ${fmt(s.law.alpha)} [${fmt(s.law.alpha_low)}, ${fmt(s.law.alpha_high)}]`, colour: colours[1], points: s.law.line });
    if (s.bend) series.push({ name: `bent law (chosen): γ ${fmt(s.bend.gamma)}`, colour: colours[2], dash: "6 4", points: s.bend.line });
    chart($("search-figure"), {
      title: "Search", xTitle: s.x === "head_dim" ? "head dimension m_H" : s.x, yTitle: s.symbol, logX: true, logY: s.axis === "lr", series, pad: true,
      empty: "No configuration has a crossing yet",
      describe: (ser, q) => q.p ? `${q.p.name}\n${s.symbol} ${fmt(q.y)} ${q.p.low_open ? "(open" : "[" + fmt(q.p.low)}, ${q.p.high_open ? "open)" : fmt(q.p.high) + "]"}\n${q.p.state}, ${q.p.runs} runs` : `${ser.name}\n${s.x} ${fmt(q.x)}: ${fmt(q.y)}`,
    });
  }

  // --- any run value against any axis ---------------------------------------------------------------
  // x: a numeric axis, or a number of the configuration (head dimension, η·√m_H, total heads); y:
  // any run value; a point per configuration over its replicates, as the app's figures pool them.
  {
    const varies = (values) => new Set(values).size > 1;
    const numericAxis = (a) => runs.every((r) => r.labels[a] === undefined || number(r.labels[a]) !== null);
    // The swept axes first, then each dimension HeadLab gave every run a number on (its table's
    // rows, and η·√m_H) that is not one of them.
    const xChoices = [];
    for (const a of data.axes)
      if (!data.replicate_axes.includes(a) && numericAxis(a) && varies(runs.map((r) => r.labels[a]))) xChoices.push([a, a]);
    for (const { name, title } of data.dimensions)
      if (!data.axes.includes(name) && varies(runs.map((r) => r.derived[name]))) xChoices.push(["=" + name, title]);
    const xOf = (r, key) => (key.startsWith("=") ? r.derived[key.slice(1)] : number(r.labels[key] ?? ""));
    const yKeys = [...metricKeys].filter((k) => runs.some((r) => Number.isFinite(runValue(r, k)))).sort();
    const valueKeys = [...new Set(runs.flatMap((r) => Object.keys(r.values)))];
    const yChoices = [...yKeys, ...valueKeys.filter((k) => !yKeys.includes(k))];
    if (!xChoices.length || !yChoices.length) {
      $("explorer").hidden = true;
    } else {
      const xs = $("explorer-x"), ysel = $("explorer-y"), cs = $("explorer-colour");
      xChoices.forEach(([k, title]) => xs.add(new Option(title, k)));
      yChoices.forEach((k) => ysel.add(new Option(k, k)));
      const prefer = (select, keys) => { for (const k of keys) if ([...select.options].some((o) => o.value === k)) { select.value = k; return; } };
      prefer(xs, ["d_model", "=d_model", "=head_dim", "lr", "=lr", "=eta_sqrt_head_dim"]);
      prefer(ysel, ["final_test_loss", "best_epoch_mean", "min(test_loss)"]);
      let chosen = false; // the reader's choice of lines stays while it is offered
      cs.addEventListener("change", () => { chosen = true; });
      const colourChoices = () => {
        const keep = cs.value;
        cs.innerHTML = "";
        cs.add(new Option("(one line)", ""));
        for (const a of data.axes)
          if (a !== xs.value && !data.replicate_axes.includes(a) && varies(runs.map((r) => r.labels[a]))) cs.add(new Option(a, a));
        if (chosen && [...cs.options].some((o) => o.value === keep)) cs.value = keep;
        else prefer(cs, ["heads", "d_model", "lr", "layers"]);
      };
      colourChoices();
      const draw = () => {
        const xKey = xs.value, yKey = ysel.value, by = cs.value;
        const groups = new Map();
        runs.forEach((r, i) => {
          if (!selected[i]) return;
          const x = xOf(r, xKey), y = runValue(r, yKey);
          if (x === null || x === undefined || y === undefined || !Number.isFinite(y)) return;
          const g = groups.get(r.group) || { x, line: by ? r.labels[by] ?? "" : "", ys: [], runs: [] };
          g.ys.push(y);
          g.runs.push(i);
          groups.set(r.group, g);
        });
        const lines = new Map();
        for (const g of groups.values()) {
          const ys = g.ys.slice().sort((a, b) => a - b);
          const point = { x: g.x, y: d3.median(ys), low: ys[0], high: ys[ys.length - 1], n: ys.length, runs: g.runs };
          if (!lines.has(g.line)) lines.set(g.line, []);
          lines.get(g.line).push(point);
        }
        const names = [...lines.keys()].sort((a, b) => (number(a) !== null && number(b) !== null ? number(a) - number(b) : String(a).localeCompare(String(b))));
        const xTitle = xChoices.find(([k]) => k === xKey)[1];
        chart($("explorer-figure"), {
          title: "Explorer", xTitle, yTitle: yKey, logX: $("explorer-logx").checked, logY: $("explorer-logy").checked, pad: true,
          refs: /loss/.test(yKey) && data.task === "addition" ? data.plateaus.map((p) => ({ y: p.loss, label: p.label })) : [],
          series: names.map((name, k) => ({ name: by ? `${by}=${name}` : "every configuration", colour: colourOf(k), markers: true,
            points: lines.get(name).sort((a, b) => a.x - b.x) })),
          empty: "No run of the selection has this value",
          describe: (s, p) => `${s.name}\n${xTitle} ${fmt(p.x)}\n${yKey}: median ${fmt(p.y)} over ${p.n} run${p.n > 1 ? "s" : ""} (${fmt(p.low)}–${fmt(p.high)})\nruns ${p.runs.map((i) => "#" + i).join(" ")}`,
        });
      };
      xs.addEventListener("change", () => { colourChoices(); draw(); });
      [ysel, cs, $("explorer-logx"), $("explorer-logy")].forEach((el) => el.addEventListener("change", draw));
      listeners.push(draw);
    }
  }

  // --- parallel coordinates ---------------------------------------------------------------------
  // An axis per swept numeric axis (log where its values span more than a decade) and per loss a
  // run stores; a line per selected run, coloured by its verdict; a legend entry per verdict.
  {
    const verdicts = [["learned", "#1a9850", (r) => r.learned === true], ["not learned", "#d73027", (r) => r.learned === false],
                      ["no verdict", "#7f7f7f", (r) => r.learned === null]];
    const numeric = (a) => runs.every((r) => r.labels[a] === undefined || number(r.labels[a]) !== null);
    const axes = data.axes.filter((a) => !data.replicate_axes.includes(a) && numeric(a) && new Set(runs.map((r) => r.labels[a])).size > 1)
      .map((a) => ({ key: a, title: a, of: (r) => number(r.labels[a] ?? "") }));
    for (const k of ["final_test_loss", "min(test_loss)"])
      if (runs.some((r) => Number.isFinite(runValue(r, k)))) axes.push({ key: k, title: k, of: (r) => runValue(r, k) });
    const hidden = new Set();
    function drawCoords() {
      const el = $("coords-figure");
      el.innerHTML = "";
      const width = 960, height = 380, m = { top: 28, right: 40, bottom: 20, left: 40 };
      const svg = d3.select(el).append("svg").attr("viewBox", `0 0 ${width} ${height}`).attr("width", width).attr("height", height);
      const x = d3.scalePoint().domain(axes.map((a) => a.key)).range([m.left + 40, width - m.right - 40]);
      const scales = {};
      for (const a of axes) {
        const values = runs.map(a.of).filter(Number.isFinite);
        const [lo, hi] = d3.extent(values);
        const log = lo > 0 && hi / lo > 10;
        scales[a.key] = (log ? d3.scaleLog() : d3.scaleLinear()).domain(lo === hi ? [lo - 1, hi + 1] : [lo, hi]).range([height - m.bottom, m.top]);
        if (!log) scales[a.key].nice();
        const axis = svg.append("g").attr("class", "axis").attr("transform", `translate(${x(a.key)},0)`)
          .call(d3.axisLeft(scales[a.key]).ticks(5, "~g"));
        axis.append("text").attr("class", "axis-title").attr("y", m.top - 12).attr("text-anchor", "middle").attr("fill", "currentColor").text(a.title);
      }
      const lines = svg.append("g");
      runs.forEach((r, i) => {
        if (!selected[i]) return;
        const [name, colour] = verdicts.find(([, , is]) => is(r));
        const points = axes.map((a) => [x(a.key), Number.isFinite(a.of(r)) ? scales[a.key](a.of(r)) : null]);
        lines.append("path").attr("class", "run").attr("data-run", i).attr("data-verdict", name)
          .attr("d", d3.line().defined((p) => p[1] !== null)(points)).attr("fill", "none").attr("stroke", colour)
          .attr("stroke-width", 1.4).attr("stroke-opacity", 0.7).style("pointer-events", "stroke")
          .classed("hidden", hidden.has(name))
          .on("mousemove", function () {
            d3.select(this).attr("stroke-width", 3).attr("stroke-opacity", 1);
            tooltip.hidden = false;
            tooltip.textContent = `#${i} ${r.name}\n` + axes.filter((a) => !data.axes.includes(a.key)).map((a) => `${a.title} ${fmt(a.of(r))}`).join("\n");
            tooltip.style.left = d3.event.clientX + 14 + "px";
            tooltip.style.top = d3.event.clientY + 10 + "px";
          })
          .on("mouseleave", function () { d3.select(this).attr("stroke-width", 1.4).attr("stroke-opacity", 0.7); tooltip.hidden = true; });
      });
      const legend = document.createElement("div");
      legend.className = "legend";
      el.appendChild(legend);
      for (const [name, colour, is] of verdicts) {
        if (!runs.some((r, i) => selected[i] && is(r))) continue;
        const entry = document.createElement("span");
        entry.className = "entry" + (hidden.has(name) ? " off" : "");
        entry.dataset.series = name;
        entry.innerHTML = `<span class="swatch" style="background:${colour}"></span>${name}`;
        entry.addEventListener("click", () => {
          if (hidden.has(name)) hidden.delete(name); else hidden.add(name);
          lines.selectAll(`path[data-verdict="${name}"]`).classed("hidden", hidden.has(name));
          entry.classList.toggle("off", hidden.has(name));
        });
        legend.appendChild(entry);
      }
    }
    if (axes.length < 2) $("coords").hidden = true;
    else listeners.push(drawCoords);
  }

  // --- contents --------------------------------------------------------------------------------------
  $("contents").innerHTML = [...document.querySelectorAll("main > section")].filter((s) => !s.hidden)
    .map((s) => `<a href="#${s.id}">${s.querySelector("h2").textContent}</a>`).join("");
  applyFilter();
})();
