// Aerie ground-station dashboard: live view over Server-Sent Events and replay of logged flights.
// Plain JS + SVG, no dependencies. The server sends envelopes as items {seq, t_ns, type, payload, pos?};
// everything shown is derived from the item list by render(), so live and replay share one code path.
"use strict";

const $ = (id) => document.getElementById(id);
const SVGNS = "http://www.w3.org/2000/svg";
const W = 800, H = 600;

const store = { live: {}, vehicle: null, source: "live", replay: null, buildings: [], worldOrigin: null, flights: [],
                status: {}, statusAt: 0 };
// A live state older than this is shown as stale: the vehicle said it, but it may no longer be true.
const STALE_S = 5;
const M_PER_DEG = 6371008.8 * Math.PI / 180;
let renderQueued = false;
let mapProjection = null;   // [east, north] -> SVG x, y of the map as last drawn

function liveOf(vid) {
  if (!store.live[vid]) store.live[vid] = { items: [], seqs: new Set(), start: 0 };
  return store.live[vid];
}

// Keep one vehicle's live items sorted by seq; a newer flight_start starts a fresh view.
function addLiveItems(vid, items) {
  const v = liveOf(vid);
  for (const it of items) {
    if (it.type === "flight_start" && it.seq > v.start) {
      const keep = v.items.filter((x) => x.seq > it.seq);
      v.items = keep; v.seqs = new Set(keep.map((x) => x.seq)); v.start = it.seq;
    }
    if (it.seq < v.start || v.seqs.has(it.seq)) continue;
    v.seqs.add(it.seq);
    const n = v.items.length;
    if (n === 0 || v.items[n - 1].seq < it.seq) v.items.push(it);
    else {
      let i = n - 1;
      while (i >= 0 && v.items[i].seq > it.seq) i--;
      v.items.splice(i + 1, 0, it);
    }
    if (it.type === "flight_end" || it.type === "flight_start") setTimeout(loadFlights, 300);
  }
  if (!store.vehicle) { store.vehicle = vid; }
  updateVehicleSelect();
  queueRender();
}

function queueRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => { renderQueued = false; render(); });
}

function currentItems() {
  if (store.source === "live") return store.vehicle && store.live[store.vehicle] ? store.live[store.vehicle].items : [];
  const r = store.replay;
  if (!r) return [];
  return r.items.filter((it) => it.t_ns <= r.t);
}

// Everything the panels show, from an item list.
function derive(items) {
  const d = { path: [], state: null, events: [], step: null, detections: null, graph: null, plan: null, map: null,
              lastSeq: 0, start: null, end: null };
  for (const it of items) {
    d.lastSeq = Math.max(d.lastSeq, it.seq);
    const p = it.payload || {};
    switch (it.type) {
      case "state": d.state = it; if (it.pos) d.path.push(it.pos); break;
      case "event": d.events.push(it); break;
      case "agent_step": d.step = p; if (p.anchor_graph) d.graph = p.anchor_graph; break;
      case "detections": d.detections = Array.isArray(p) ? p : (p.detections || []); break;
      case "plan": d.plan = p; if (p.anchor_graph) d.graph = p.anchor_graph; break;
      case "map": d.map = it; break;
      case "flight_start": d.start = it; break;
      case "flight_end": d.end = it; break;
    }
  }
  return d;
}

function fmt(v, digits = 1) {
  if (v === null || v === undefined) return "–";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : v.toFixed(digits);
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function kvTable(el, rows) {
  el.replaceChildren(...rows.map(([k, v, cls]) => {
    const tr = document.createElement("tr");
    const a = document.createElement("td"); a.textContent = k;
    const b = document.createElement("td"); b.textContent = fmt(v); if (cls) b.className = cls;
    tr.append(a, b); return tr;
  }));
}

function timeOf(it, t0) {
  if (!it || t0 === null) return "";
  const s = (it.t_ns - t0) / 1e9;
  return `T+${s.toFixed(1)}s`;
}

function render() {
  const items = currentItems();
  const d = derive(items);
  const t0 = d.start ? d.start.t_ns : (items.length ? items[0].t_ns : null);
  document.body.dataset.lastSeq = d.lastSeq;
  document.body.dataset.source = store.source;
  renderMap(d);
  renderVehicle(d);
  renderAgent(d);
  renderDetections(d);
  renderGraph(d);
  renderEvents(d, t0);
  renderAnalysis();
  const info = d.start ? `flight #${d.start.seq}` + (d.start.payload && d.start.payload.mission ? ` · ${d.start.payload.mission}` : "")
    + (d.end ? " · ended" : (store.source === "live" ? " · in progress" : "")) : "";
  $("flight-info").textContent = info;
}

// ---- map ----------------------------------------------------------------------------------------

function niceStep(span) {
  const raw = span / 6, p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

function renderMap(d) {
  const pts = d.path;
  let minE = -20, maxE = 20, minN = -20, maxN = 20;
  for (const [e, n] of pts) { minE = Math.min(minE, e); maxE = Math.max(maxE, e); minN = Math.min(minN, n); maxN = Math.max(maxN, n); }
  const dets = (d.detections || []).filter((x) => typeof x.north === "number" && typeof x.east === "number");
  for (const x of dets) { minE = Math.min(minE, x.east); maxE = Math.max(maxE, x.east); minN = Math.min(minN, x.north); maxN = Math.max(maxN, x.north); }
  const cx = (minE + maxE) / 2, cy = (minN + maxN) / 2;
  const span = Math.max(maxE - minE, (maxN - minN) * W / H, 40) * 1.15;
  const s = W / span;
  const sx = (e) => W / 2 + (e - cx) * s, sy = (n) => H / 2 - (n - cy) * s;
  mapProjection = ([e, n]) => [sx(e), sy(n)];
  $("world").setAttribute("transform", `translate(${W / 2} ${H / 2}) scale(${s} ${-s}) translate(${-cx} ${-cy})`);
  // Footprints are in the world's frame; the map is in the vehicle's (around its home).
  const hp = d.state && d.state.payload ? d.state.payload : {};
  const o = store.worldOrigin;
  if (o && typeof hp.home_lat === "number" && typeof hp.home_lon === "number") {
    const offN = (hp.home_lat - o[0]) * M_PER_DEG, offE = (hp.home_lon - o[1]) * M_PER_DEG * Math.cos(o[0] * Math.PI / 180);
    $("buildings").setAttribute("transform", `translate(${-offE} ${-offN})`);
  } else $("buildings").removeAttribute("transform");
  const traj = $("trajectory");
  traj.setAttribute("points", pts.map(([e, n]) => `${e},${n}`).join(" "));
  traj.dataset.points = pts.length;

  // grid with labels in metres
  const step = niceStep(span), g = $("grid"), kids = [];
  for (let e = Math.ceil((cx - span / 2) / step) * step; e <= cx + span / 2; e += step) {
    kids.push(svg("line", { x1: sx(e), x2: sx(e), y1: 0, y2: H }));
    kids.push(svg("text", { x: sx(e) + 3, y: H - 4 }, `${Math.round(e)} E`));
  }
  const spanN = span * H / W;
  for (let n = Math.ceil((cy - spanN / 2) / step) * step; n <= cy + spanN / 2; n += step) {
    kids.push(svg("line", { x1: 0, x2: W, y1: sy(n), y2: sy(n) }));
    kids.push(svg("text", { x: 3, y: sy(n) - 3 }, `${Math.round(n)} N`));
  }
  g.replaceChildren(...kids);
  $("scale").replaceChildren(svg("line", { x1: W - 20 - step * s, x2: W - 20, y1: 20, y2: 20 }),
                             svg("text", { x: W - 20 - step * s, y: 36 }, `${step} m`));

  $("home").replaceChildren(svg("circle", { cx: sx(0), cy: sy(0), r: 5, fill: "none", stroke: "#f5c451", "stroke-width": 2 }),
                            svg("text", { x: sx(0) + 7, y: sy(0) - 6, fill: "#f5c451", "font-size": 11 }, "H"));
  const vm = $("vehicle-marker");
  if (pts.length) {
    const [e, n] = pts[pts.length - 1];
    const yaw = d.state && d.state.payload && typeof d.state.payload.yaw_deg === "number" ? d.state.payload.yaw_deg : 0;
    vm.replaceChildren(svg("path", { d: "M0,-11 L7,8 L0,4 L-7,8 Z", fill: "#ffffff", stroke: "#4fb3ff", "stroke-width": 2,
                                     transform: `translate(${sx(e)} ${sy(n)}) rotate(${yaw})` }));
  } else vm.replaceChildren();
  $("detections-map").replaceChildren(...dets.map((x) => svg("g", {}, null, [
    svg("circle", { cx: sx(x.east), cy: sy(x.north), r: 5, fill: "#ff6b6b" }),
    svg("text", { x: sx(x.east) + 7, y: sy(x.north) + 4, fill: "#ff9b9b", "font-size": 11 }, x.label || "?")])));
}

function renderBuildings() {
  $("buildings").replaceChildren(...store.buildings.map((ring) => svg("polygon", { points: ring.map(([e, n]) => `${e},${n}`).join(" ") })));
}

function svg(tag, attrs, text, children) {
  const el = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  if (text !== undefined && text !== null) el.textContent = text;
  if (children) el.append(...children);
  return el;
}

// ---- panels -------------------------------------------------------------------------------------

function renderVehicle(d) {
  const p = d.state ? d.state.payload || {} : {};
  const pct = typeof p.battery_percent === "number" ? p.battery_percent : null;
  const bar = $("battery-bar");
  bar.style.width = `${pct === null ? 0 : Math.max(0, Math.min(100, pct))}%`;
  bar.style.background = pct === null ? "#555" : pct < 20 ? "var(--bad)" : pct < 40 ? "var(--warn)" : "var(--ok)";
  $("battery-text").textContent = pct === null ? "battery –" : `battery ${pct.toFixed(0)} %` +
    (typeof p.battery_voltage_v === "number" ? ` · ${p.battery_voltage_v.toFixed(1)} V` : "");
  const speed = typeof p.vn_m_s === "number" && typeof p.ve_m_s === "number" ? Math.hypot(p.vn_m_s, p.ve_m_s) : null;
  const pos = d.path.length ? d.path[d.path.length - 1] : null;
  const rows = [];
  const asOf = stateAge(d);
  if (asOf) rows.push(["state as of", asOf.text, asOf.stale ? "bad" : ""]);
  kvTable($("vehicle-table"), rows.concat([
    ["mode", p.flight_mode],
    ["armed · in air", p.armed === undefined ? null : `${fmt(p.armed)} · ${fmt(p.in_air)}`], ["landed state", p.landed_state],
    ["altitude (rel)", p.rel_alt_m !== undefined ? p.rel_alt_m : (typeof p.down_m === "number" ? -p.down_m : null)],
    ["ground speed m/s", speed], ["position E, N m", pos ? `${pos[0].toFixed(1)}, ${pos[1].toFixed(1)}` : null],
    ["GPS", p.gps_fix !== undefined ? `${p.gps_fix} (${fmt(p.gps_satellites)} sats)` : null],
  ]));
  $("vehicle-table").classList.toggle("stale", !!(asOf && asOf.stale));
  const flags = ["global_position_ok", "home_position_ok", "local_position_ok", "armable"].filter((k) => k in p);
  $("health").replaceChildren(...flags.map((k) => {
    const s = document.createElement("span"); s.className = p[k] ? "ok" : "bad"; s.textContent = k.replace(/_ok$/, "").replace(/_/g, " ");
    return s;
  }));
}

// How old the shown state is. Live: from the server's /api/vehicles (ages on the ground's clock,
// counted on since it was fetched); replay: the state's time in the flight.
function stateAge(d) {
  if (!d.state) return null;
  if (store.source !== "live") return { text: `T+${((d.state.t_ns - (d.start ? d.start.t_ns : d.state.t_ns)) / 1e9).toFixed(1)} s`, stale: false };
  const st = store.status[store.vehicle];
  if (!st || !st.state || st.state.seq !== d.state.seq) return null;
  const age = st.state.age_s + (performance.now() - store.statusAt) / 1000;
  const after = d.end && d.end.seq > d.state.seq ? " · the flight ended after it" : "";
  return { text: `${age < 1 ? age.toFixed(1) : age.toFixed(0)} s ago${after}`, stale: age > STALE_S || !!after };
}

function renderAgent(d) {
  const s = d.step || {};
  const dec = s.decision || {};
  const goal = s.goal !== undefined ? s.goal : (d.plan ? d.plan.goal : undefined);
  const rows = [["step", s.step], ["goal", goal], ["state", s.current_state], ["decision", dec.action],
                ["reason", dec.reason, "reason"], ["distance est. m", s.distance_estimate_m]];
  if (s.plan_version !== undefined && s.plan_version !== null) rows.push(["plan version", s.plan_version]);
  if (s.retrieval_mode) rows.push(["retrieval", s.retrieval_mode]);
  if (s.reflect_reason) rows.push(["reflection", s.reflect_reason, "reason"]);
  if (s.refined_action) rows.push(["refined action", s.refined_action]);
  if (d.plan && Array.isArray(d.plan.steps)) rows.push(["plan", d.plan.steps.map(fmt).join(" → "), "reason"]);
  kvTable($("agent-table"), rows);
  // The latest semantic map PNG (served from the flight log; fetched only when it changes).
  const link = $("map-link");
  if (d.map) {
    const src = `/api/map/${encodeURIComponent(d.map.vehicle_id)}/${d.map.seq}.png`;
    if (link.getAttribute("href") !== src) { link.href = src; $("map-snapshot").src = src; }
    link.classList.remove("hidden");
  } else link.classList.add("hidden");
}

function renderDetections(d) {
  const rows = (d.detections || []).slice(0, 20).map((x) => {
    const tr = document.createElement("tr");
    for (const v of [x.label, x.score, x.bearing_deg, x.range_m]) {
      const td = document.createElement("td"); td.textContent = fmt(v, 2); tr.append(td);
    }
    return tr;
  });
  $("detections").tBodies[0].replaceChildren(...rows);
}

function renderGraph(d) {
  const g = d.graph, el = $("anchors");
  if (!g || !Array.isArray(g.anchors) || !g.anchors.length) { el.replaceChildren(); $("places").textContent = "no anchors yet"; return; }
  const xs = g.anchors.map((a) => a.x), ys = g.anchors.map((a) => a.y);
  const minX = Math.min(...xs), maxX = Math.max(...xs), minY = Math.min(...ys), maxY = Math.max(...ys);
  const s = Math.min(280 / Math.max(maxX - minX, 1), 140 / Math.max(maxY - minY, 1));
  const px = (x) => 10 + (x - minX) * s, py = (y) => 150 - (y - minY) * s;
  const byId = new Map(g.anchors.map((a) => [a.anchor_id, a]));
  const lines = [];
  for (const a of g.anchors) for (const nb of a.neighbours || []) {
    const b = byId.get(nb);
    if (b && a.anchor_id < nb) lines.push(svg("line", { x1: px(a.x), y1: py(a.y), x2: px(b.x), y2: py(b.y) }));
  }
  const last = g.anchors[g.anchors.length - 1];
  const dots = g.anchors.map((a) => svg("circle", { cx: px(a.x), cy: py(a.y), r: 4, class: a === last ? "current" : "" },
                                        null, [svg("title", {}, `anchor ${a.anchor_id}` + (a.place_id !== undefined && a.place_id !== null ? ` · place ${a.place_id}` : ""))]));
  el.replaceChildren(...lines, ...dots);
  const places = Array.isArray(g.places) ? g.places : [];
  $("places").textContent = `${g.anchors.length} anchors · ` + (places.length ? places.map((p) => `#${p.place_id} ${p.place_type}`).join(", ") : "no places");
}

function renderEvents(d, t0) {
  const list = d.events.slice(-300).reverse().map((it) => {
    const p = it.payload || {};
    const li = document.createElement("li"); li.className = p.kind || "";
    const t = document.createElement("span"); t.className = "t"; t.textContent = timeOf(it, t0);
    const k = document.createElement("span"); k.className = "k"; k.textContent = p.kind || "?";
    const x = document.createElement("span"); x.textContent = eventWords(p.kind, p.detail);
    if (p.detail !== null && p.detail !== undefined) x.title = JSON.stringify(p.detail);
    li.append(t, k, x); return li;
  });
  $("events").replaceChildren(...list);
}

// Events in words: the vehicle's (arm, takeoff, landing, mode, failsafe, refusal), the link's and the
// memory sync's; any other kind shows its detail as "key value" pairs.
const EVENT_WORDS = {
  armed: () => "armed", disarmed: () => "disarmed", takeoff: () => "took off", landed: () => "landed",
  mode: (x) => `mode ${x.mode || x.to || ""}` + (x.from ? ` (was ${x.from})` : ""),
  mode_change: (x) => EVENT_WORDS.mode(x), mode_changed: (x) => EVENT_WORDS.mode(x),
  failsafe: (x) => `failsafe${x.action ? ": " + x.action : ""}${x.reason ? " (" + x.reason + ")" : ""}`,
  refused: (x) => `command refused${x.reason ? ": " + x.reason : ""}`,
  clamped: (x) => `command clamped${x.reason ? ": " + x.reason : ""}`,
  link_lost: () => "link to the autopilot lost", link_restored: () => "link to the autopilot restored",
  battery_warn: (x) => `battery low${typeof x.percent === "number" ? ` (${x.percent.toFixed(0)} %)` : ""}`,
  battery_return: () => "battery critical: returning home", battery_land: () => "battery critical: landing now",
  lessons_imported: (x) => `lessons imported: ${fmt(x.added)} new, ${fmt(x.already_present)} already known`,
  lessons_refused: (x) => `lessons refused: ${x.reason || "no reason given"}`,
  mission_aborted: (x) => `mission aborted${x.reason ? ": " + x.reason : ""}`,
  mission_error: (x) => `mission failed${x.error ? ": " + x.error : ""}`,
};

function eventWords(kind, detail) {
  if (detail === null || detail === undefined) detail = {};
  if (typeof detail !== "object" || Array.isArray(detail)) return fmt(detail);
  const words = EVENT_WORDS[kind];
  if (words) return words(detail);
  return Object.entries(detail).map(([k, v]) => `${k.replace(/_/g, " ")} ${fmt(v)}`).join(", ");
}

// The replayed flight's post-flight analysis, and its key step marked on the map.
function renderAnalysis() {
  const a = store.source !== "live" && store.replay ? store.replay.analysis : null;
  $("analysis-panel").classList.toggle("hidden", !a);
  const mark = $("key-step");
  if (!a) { mark.replaceChildren(); return; }
  const k = a.key_step;
  kvTable($("analysis-table"), [
    ["outcome", a.status, a.status === "success" ? "good" : "bad"], ["agent steps", a.steps],
    ["key step", `${k.step}: ${k.action}` + (k.increase_m > 0 ? ` (+${k.increase_m.toFixed(0)} m)` : "")],
    ["its state", k.current_state], ["reflection", a.reflect_reason, "reason"], ["refined action", a.refined_action],
    ["plan note", a.reflection_note, "reason"]]);
  let pos = null;
  for (const it of store.replay.items) { if (it.seq > k.seq) break; if (it.type === "state" && it.pos) pos = it.pos; }
  const xy = pos && mapProjection ? mapProjection(pos) : null;
  mark.replaceChildren(...(xy ? [svg("circle", { cx: xy[0], cy: xy[1], r: 8, fill: "none", stroke: "#ff6b6b", "stroke-width": 2 }),
                                 svg("text", { x: xy[0] + 10, y: xy[1] + 4, fill: "#ff6b6b", "font-size": 12 }, `key step ${k.step}`)] : []));
}

// ---- vehicles, flights, replay ------------------------------------------------------------------

function updateVehicleSelect() {
  const sel = $("vehicle");
  const ids = Object.keys(store.live).sort();
  if (sel.options.length === ids.length) return;
  sel.replaceChildren(...ids.map((id) => new Option(id, id, false, id === store.vehicle)));
}

async function loadFlights() {
  try {
    const r = await fetch("/api/flights");
    store.flights = await r.json();
  } catch (e) { return; }
  const sel = $("source"), keep = sel.value;
  const opts = [new Option("Live", "live")];
  for (const f of store.flights.slice().reverse()) {
    const when = new Date(f.start_t_ns / 1e6).toISOString().replace("T", " ").slice(0, 19);
    const mission = f.info && f.info.mission ? ` · ${f.info.mission}` : "";
    opts.push(new Option(`${f.vehicle_id} #${f.start_seq} · ${when}${mission}${f.end_seq ? "" : " (open)"}`,
                         `${f.vehicle_id}/${f.start_seq}`));
  }
  const same = opts.length === sel.options.length && opts.every((o, i) => o.value === sel.options[i].value && o.text === sel.options[i].text);
  if (same) return;   // rebuilding would close a list the user has open
  sel.replaceChildren(...opts);
  sel.value = [...sel.options].some((o) => o.value === keep) ? keep : "live";
}

async function selectSource(value) {
  store.source = value;
  stopPlay();
  if (value === "live") { store.replay = null; $("replay").classList.add("hidden"); queueRender(); return; }
  const r = await fetch(`/api/flights/${value}`);
  if (!r.ok) return;
  const data = await r.json();
  const items = data.items;
  const t0 = items.length ? items[0].t_ns : 0, t1 = items.length ? items[items.length - 1].t_ns : 0;
  store.replay = { items, t0, t1, t: t1, timer: null, analysis: data.analysis };
  const scrub = $("scrub");
  scrub.max = 1000; scrub.value = 1000;
  $("replay").classList.remove("hidden");
  showReplayTime();
  queueRender();
}

function showReplayTime() {
  const r = store.replay;
  if (r) $("replay-time").textContent = `T+${((r.t - r.t0) / 1e9).toFixed(1)} / ${((r.t1 - r.t0) / 1e9).toFixed(1)} s`;
}

function stopPlay() {
  if (store.replay && store.replay.timer) { clearInterval(store.replay.timer); store.replay.timer = null; }
  $("play").innerHTML = "&#9654;";
}

function togglePlay() {
  const r = store.replay;
  if (!r) return;
  if (r.timer) { stopPlay(); return; }
  if (r.t >= r.t1) r.t = r.t0;
  $("play").innerHTML = "&#10074;&#10074;";
  let last = performance.now();
  r.timer = setInterval(() => {
    const now = performance.now();
    r.t = Math.min(r.t1, r.t + (now - last) * 1e6 * Number($("speed").value));
    last = now;
    $("scrub").value = r.t1 > r.t0 ? Math.round(1000 * (r.t - r.t0) / (r.t1 - r.t0)) : 1000;
    showReplayTime(); queueRender();
    if (r.t >= r.t1) stopPlay();
  }, 50);
}

// Each vehicle's last message and last state with their ages, as the server sees them.
async function loadStatus() {
  try {
    const r = await fetch("/api/vehicles");
    if (!r.ok) return;
    store.status = await r.json();
    store.statusAt = performance.now();
  } catch (e) { return; }
  queueRender();
}

function connectLive() {
  const es = new EventSource("/api/live");
  es.onopen = () => { const l = $("link"); l.textContent = "live"; l.className = "pill on"; };
  es.onerror = () => { const l = $("link"); l.textContent = "reconnecting"; l.className = "pill off"; };
  es.addEventListener("items", (ev) => { const m = JSON.parse(ev.data); addLiveItems(m.vehicle_id, m.items); });
}

async function loadWorld() {
  try {
    const r = await fetch("/api/world");
    const w = await r.json();
    store.buildings = w.buildings || [];
    store.worldOrigin = w.origin || null;
    renderBuildings();
  } catch (e) { /* no world: the map shows the trajectory only */ }
}

$("vehicle").addEventListener("change", (e) => { store.vehicle = e.target.value; queueRender(); });
$("source").addEventListener("change", (e) => selectSource(e.target.value));
$("play").addEventListener("click", togglePlay);
$("scrub").addEventListener("input", (e) => {
  const r = store.replay; if (!r) return;
  stopPlay(); r.t = r.t0 + (r.t1 - r.t0) * Number(e.target.value) / 1000; showReplayTime(); queueRender();
});
connectLive();
loadStatus();
setInterval(loadStatus, 2000);
loadFlights();
loadWorld();
render();
