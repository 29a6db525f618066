// The status page: reads /ui/status, /ui/activity and POST /ui/explain, and draws them.
// Everything from the server is put on the page as text (append / textContent / attributes),
// never parsed as HTML, so a note title or a prompt holding markup is shown, not run.
"use strict";

const CSRF = document.querySelector('meta[name="csrf-token"]').content;
const SVG = "http://www.w3.org/2000/svg";
const AREAS = ["wiki", "sources", "journal", "other"];
const FIRST_CANDIDATES = 10;  // the rest behind a "show" toggle
let knownInstances = "";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  setAttributes(node, attrs);
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  setAttributes(node, attrs);
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function setAttributes(node, attrs) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    node.setAttribute(name === "className" ? "class" : name, value === true ? "" : String(value));
  }
}

function fixed(value, digits) {
  return value === null || value === undefined ? "–" : Number(value).toFixed(digits);
}

function signed(value, digits) {
  return (value >= 0 ? "+" : "−") + Math.abs(value).toFixed(digits);
}

function percent(value) {
  return `${Math.round(value * 100)}%`;
}

function when(iso) {
  if (!iso) return "never";
  const date = new Date(iso);
  const seconds = Math.round((Date.now() - date.getTime()) / 1000);
  const ago = seconds < 90 ? `${Math.max(seconds, 0)} s ago`
    : seconds < 5400 ? `${Math.round(seconds / 60)} min ago`
      : seconds < 129600 ? `${Math.round(seconds / 3600)} h ago`
        : `${Math.round(seconds / 86400)} days ago`;
  return `${ago} (${date.toLocaleString()})`;
}

async function getJSON(url, options) {
  const response = await fetch(url, { credentials: "same-origin", ...options });
  if (response.status === 401) {
    window.location.assign("/ui/login");
    throw new Error("signed out");
  }
  const body = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  return body;
}

// -- status -----------------------------------------------------------------------------------

// The JSON at `url`, or null with the reason shown in `box`.
async function fetchInto(box, url, label) {
  try {
    return await getJSON(url);
  } catch (error) {
    box.replaceChildren(el("p", { className: "alert", role: "alert" }, `${label}: ${error.message}`));
    return null;
  }
}

async function loadStatus() {
  const box = document.getElementById("instances");
  const status = await fetchInto(box, "/ui/status", "Status");
  if (status === null) {
    setTimeout(loadStatus, 10000);
    return;
  }
  const overall = document.getElementById("overall");
  overall.textContent = status.status;
  overall.className = `badge ${status.status}`;
  const names = Object.keys(status.instances);
  box.replaceChildren(...(names.length ? names.map((name) => instanceCard(name, status.instances[name]))
    : [el("p", { className: "muted" }, "No Trilium instance is configured.")]));
  fillInstances(names);
  showLogSettings(status.log);
  const busy = ["starting", "building"].includes(status.status) || names.some((n) => status.instances[n].running);
  setTimeout(loadStatus, busy ? 3000 : 30000);
}

// The version app-info gave and the sync features detected at the last full comparison.
function trilium(info, built) {
  if (!info || !info.version) return "not yet asked";
  if (!built) return `${info.version} · sync features known after the first full run`;
  const features = info.features.length ? info.features.join(", ") : "no recent changes, no blobId";
  return `${info.version} · ${features}`;
}

function instanceCard(name, data) {
  const state = data.error ? "degraded" : data.last_full ? "ok"
    : data.running && data.progress && data.progress.total ? "building" : "starting";
  const skipped = Object.entries(data.skipped || {}).map(([why, n]) => `${why} ${n}`).join(" · ");
  const facts = el("dl", { className: "facts" },
    el("dt", {}, "Indexed"), el("dd", {}, `${data.notes} notes · ${data.sections} sections`),
    el("dt", {}, "By area"), el("dd", {}, areaBar(data.areas || {})),
    el("dt", {}, "Skipped"), el("dd", {}, skipped || "none"),
    el("dt", {}, "Failed"), el("dd", {}, failedList(data.failed || [])),
    el("dt", {}, "Trilium"), el("dd", {}, trilium(data.trilium, data.last_full)),
    el("dt", {}, "Last tick"), el("dd", {}, when(data.last_sync)),
    el("dt", {}, "Last full comparison"), el("dd", {}, when(data.last_full)),
  );
  const subjects = (data.subjects || []).map((s) => el("li", {}, el("bdi", {}, s.title), ` (${s.notes})`));
  const progress = data.progress || { done: 0, total: 0 };
  return el("div", { className: "card", "data-instance": name },
    el("h3", {}, name, el("span", { className: `badge ${state}` }, state),
      data.running ? el("span", { className: "muted" }, `${data.running} sync running`) : null),
    data.error ? el("p", { className: "alert", role: "alert" }, `Degraded: ${data.error}`) : null,
    data.running || !data.last_full ? el("p", {}, "Reading notes: ",
      el("progress", { max: progress.total || 1, value: progress.done }),
      ` ${progress.done} of ${progress.total}${timeLeft(data.eta_seconds)}`) : null,
    facts,
    subjects.length ? el("div", {}, el("span", { className: "muted" }, "Largest subjects"),
      el("ul", { className: "chips" }, subjects)) : null,
  );
}

// The first build's estimate (/health eta_seconds), from its rate so far.
function timeLeft(seconds) {
  if (seconds === null || seconds === undefined) return "";
  return seconds < 90 ? ` · about ${Math.round(seconds)} s left`
    : ` · about ${Math.round(seconds / 60)} min left`;
}

// Every note that failed to index, with the reason (not just a count).
function failedList(failed) {
  if (!failed.length) return "none";
  return el("ul", { className: "failed" }, failed.map((f) =>
    el("li", {}, el("strong", {}, el("bdi", {}, f.title)), ` (${f.note_id}): ${f.reason}`)));
}

// -- checks (the same as `trilium-recall doctor`) ---------------------------------------------

async function loadChecks() {
  const box = document.getElementById("checks");
  const answer = await fetchInto(box, "/ui/doctor", "Checks");
  if (answer === null) return;
  box.replaceChildren(el("ul", { className: "checks" }, answer.checks.map((check) =>
    el("li", { className: `check ${check.status}` },
      el("span", { className: `badge ${check.status}` }, check.status),
      el("strong", {}, check.name), ` ${check.detail}`,
      check.lines.length ? el("ul", {}, check.lines.map((line) => el("li", {}, line))) : null,
      check.fix && check.status !== "ok" ? el("div", { className: "fix" }, `Fix: ${check.fix}`) : null))));
}

function areaBar(areas) {
  const total = AREAS.reduce((sum, area) => sum + (areas[area] || 0), 0);
  const width = 320;
  const chart = svg("svg", { width, height: 14, viewBox: `0 0 ${width} 14`, className: "fit",
    role: "img", "aria-label": "notes per area" });
  let x = 0;
  for (const area of AREAS) {
    const share = total ? (areas[area] || 0) / total * width : 0;
    if (share > 0) {
      chart.append(svg("rect", { x, y: 0, width: share, height: 14, className: `area-${area}` },
        svg("title", {}, `${area}: ${areas[area]}`)));
    }
    x += share;
  }
  if (!total) chart.append(svg("rect", { x: 0, y: 0, width, height: 14, className: "track" }));
  const legend = el("div", { className: "legend" }, AREAS.map((area) =>
    el("span", {}, el("span", { className: `swatch area-${area}` }), `${area} ${areas[area] || 0}`)));
  return el("div", {}, chart, legend);
}

function fillInstances(names) {
  const key = names.join(",");
  if (key === knownInstances) return;
  knownInstances = key;
  const select = document.getElementById("instance");
  select.replaceChildren(el("option", { value: "" }, "all"),
    ...names.map((name) => el("option", { value: name }, name)));
  select.closest("label").hidden = names.length < 2;
}

function showLogSettings(settings) {
  const line = document.getElementById("log-settings");
  if (!settings) return;
  line.textContent = !settings.enabled ? "The activity log is off (RECALL_ACTIVITY_MAX_ROWS=0)."
    : `Keeps the last ${settings.max_rows.toLocaleString()} calls or ${settings.max_days} days; `
      + (settings.prompts ? "prompts as their first 80 characters." : "no prompt text (RECALL_LOG_PROMPTS=0).");
}

// -- explain ----------------------------------------------------------------------------------

// The browser's own date, YYYY-MM-DD: "yesterday" in a prompt counts from the user's day, not
// the engine's (a UTC container is a day ahead of an American evening).
function localDay() {
  const now = new Date();
  const pad = (n) => String(n).padStart(2, "0");
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}

async function explain(event) {
  event.preventDefault();
  const form = event.target;
  const button = document.getElementById("explain");
  const box = document.getElementById("result");
  const body = {
    prompt: form.prompt.value,
    path: form.querySelector('input[name="path"]:checked').value,
    instance: form.instance.value || null,
    today: localDay(),
  };
  button.disabled = true;
  try {
    const answer = await getJSON("/ui/explain", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": CSRF },
      body: JSON.stringify(body),
    });
    box.replaceChildren(...renderAnswer(answer).filter(Boolean));
  } catch (error) {
    box.replaceChildren(el("p", { className: "alert", role: "alert" }, error.message));
  } finally {
    button.disabled = false;
  }
  loadActivity();
}

function renderAnswer(answer) {
  const parts = [];
  if (answer.notice) parts.push(el("p", { className: "notice" }, answer.notice));
  const result = answer.result;
  const passages = result ? result.passages : [];
  const took = result && result.took_ms !== null ? ` in ${fixed(result.took_ms, 0)} ms` : "";
  parts.push(passages.length
    ? el("p", { className: "headline" }, `Sent ${passages.length} passage${passages.length > 1 ? "s" : ""}${took}`)
    : el("p", { className: "headline silent" }, `Silent${took}: ${answer.silence}`));
  const what = answer.path === "mcp" ? "What the MCP tool answers" : "What the hook adds to the prompt";
  parts.push(el("h3", {}, what), answer.sent
    ? el("pre", { className: "sent" }, answer.sent)
    : el("p", { className: "muted" }, "Nothing: the prompt goes on unchanged."));
  const trace = answer.explain;
  if (!trace) return parts;
  if (trace.searched_as) {
    parts.push(el("p", { className: "muted" },
      `Searched as “${trace.searched_as}”: harness text, an acknowledgement before the question, the words that only say where to look, stack frames and machine ids are left out.`));
  }
  if (trace.dates.length) {
    parts.push(el("p", { className: "muted" }, "Dates: "
      + trace.dates.map((d) => `“${d.said}” = ${d.date}${d.from_today ? " (from today)" : ""}`).join(", ")
      + " (matched by the notes filed then)."));
  }
  parts.push(el("h3", {}, "Prompt terms"), trace.terms.length
    ? el("ul", { className: "chips" }, trace.terms.map((t) => el("li", {}, `${t} `,
      el("span", { className: "muted" }, `idf ${fixed(trace.idf[t], 1)}`))))
    : el("p", { className: "muted" }, "No searchable terms."));
  if (trace.prompt) parts.push(...promptDecision(trace, answer.gate));
  parts.push(...candidates(trace.candidates, answer.gate, answer.rrf_k));
  if (trace.substitutions.length) {
    parts.push(el("h3", {}, "Summary for source"),
      el("ul", {}, trace.substitutions.map((line) => el("li", {}, line))));
  }
  parts.push(el("p", { className: "muted" }, `keywords ${fixed(trace.keyword_ms, 1)} ms · `
    + `query embedding ${fixed(trace.embed_ms, 1)} ms · search ${fixed(trace.search_ms, 1)} ms`));
  return parts;
}

function promptDecision(trace, gate) {
  const p = trace.prompt;
  const verdict = el("p", {}, el("span", { className: `badge ${p.about_notes ? "pass" : "drop"}` },
    p.about_notes ? "goes on" : "silent"), " ", p.why);
  return [
    el("h3", {}, "Is the prompt about the notes?"),
    verdict,
    scoreChart(p.parts, p.score),
    el("p", { className: "muted" },
      `margin ${signed(p.margin, 3)} = best snippet ${fixed(p.top_cosine, 3)} − closest generic `
      + `prompt ${fixed(p.generic_cosine, 3)}${twin(trace.generic_cosine, p.generic_cosine)} − generic level here ${signed(p.generic_offset, 3)}`
      + ` · agreement ${percent(p.agreement)} · z ${fixed(p.zscore, 1)}`),
    el("p", { className: "muted" }, `unknown words ${percent(p.unknown_share)}`
      + `${p.unknown_terms.length ? ` (${p.unknown_terms.join(", ")})` : ""}`
      + `${p.uncounted_terms?.length ? `, not counted: ${p.uncounted_terms.join(", ")}` : ""}`
      + ` · fused top ${fixed(p.fused_top, 3)}`),
    el("p", { className: "muted" }, `Closest generic prompt: “${trace.closest_generic_prompt}”`),
    el("p", { className: "muted" }, referencePoints(trace.reference_points, p)),
    el("p", { className: "muted" }, (!gate.keyword_rule
      ? "Keywords alone never pass (unrelated prompts of the fit matched as many); "
      : `Or on keywords alone: at least ${gate.keyword_terms} terms `
        + `carrying ${percent(gate.keyword_coverage)} of the weight; `)
      + `the best note matched ${p.terms} carrying ${percent(p.coverage)}.`),
  ];
}

// This notebook's own reference points (calibration.py) and the prompt's language.
function referencePoints(r, p) {
  const about = r.about_level === null ? "none (shipped default spread)" : signed(r.about_level, 3);
  const language = `prompt language ${p.language || "not told"}, the closest note's `
    + `${p.closest_language || "not told"}`;
  return `This notebook: generic prompts reach ${signed(r.generic_level, 3)}, prompts about `
    + `its notes ${about} (${r.why}); languages ${r.languages.join(", ") || "not told"}; `
    + `${language}${p.foreign_language ? " — another language than the notes: no keyword "
    + "agreement asked" : ""}; technologies ${technologies(r.technologies)}, the prompt names `
    + `${p.technologies.join(", ") || "none"}${p.other_stack ? " — none of them the notebook's: "
    + "another stack" : ""}.`;
}

function technologies(held) {
  return held === null ? "not measured yet" : held.join(", ") || "none";
}

// A closest generic prompt that is the prompt's twin is counted as no closer than answers come.
function twin(raw, counted) {
  return raw > counted ? ` (a twin at ${fixed(raw, 3)}, counted as ${fixed(counted, 2)})` : "";
}

const PART_NAMES = { bias: "start (bias)", margin: "margin", agreement: "agreement", zscore: "stands out (z)", "foreign language": "other language", "code phrase": "code phrase" };

// A waterfall: each signal moves the score from the bias; the prompt passes when it ends ≥ 0.
function scoreChart(parts, score) {
  const names = Object.keys(parts);
  let running = 0;
  const steps = names.map((name) => {
    const start = running;
    running += parts[name];
    return { name, start, end: running, value: parts[name] };
  });
  const extent = Math.max(1, ...steps.map((s) => Math.max(Math.abs(s.start), Math.abs(s.end))));
  const width = 600, left = 110, right = 70, row = 22;
  const plot = width - left - right;
  const x = (v) => left + (v + extent) / (2 * extent) * plot;
  const rows = [...steps, { name: "score", start: 0, end: score, value: score, total: true }];
  const height = rows.length * row + 18;
  const chart = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": `prompt score ${fixed(score, 2)}; passes at 0 or above`, className: "score-chart fit" });
  rows.forEach((step, i) => {
    const y = i * row + 4;
    const low = Math.min(step.start, step.end), high = Math.max(step.start, step.end);
    const kind = step.total ? (score >= 0 ? "pos" : "neg") : (step.value >= 0 ? "pos" : "neg");
    chart.append(
      svg("text", { x: 0, y: y + 13 }, PART_NAMES[step.name] || step.name),
      svg("rect", { x: x(low), y, width: Math.max(1, x(high) - x(low)), height: row - 8, className: kind },
        svg("title", {}, `${step.name} ${signed(step.value, 2)}`)),
      svg("text", { x: width - right + 6, y: y + 13 }, signed(step.value, 2)),
    );
  });
  const zero = x(0);
  chart.append(
    svg("line", { x1: zero, x2: zero, y1: 0, y2: rows.length * row, className: "threshold" }),
    svg("text", { x: zero + 4, y: rows.length * row + 14 }, "0: passes at or above"),
  );
  return chart;
}

function candidates(list, gate, rrfK) {
  if (!list.length) return [el("h3", {}, "Candidates"), el("p", { className: "muted" }, "No note matched.")];
  const best = Math.max(...list.map((c) => c.cosine));
  const gapScale = gate.neighbour_cosine_gap * 4;
  const header = el("tr", {}, ["", "note", `cosine gap to the best (passes ≤ ${gate.neighbour_cosine_gap})`,
    !gate.keyword_rule ? "keyword weight"
      : `keyword weight (passes ≥ ${percent(gate.keyword_coverage)}, ${gate.keyword_terms} terms)`,
    gate.order ? "score · learned order" : "score", "why"]
    .map((text) => el("th", { scope: "col" }, text)));
  const row = (c) => {
    const gap = best - c.cosine;
    return el("tr", { className: c.passed ? "passed" : "dropped" },
      el("td", {}, el("span", { className: `badge ${c.passed ? "pass" : "drop"}` }, c.passed ? "PASS" : "drop")),
      el("td", { className: "title" }, el("bdi", {}, c.title),
        c.heading && c.heading !== c.title ? el("div", { className: "heading" }, c.heading) : null,
        el("div", { className: "heading" }, `${c.area} × ${c.area_weight}`
          + (c.stands_for ? ` · stands for ${c.stands_for}` : "")
          + (c.phrase_rank ? ` · code phrase #${c.phrase_rank}` : "")
          + (c.note_rank ? ` · note by keywords #${c.note_rank}` : "")
          + (c.filed_rank ? ` · filed on the day #${c.filed_rank}` : "")
          + (c.hubness ? ` · hubness ${fixed(c.hubness, 3)}` : ""))),
      el("td", { className: "chart" }, dotChart(gap, gapScale, gate.neighbour_cosine_gap, "below",
        `${fixed(c.cosine, 3)} (gap ${fixed(gap, 3)})`, c.passed)),
      el("td", { className: "chart" }, dotChart(c.coverage, 1, gate.keyword_rule ? gate.keyword_coverage : null, "above",
        `${c.matched_terms.length} terms, ${percent(c.coverage)}`
        + (c.keywords_counted_in === "whole section" ? "" : " around the matched snippet"), c.passed)),
      el("td", { className: "num" }, fixed(c.score, 4)
        + (c.order_value === null || c.order_value === undefined ? "" : ` · ${fixed(c.order_value, 2)}`)),
      el("td", { className: "why" }, c.why),
    );
  };
  const table = (items) => el("div", { className: "scroll" }, el("table", { className: "candidates" },
    el("thead", {}, header.cloneNode(true)), el("tbody", {}, items.map(row))));
  const shown = list.slice(0, FIRST_CANDIDATES), rest = list.slice(FIRST_CANDIDATES);
  const order = gate.order ? el("p", { className: "muted" }, "Judged in a learned order: the first ten by "
    + `${fixed(gate.order.rank_weight, 1)} / (${rrfK} + fused rank) + ${fixed(gate.order.cosine_weight, 1)} × (cosine − best) `
    + `+ ${fixed(gate.order.coverage_weight, 2)} × keyword weight, the rest by score.`) : null;
  return [el("h3", {}, `Candidates (${list.length})`), order, table(shown), rest.length
    ? el("details", {}, el("summary", {}, `The other ${rest.length} candidates`), table(rest)) : null];
}

// One value on a 0..scale axis, the passing zone shaded (below or above the threshold).
function dotChart(value, scale, threshold, passes, label, passed) {
  const width = 170, plot = 150, height = 30;
  const x = (v) => 4 + Math.min(Math.max(v, 0), scale) / scale * plot;
  // A null threshold: no line passes on this measure alone (the keyword rule turned off).
  const zone = threshold === null ? null : passes === "below" ? { x: x(0), width: x(threshold) - x(0) }
    : { x: x(threshold), width: x(scale) - x(threshold) };
  const off = value > scale;
  return svg("svg", { width, height, role: "img", "aria-label": label },
    svg("rect", { x: x(0), y: 4, width: plot, height: 10, className: "track" }),
    zone && svg("rect", { x: zone.x, y: 4, width: zone.width, height: 10, className: "zone" }),
    zone && svg("line", { x1: x(threshold), x2: x(threshold), y1: 1, y2: 17, className: "threshold" }),
    svg("circle", { cx: x(value), cy: 9, r: off ? 3 : 4.5, className: passed ? "dot-pass" : "dot-drop" },
      svg("title", {}, label)),
    svg("text", { x: 4, y: 28 }, (off ? "≫ " : "") + label),
  );
}

// -- activity ---------------------------------------------------------------------------------

async function loadActivity() {
  const box = document.getElementById("activity");
  const data = await fetchInto(box, "/ui/activity?limit=50", "Activity");
  if (data === null) return;
  if (!data.entries.length) {
    box.replaceChildren(el("p", { className: "muted" },
      data.enabled ? "No calls yet." : "The activity log is off."));
    return;
  }
  const header = el("tr", {}, ["time", "path", "session", "prompt", "sent, or why nothing", "took"]
    .map((text) => el("th", { scope: "col" }, text)));
  const rows = data.entries.map((entry) => el("tr", {},
    el("td", { className: "num" }, new Date(entry.at).toLocaleString()),
    el("td", {}, el("span", { className: "badge path" }, entry.path)),
    el("td", { title: entry.session_id || "" }, entry.session_id ? entry.session_id.slice(0, 8) : "–"),
    el("td", { className: "prompt-head" }, entry.prompt === null
      ? el("span", { className: "muted" }, "not logged") : entry.prompt),
    el("td", {}, entry.passages.length
      ? el("ul", { className: "sent-list" }, entry.passages.map((p) =>
        el("li", {}, el("bdi", {}, p.title), " ", el("span", { className: "muted" }, fixed(p.score, 4)))))
      : el("span", { className: "muted" }, entry.silence)),
    el("td", { className: "num" }, entry.took_ms === null ? "late" : `${fixed(entry.took_ms, 0)} ms`),
  ));
  box.replaceChildren(el("div", { className: "scroll" },
    el("table", { className: "activity" }, el("thead", {}, header), el("tbody", {}, rows))));
}

document.getElementById("prompt-form").addEventListener("submit", explain);
document.getElementById("refresh-activity").addEventListener("click", loadActivity);
document.getElementById("refresh-checks").addEventListener("click", loadChecks);
loadStatus();
loadActivity();
loadChecks();
