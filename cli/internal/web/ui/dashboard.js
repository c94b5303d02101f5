// The weir dashboard: polls the JSON API every second and draws the jobs,
// the selected job's task graph, throughput, latency percentiles and
// watermark lag over time,
// checkpoints and recoveries. Plain JavaScript, no build step; uPlot draws
// the charts.
//
// Attributes a test can rely on:
//   #jobs li[data-job]             one per job, class "selected" on the shown one
//   #graph .task[data-task]        one per task (plan order)
//   #throughput[data-points]       number of polls charted
//   #throughput[data-recovery-markers]  failure markers drawn on the chart
"use strict";

(function () {
  const POLL_MS = 1000;
  const MAX_POINTS = 900; // 15 minutes of history
  const BOX_W = 220, BOX_H = 88, GAP_X = 80, GAP_Y = 18, PAD = 8;
  const PALETTE = ["#2b6cd4", "#e8590c", "#2b8a3e", "#ae3ec9", "#c92a2a", "#0b7285", "#5c940d", "#d6336c", "#495057", "#f08c00"];
  const SVGNS = "http://www.w3.org/2000/svg";

  const $ = (id) => document.getElementById(id);
  const nf = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

  let selected = null;          // name of the job shown
  const views = new Map();      // job name -> view (history survives switching jobs)

  function newView(name) {
    return {
      name,
      plan: null,                // {vertices: [{id, name, parallelism}], edges: [{from, to, via}]} or null
      planTried: false,
      graphKey: "",              // the task names the graph was drawn for
      boxes: [],                 // per task: {el, rate, fill, lines}
      startSec: null,            // job start, seconds
      times: [],                 // poll times, seconds
      rates: [],                 // per task: records in per second
      lags: [],                  // per task: watermark lag in seconds
      lat: [[], [], []],         // marker latency p50, p99 and sink event-time latency p99, seconds
      prevHist: null,            // cumulative latency histograms of the previous poll
      prev: null,                // {t, counts} of the previous poll
      taskNames: [],
      recoveries: [],            // failure times, seconds
      checkpoints: [],
      tput: null, lag: null, ckpt: null, latc: null, // uPlot charts
    };
  }

  // ---- helpers ----------------------------------------------------------

  async function getJSON(path) {
    const r = await fetch(path, { cache: "no-store" });
    if (!r.ok) throw new Error(path + ": HTTP " + r.status);
    return r.json();
  }

  // parseTime turns a Go time (RFC 3339 with up to nanoseconds) into
  // seconds since the epoch, or null for the zero time.
  function parseTime(s) {
    if (!s || s.startsWith("0001-")) return null;
    const ms = Date.parse(s.replace(/(\.\d{3})\d+/, "$1"));
    return isNaN(ms) ? null : ms / 1000;
  }

  function fmtDur(ns) {
    if (ns == null) return "";
    const ms = ns / 1e6;
    if (ms < 1) return (ns / 1e3).toFixed(0) + " µs";
    if (ms < 1000) return ms.toFixed(ms < 10 ? 1 : 0) + " ms";
    return (ms / 1000).toFixed(2) + " s";
  }

  function fmtBytes(b) {
    if (b < 1024) return b + " B";
    if (b < 1 << 20) return (b / 1024).toFixed(1) + " KiB";
    if (b < 1 << 30) return (b / (1 << 20)).toFixed(1) + " MiB";
    return (b / (1 << 30)).toFixed(2) + " GiB";
  }

  function fmtClock(sec) {
    if (sec == null) return "";
    const d = new Date(sec * 1000);
    return d.toLocaleTimeString("en-GB", { hour12: false }) + "." + String(d.getMilliseconds()).padStart(3, "0");
  }

  // A watermark is valid unless it is MinWatermark or EndOfTime (±2^63).
  const validWatermark = (w) => typeof w === "number" && Math.abs(w) < 1e17;

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text != null) e.textContent = text;
    return e;
  }

  // ---- plan parsing -----------------------------------------------------

  // parsePlan reads the text of Pipeline.Explain:
  //   task N [parallelism P]: a -> b
  //       <- task M "name" via hash
  // It returns null if the text has no task lines.
  function parsePlan(text) {
    if (!text) return null;
    const vertices = [], edges = [];
    let cur = null;
    for (const line of text.split("\n")) {
      let m = /^task (\d+) \[parallelism (\d+)\]: (.*)$/.exec(line);
      if (m) {
        cur = { id: +m[1], parallelism: +m[2], name: m[3] };
        vertices.push(cur);
        continue;
      }
      m = /^\s+<- task (\d+) .* via (\S+)/.exec(line);
      if (m && cur) edges.push({ from: +m[1], to: cur.id, via: m[2] });
    }
    return vertices.length ? { vertices, edges } : null;
  }

  // ---- jobs -------------------------------------------------------------

  function renderJobs(jobs) {
    const ul = $("jobs");
    if (!selected || !jobs.some((j) => j.name === selected)) {
      const running = jobs.find((j) => j.state === "running");
      selected = running ? running.name : jobs.length ? jobs[0].name : null;
    }
    const have = new Map([...ul.children].map((li) => [li.dataset.job, li]));
    jobs.forEach((j, i) => {
      let li = have.get(j.name);
      if (!li) {
        li = el("li", { "data-job": j.name });
        li.append(el("span", { class: "name" }, j.name), el("span", { class: "state" }));
        li.addEventListener("click", () => { selected = j.name; pollSoon(); });
      }
      have.delete(j.name);
      if (ul.children[i] !== li) ul.insertBefore(li, ul.children[i] || null);
      const st = li.querySelector(".state");
      st.textContent = j.state;
      st.className = "state " + j.state;
      li.classList.toggle("selected", j.name === selected);
      li.title = j.error ? "error: " + j.error : j.guarantee;
    });
    for (const li of have.values()) li.remove();
    if (!jobs.length) $("job-info").textContent = "no jobs";
  }

  // ---- graph ------------------------------------------------------------

  // layout places tasks in columns by their distance from the sources.
  function layout(vertices, edges) {
    const byId = new Map(vertices.map((v, i) => [v.id, i]));
    const inputs = vertices.map(() => []);
    for (const e of edges) if (byId.has(e.to) && byId.has(e.from)) inputs[byId.get(e.to)].push(byId.get(e.from));
    const col = vertices.map(() => 0);
    for (let pass = 0; pass < vertices.length; pass++) { // plan order is topological; repeat in case it is not
      let changed = false;
      vertices.forEach((_, i) => {
        for (const s of inputs[i]) if (s !== i && col[s] + 1 > col[i] && col[s] + 1 < vertices.length) { col[i] = col[s] + 1; changed = true; }
      });
      if (!changed) break;
    }
    const rowsIn = [], row = [];
    col.forEach((c, i) => { rowsIn[c] = (rowsIn[c] || 0) + 1; row[i] = rowsIn[c] - 1; });
    const maxRows = Math.max(...rowsIn.map((n) => n || 0));
    return vertices.map((_, i) => ({
      x: PAD + col[i] * (BOX_W + GAP_X),
      y: PAD + row[i] * (BOX_H + GAP_Y) + ((maxRows - rowsIn[col[i]]) * (BOX_H + GAP_Y)) / 2,
    }));
  }

  function buildGraph(view, names) {
    const g = $("graph");
    g.textContent = "";
    let vertices, edges;
    if (view.plan && view.plan.vertices.length === names.length) {
      ({ vertices, edges } = view.plan);
    } else { // no usable plan: the tasks in a row, without edges
      vertices = names.map((name, i) => ({ id: i, name, parallelism: null }));
      edges = [];
    }
    const pos = layout(vertices, edges);
    const w = Math.max(...pos.map((p) => p.x)) + BOX_W + PAD;
    const h = Math.max(...pos.map((p) => p.y)) + BOX_H + PAD;
    g.style.height = h + "px";

    const svg = document.createElementNS(SVGNS, "svg");
    svg.setAttribute("width", w);
    svg.setAttribute("height", h);
    svg.innerHTML = '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#7a8496"/></marker></defs>';
    const idx = new Map(vertices.map((v, i) => [v.id, i]));
    for (const e of edges) {
      const a = pos[idx.get(e.from)], b = pos[idx.get(e.to)];
      if (!a || !b) continue;
      const x1 = a.x + BOX_W, y1 = a.y + BOX_H / 2, x2 = b.x - 2, y2 = b.y + BOX_H / 2;
      const dx = Math.max(30, (x2 - x1) / 2);
      const p = document.createElementNS(SVGNS, "path");
      p.setAttribute("d", `M${x1},${y1} C${x1 + dx},${y1} ${x2 - dx},${y2} ${x2},${y2}`);
      p.setAttribute("fill", "none");
      p.setAttribute("stroke", "#7a8496");
      p.setAttribute("stroke-width", "1.5");
      p.setAttribute("marker-end", "url(#arrow)");
      svg.append(p);
      const t = document.createElementNS(SVGNS, "text");
      t.setAttribute("x", (x1 + x2) / 2);
      t.setAttribute("y", (y1 + y2) / 2 - 5);
      t.setAttribute("text-anchor", "middle");
      t.setAttribute("class", "edge-label");
      t.textContent = e.via;
      svg.append(t);
    }
    g.append(svg);

    view.boxes = vertices.map((v, i) => {
      const box = el("div", { class: "task", "data-task": v.name, title: v.name });
      box.style.left = pos[i].x + "px";
      box.style.top = pos[i].y + "px";
      const l1 = el("div", { class: "line" }), l2 = el("div", { class: "line" }), l3 = el("div", { class: "line" }), fill = el("div", { class: "fill" });
      box.append(el("div", { class: "name" }, v.name), l1, l2, l3, fill);
      g.append(box);
      return { el: box, l1, l2, l3, fill, parallelism: v.parallelism };
    });
  }

  function updateGraph(view, tasks) {
    const names = tasks.length ? tasks.map((t) => t.name) : view.plan ? view.plan.vertices.map((v) => v.name) : [];
    const key = names.join("\n");
    if (key !== view.graphKey || !$("graph").querySelector(".task")) {
      buildGraph(view, names);
      view.graphKey = key;
    }
    const last = view.times.length - 1;
    const rates = view.rates.map((r) => (last >= 0 ? r[last] : null));
    const maxRate = Math.max(0, ...rates.filter((r) => r != null));
    view.boxes.forEach((b, i) => {
      const t = tasks[i];
      const rate = rates[i];
      const rel = rate > 0 && maxRate > 0 ? Math.log1p(rate) / Math.log1p(maxRate) : 0;
      b.el.style.background = `hsl(210, 80%, ${96 - rel * 34}%)`;
      if (!t) { b.l1.textContent = b.parallelism ? "parallelism " + b.parallelism : ""; b.l2.textContent = "not running"; b.l3.textContent = ""; return; }
      const fill = Math.max(0, ...t.subtasks.map((s) => s.queue_fill || 0));
      b.fill.style.width = (fill * 100).toFixed(1) + "%";
      b.fill.style.background = fill >= 0.8 ? "#d03030" : fill >= 0.5 ? "#e0a020" : "#3a9a4a";
      b.el.classList.toggle("backpressured", fill >= 0.8);
      b.el.dataset.rate = rate == null ? "" : rate.toFixed(1);
      b.el.dataset.queueFill = fill.toFixed(3);
      b.l1.textContent = `${rate == null ? "–" : nf.format(rate)} rec/s · queue ${(fill * 100).toFixed(0)}% · p=${t.parallelism}`;
      const standbys = t.subtasks.filter((s) => s.standby).length;
      const recovered = t.subtasks.reduce((n, s) => n + (s.restarts || 0) + (s.takeovers || 0), 0);
      b.l2.textContent = `in ${nf.format(t.records_in)} · ${t.sink ? "written " + nf.format(t.records_written) : "out " + nf.format(t.records_out)}` +
        (standbys ? ` · ${standbys} standby` : "") + (recovered ? ` · ${recovered} recovered alone` : "");
      b.l3.textContent = validWatermark(t.watermark) ? `watermark lag ${((Date.now() - t.watermark) / 1000).toFixed(1)} s` : "no watermark";
      // On a cluster, where each subtask runs and what holds its watermark back.
      b.el.title = [t.name, ...t.subtasks.map((s, i) => `subtask ${i}` + (s.worker ? ` on ${s.worker}` : "") +
        (s.watermark_held_back_by ? `, watermark held back by ${s.watermark_held_back_by}` : ""))].join("\n");
    });
  }

  // ---- history ----------------------------------------------------------

  function record(view, tasks, now) {
    const names = tasks.map((t) => t.name);
    if (names.join("\n") !== view.taskNames.join("\n")) { // new plan: start the history over
      view.taskNames = names;
      view.times = [];
      view.rates = names.map(() => []);
      view.lags = names.map(() => []);
      view.prev = null;
      destroyCharts(view);
    }
    if (!names.length) return;
    const counts = tasks.map((t) => t.records_in);
    view.times.push(now);
    tasks.forEach((t, i) => {
      let rate = null;
      if (view.prev) {
        let d = counts[i] - view.prev.counts[i];
        if (d < 0) d = counts[i]; // a restart began new counters
        rate = d / Math.max(0.001, now - view.prev.t);
      }
      view.rates[i].push(rate);
      view.lags[i].push(validWatermark(t.watermark) ? Math.max(0, now - t.watermark / 1000) : null);
    });
    view.prev = { t: now, counts };
    recordLatency(view, tasks);
    if (view.times.length > MAX_POINTS) {
      view.times.shift();
      view.rates.forEach((r) => r.shift());
      view.lags.forEach((r) => r.shift());
      view.lat.forEach((r) => r.shift());
    }
  }

  // Upper bounds, in seconds, of the latency histograms' buckets; they
  // mirror task.LatencyBuckets in the Go code (the last bucket is open).
  const LATENCY_BOUNDS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

  // sumHist adds up one histogram field over every subtask.
  function sumHist(tasks, field) {
    const out = new Array(LATENCY_BOUNDS.length).fill(0);
    for (const t of tasks) for (const s of t.subtasks || []) {
      const c = (s[field] && s[field].counts) || [];
      c.forEach((n, i) => { if (i < out.length) out[i] += n; });
    }
    return out;
  }

  // quantile returns the bucket bound below which fraction q of the
  // observations in counts fall, or null without observations.
  function quantile(counts, q) {
    const total = counts.reduce((a, b) => a + b, 0);
    if (total <= 0) return null;
    let seen = 0;
    for (let i = 0; i < counts.length; i++) {
      seen += counts[i];
      if (seen >= q * total) return LATENCY_BOUNDS[i];
    }
    return LATENCY_BOUNDS[LATENCY_BOUNDS.length - 1];
  }

  // recordLatency adds the percentiles of the latencies observed since the
  // previous poll.
  function recordLatency(view, tasks) {
    const cur = { marker: sumHist(tasks, "latency"), event: sumHist(tasks, "event_time_latency") };
    const prev = view.prevHist;
    const delta = (a, b) => a.map((n, i) => Math.max(0, n - (b ? b[i] : 0)));
    const m = delta(cur.marker, prev && prev.marker);
    const e = delta(cur.event, prev && prev.event);
    view.lat[0].push(quantile(m, 0.5));
    view.lat[1].push(quantile(m, 0.99));
    view.lat[2].push(quantile(e, 0.99));
    view.prevHist = cur;
    const el = $("latency");
    el.dataset.points = String(view.lat[1].filter((v) => v != null).length);
  }

  // ---- charts -----------------------------------------------------------

  function destroyCharts(view) {
    for (const k of ["tput", "lag", "ckpt", "latc"]) if (view[k]) { view[k].destroy(); view[k] = null; }
  }

  const chartWidth = (id) => Math.max(300, $(id).clientWidth);

  // xRange widens the time axis to the start of the job, so failures that
  // happened before the page was opened are still marked.
  const xRange = (view) => (u, min, max) => {
    if (view.startSec != null && view.startSec < min) min = view.startSec;
    if (max <= min) max = min + 1;
    return [min, max];
  };

  function drawRecoveries(view) {
    return (u) => {
      const { left, top, width, height } = u.bbox;
      const ctx = u.ctx;
      let drawn = 0;
      ctx.save();
      for (const t of view.recoveries) {
        const x = Math.round(u.valToPos(t, "x", true));
        if (x < left - 1 || x > left + width + 1) continue;
        ctx.strokeStyle = "#d03030";
        ctx.lineWidth = 2 * devicePixelRatio;
        ctx.setLineDash([6 * devicePixelRatio, 4 * devicePixelRatio]);
        ctx.beginPath();
        ctx.moveTo(x, top);
        ctx.lineTo(x, top + height);
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = "#d03030";
        ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
        ctx.fillText("failure", x + 4 * devicePixelRatio, top + 12 * devicePixelRatio);
        drawn++;
      }
      ctx.restore();
      u.root.parentElement.dataset.recoveryMarkers = String(drawn);
    };
  }

  function lineChart(view, id, series, data, opts) {
    return new uPlot({
      width: chartWidth(id),
      height: opts.height || 220,
      scales: { x: { time: true, range: xRange(view) }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [{}, { size: 70, values: (u, vals) => vals.map(opts.fmt || ((v) => nf.format(v))) }],
      series: [{ value: (u, v) => fmtClock(v) }, ...series],
      hooks: opts.hooks || {},
      legend: { live: true },
    }, data, $(id));
  }

  function taskSeries(names, fmt) {
    return names.map((n, i) => ({ label: n, stroke: PALETTE[i % PALETTE.length], width: 2, value: (u, v) => (v == null ? "–" : fmt(v)) }));
  }

  function updateCharts(view) {
    if (!view.times.length) return;
    const tput = $("throughput");
    const data = [view.times, ...view.rates];
    if (!view.tput) {
      tput.textContent = "";
      view.tput = lineChart(view, "throughput", taskSeries(view.taskNames, (v) => nf.format(v) + "/s"), data,
        { hooks: { draw: [drawRecoveries(view)] } });
    } else view.tput.setData(data);
    tput.dataset.points = String(view.times.length);

    const anyLag = view.lags.some((l) => l.some((v) => v != null));
    $("lag-note").textContent = anyLag ? "" : "No watermarks yet (sources without event time report none).";
    const ldata = [view.times, ...view.lags];
    if (!view.lag) {
      $("lag").textContent = "";
      view.lag = lineChart(view, "lag", taskSeries(view.taskNames, (v) => v.toFixed(2) + " s"), ldata,
        { height: 160, fmt: (v) => v.toFixed(1) + " s" });
    } else view.lag.setData(ldata);

    const anyLat = view.lat.some((l) => l.some((v) => v != null));
    $("latency-note").textContent = anyLat ? "" : "No latency data: run with --latency-tracking sampled or full.";
    const latData = [view.times, ...view.lat];
    if (!view.latc) {
      $("latency").textContent = "";
      const fmt = (v) => (v == null ? "–" : v < 1 ? (v * 1000).toFixed(v < 0.001 ? 2 : 0) + " ms" : v + " s");
      view.latc = lineChart(view, "latency", [
        { label: "marker p50", stroke: PALETTE[0], width: 2, value: (u, v) => fmt(v) },
        { label: "marker p99", stroke: PALETTE[1], width: 2, value: (u, v) => fmt(v) },
        { label: "event-time p99 at sinks", stroke: PALETTE[2], width: 2, value: (u, v) => fmt(v) },
      ], latData, { height: 160, fmt });
    } else view.latc.setData(latData);
  }

  function updateCheckpointChart(view, cks) {
    const pts = cks.map((c) => ({ t: parseTime(c.triggered), c })).filter((p) => p.t != null).slice(-600);
    pts.sort((a, b) => a.t - b.t);
    const xs = pts.map((p) => p.t);
    const ms = (p, st) => (p.c.status === st ? p.c.duration_ns / 1e6 : null);
    const data = [xs, pts.map((p) => ms(p, "completed")), pts.map((p) => ms(p, "aborted"))];
    if (!xs.length) return;
    if (!view.ckpt) {
      $("ckpt-chart").textContent = "";
      const pointsOnly = (stroke) => ({ stroke, width: 0, paths: () => null, points: { show: true, size: 6, fill: stroke }, value: (u, v) => (v == null ? "–" : v.toFixed(1) + " ms") });
      view.ckpt = lineChart(view, "ckpt-chart", [{ label: "completed", ...pointsOnly("#2b8a3e") }, { label: "aborted", ...pointsOnly("#d9480f") }], data,
        { height: 140, fmt: (v) => v.toFixed(0) + " ms", hooks: { draw: [drawRecoveries(view)] } });
    } else view.ckpt.setData(data);
  }

  // ---- tables -----------------------------------------------------------

  function renderCheckpoints(view, cks) {
    const n = { completed: 0, aborted: 0 };
    for (const c of cks) n[c.status] = (n[c.status] || 0) + 1;
    $("ckpt-summary").textContent = `— ${n.completed} completed, ${n.aborted} aborted` + (n["in-progress"] ? `, ${n["in-progress"]} in progress` : "");
    const tb = $("checkpoints").tBodies[0];
    tb.textContent = "";
    for (const c of cks.slice(-50).reverse()) {
      const tr = el("tr", { "data-id": c.id, class: "st-" + c.status });
      for (const v of [c.id, c.status, fmtClock(parseTime(c.triggered)), fmtDur(c.duration_ns), fmtBytes(c.size_bytes), fmtDur(c.alignment_ns), fmtDur(c.sync_ns), c.reason || ""])
        tr.append(el("td", null, v));
      tb.append(tr);
    }
  }

  function renderRecoveries(view, recs) {
    view.recoveries = recs.map((r) => parseTime(r.failed_at)).filter((t) => t != null);
    const tb = $("recoveries").tBodies[0];
    tb.textContent = "";
    if (!recs.length) {
      const tr = el("tr", { class: "none" });
      tr.append(el("td", { colspan: 5, class: "muted" }, "no failures"));
      tb.append(tr);
    }
    for (const r of recs.slice().reverse()) {
      const tr = el("tr", { class: "recovery" });
      let restored = r.amnesia ? "none (at-most-once)" : r.restored ? "#" + r.restored : "started over";
      if (r.takeover) restored = "taken over by its active standby";
      else if (r.subtasks && r.restarted_subtasks < r.subtasks) restored += ` (${r.restarted_subtasks} of ${r.subtasks} subtasks)`;
      tr.append(el("td", null, fmtClock(parseTime(r.failed_at))), el("td", { class: "cause" }, r.cause), el("td", null, restored),
        el("td", null, r.last_completed ? "#" + r.last_completed : "–"), el("td", null, r.duration_ns ? fmtDur(r.duration_ns) : "–"));
      tb.append(tr);
    }
  }

  // A job's rescales (live ones name their task) and a cluster job's
  // coordinator takeovers, newest first.
  function renderChanges(ch) {
    const rows = [];
    for (const r of ch.rescales || []) {
      const what = r.live ? `${r.task}: parallelism ${r.from} → ${r.to} live` : `parallelism ${r.from} → ${r.to}`;
      rows.push({ at: parseTime(r.at), what: `${what} at checkpoint #${r.checkpoint} (${r.cause})`,
        cost: r.pause_ns ? "paused " + fmtDur(r.pause_ns) : "–" });
    }
    for (const l of ch.leader_changes || []) {
      rows.push({ at: parseTime(l.at), what: `coordinator of epoch ${l.epoch} took over`,
        cost: (l.adopted ? "adopted the running tasks: none restarted" : "restarted from the latest checkpoint") + ` after ${fmtDur(l.wait_ns)}` });
    }
    rows.sort((a, b) => (b.at || 0) - (a.at || 0));
    const tb = $("changes").tBodies[0];
    tb.textContent = "";
    if (!rows.length) {
      const tr = el("tr", { class: "none" });
      tr.append(el("td", { colspan: 3, class: "muted" }, "none"));
      tb.append(tr);
    }
    for (const r of rows) {
      const tr = el("tr", { class: "change" });
      tr.append(el("td", null, fmtClock(r.at)), el("td", null, r.what), el("td", null, r.cost));
      tb.append(tr);
    }
  }

  // ---- polling ----------------------------------------------------------

  async function pollJob(name) {
    let view = views.get(name);
    if (!view) views.set(name, (view = newView(name)));
    const enc = "api/v1/jobs/" + encodeURIComponent(name);
    const [job, tasks, cks, recs, changes] = await Promise.all([
      getJSON(enc), getJSON(enc + "/tasks"), getJSON(enc + "/checkpoints"), getJSON(enc + "/recoveries"), getJSON(enc + "/changes"),
    ]);
    const now = Date.now() / 1000;
    if (!view.plan) view.plan = parsePlan(job.plan);
    view.startSec = parseTime(job.started);
    $("job-title").textContent = "Tasks of " + name;
    const ended = parseTime(job.ended);
    $("job-info").textContent = `${job.state} · ${job.guarantee} · ${job.failover || "global"} failover` + (job.standby ? ` · ${job.standby} standby` : "") + (view.startSec ? ` · started ${fmtClock(view.startSec)}` : "") +
      (ended ? ` · ended ${fmtClock(ended)}` : "") + (job.error ? ` · error: ${job.error}` : "");
    record(view, tasks, now);
    renderRecoveries(view, recs);
    renderChanges(changes);
    renderCheckpoints(view, cks);
    updateGraph(view, tasks);
    updateCharts(view);
    updateCheckpointChart(view, cks);
    return view;
  }

  let shown = null, timer = null, busy = false, again = false;

  async function poll() {
    clearTimeout(timer);
    if (busy) { again = true; return; } // one poll at a time
    busy = true;
    try {
      const jobs = await getJSON("api/v1/jobs");
      renderJobs(jobs);
      if (selected !== shown) { // switching jobs: redraw everything for the new one
        for (const v of views.values()) { destroyCharts(v); v.graphKey = ""; }
        for (const id of ["graph", "throughput", "lag", "latency", "ckpt-chart"]) $(id).textContent = "";
        $("throughput").dataset.points = "0";
        $("throughput").dataset.recoveryMarkers = "0";
        shown = selected;
      }
      if (selected) await pollJob(selected);
      $("status").textContent = "updated " + fmtClock(Date.now() / 1000);
    } catch (e) {
      $("status").textContent = "error: " + e.message;
    }
    busy = false;
    timer = setTimeout(poll, again ? 0 : POLL_MS);
    again = false;
  }

  function pollSoon() { clearTimeout(timer); timer = setTimeout(poll, 0); }

  window.addEventListener("resize", () => {
    const v = views.get(shown);
    if (!v) return;
    if (v.tput) v.tput.setSize({ width: chartWidth("throughput"), height: 220 });
    if (v.lag) v.lag.setSize({ width: chartWidth("lag"), height: 160 });
    if (v.latc) v.latc.setSize({ width: chartWidth("latency"), height: 160 });
    if (v.ckpt) v.ckpt.setSize({ width: chartWidth("ckpt-chart"), height: 140 });
  });

  poll();
})();
