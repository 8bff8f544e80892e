// Over 400 lines: one page's script, its panels all drawn by one render() from the same item lists (below); no build step to join modules.
// Aerie ground-station dashboard: live view over Server-Sent Events and replay of logged flights.
// Plain JS + SVG, no dependencies. The server sends envelopes as items {seq, t_ns, type, payload, pos?, shift?};
// everything shown is derived from the item lists by render(), so live and replay share one code path.
// Every vehicle with live items is drawn on the one map (its own colour, trail and label); the detail
// panels show the followed one (store.vehicle), picked in the vehicle list, on the map or in the header.
"use strict";

const $ = (id) => document.getElementById(id);
const SVGNS = "http://www.w3.org/2000/svg";
const W = 800, H = 600;

const store = { live: {}, vehicle: null, follow: false, source: "live", replay: null, flights: [],
                world: { buildings: [], streets: [], landmarks: [] }, status: {}, statusAt: 0, colours: {} };
// A live state older than this is shown as stale: the vehicle said it, but it may no longer be true.
const STALE_S = 5;
// One colour per vehicle, in the order vehicles first appear (stable while the page is open).
const PALETTE = ["#4fb3ff", "#ff9f43", "#3ecf8e", "#c77dff", "#ff6b9d", "#f5c451", "#00d2d3", "#a3cb38"];
let renderQueued = false;
let mapProjection = null;   // [east, north] in the map's frame -> SVG x, y of the map as last drawn

function colourOf(vid) {
  if (!(vid in store.colours)) store.colours[vid] = PALETTE[Object.keys(store.colours).length % PALETTE.length];
  return store.colours[vid];
}

function liveOf(vid) {
  if (!store.live[vid]) store.live[vid] = { items: [], seqs: new Set(), start: 0, version: 0, derived: null };
  colourOf(vid);
  return store.live[vid];
}

// Keep one vehicle's live items sorted by seq; a newer flight_start starts a fresh view.
function addLiveItems(vid, items) {
  if (typeof vid !== "string" || !Array.isArray(items)) return;
  const v = liveOf(vid);
  for (const it of items) {
    if (!it || typeof it.seq !== "number") continue;   // what cannot be read is left out, not half-drawn
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
  v.version++;
  if (!store.vehicle) { store.vehicle = vid; }
  updateVehicleSelect();
  queueRender();
}

function queueRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => { renderQueued = false; render(); });
}

// What is on the map: every live vehicle, or the one replayed flight. Each view: {vid, colour, d}.
function views() {
  if (store.source === "live") {
    return Object.keys(store.live).sort().map((vid) => {
      const v = store.live[vid];
      if (!v.derived || v.derived.version !== v.version) v.derived = { version: v.version, d: derive(v.items) };
      return { vid, colour: colourOf(vid), d: v.derived.d };
    });
  }
  const r = store.replay;
  if (!r) return [];
  return [{ vid: r.vehicle, colour: colourOf(r.vehicle), d: derive(r.items.filter((it) => it.t_ns <= r.t)) }];
}

// Everything the panels show, from one vehicle's item list; an item that cannot be read is skipped.
function derive(items) {
  const d = { path: [], state: null, events: [], step: null, detections: null, graph: null, plan: null, map: null,
              lastSeq: 0, start: null, end: null, shift: null, vlm: { count: 0, fallbacks: 0, latest: null }, items };
  for (const it of items) {
    try {
      if (!it || typeof it !== "object" || !isNum(it.seq)) continue;
      const p = it.payload;
      if (!p || typeof p !== "object") continue;   // every payload is an object (detections may be a list)
      d.lastSeq = Math.max(d.lastSeq, it.seq);
      switch (it.type) {
        case "state": d.state = it; if (isXY(it.pos)) d.path.push(it.pos); if (isXY(it.shift)) d.shift = it.shift; break;
        case "event": d.events.push(it); if (p.kind === "vlm_answer" && p.detail) { d.vlm.count++; d.vlm.fallbacks += p.detail.used_fallback ? 1 : 0; d.vlm.latest = p.detail; } break;
        // the vehicle's own analysis is a message of its own; the events panel lists it with the events
        case "mission_analysis": d.events.push({ ...it, payload: { kind: "mission_analysis", detail: p } }); break;
        case "agent_step": d.step = p; if (p.anchor_graph) d.graph = p.anchor_graph; break;
        case "detections": d.detections = Array.isArray(p) ? p : (Array.isArray(p.detections) ? p.detections : []); break;
        case "plan": d.plan = p; if (p.anchor_graph) d.graph = p.anchor_graph; break;
        case "map": d.map = it; break;
        case "flight_start": d.start = it; break;
        case "flight_end": d.end = it; break;
      }
    } catch (e) { /* skip it */ }
  }
  return d;
}

// A vehicle-frame [east, north] (its home, or the agent's take-off point) in the map's frame.
function onMap(d, p) {
  const s = d.shift || [0, 0];
  return [p[0] + s[0], p[1] + s[1]];
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

const EMPTY = derive([]);

function render() {
  const vs = views();
  const followed = vs.find((v) => v.vid === store.vehicle) || vs[0] || { vid: null, colour: PALETTE[0], d: EMPTY };
  const d = followed.d, items = d.items;
  const t0 = d.start ? d.start.t_ns : (items.length ? items[0].t_ns : null);
  document.body.dataset.lastSeq = d.lastSeq;
  document.body.dataset.source = store.source;
  document.body.dataset.vehicle = followed.vid || "";
  renderMap(vs, followed);
  renderFleet(vs, followed);
  renderVehicle(d);
  renderAgent(d);
  renderDetections(d);
  renderGraph(d);
  renderEvents(d, t0);
  renderAnalysis(followed);
  const info = d.start ? `${followed.vid} flight #${d.start.seq}` + (d.start.payload && d.start.payload.mission ? ` · ${d.start.payload.mission}` : "")
    + (d.end ? " · ended" : (store.source === "live" ? " · in progress" : "")) : "";
  $("flight-info").textContent = info;
}

// ---- map ----------------------------------------------------------------------------------------

function niceStep(span) {
  const raw = span / 6, p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

// The map's extent: the followed vehicle's track when following, else every track (and what the
// agents estimate); with a city and nothing flown yet, the area round the map's origin.
function extent(vs, followed) {
  const box = { minE: Infinity, maxE: -Infinity, minN: Infinity, maxN: -Infinity };
  const add = ([e, n]) => { box.minE = Math.min(box.minE, e); box.maxE = Math.max(box.maxE, e); box.minN = Math.min(box.minN, n); box.maxN = Math.max(box.maxN, n); };
  for (const v of (store.follow && followed.vid ? [followed] : vs)) {
    for (const p of v.d.path) add(onMap(v.d, p));
    const s = v.d.step || {};
    if (isXY(s.target_estimate)) add(onMap(v.d, s.target_estimate));
    const region = searchRegion(s);
    if (region) for (const p of region.outline) add(onMap(v.d, p));
  }
  const minSpan = store.world.streets.length || store.world.buildings.length ? 240 : 40;
  if (!Number.isFinite(box.minE)) { box.minE = box.maxE = box.minN = box.maxN = 0; }
  if (store.follow && followed.d.path.length) {   // keep the followed vehicle in the middle
    const [e, n] = onMap(followed.d, followed.d.path[followed.d.path.length - 1]);
    const half = Math.max(box.maxE - e, e - box.minE, (box.maxN - n) * W / H, (n - box.minN) * W / H, minSpan / 2);
    return { cx: e, cy: n, span: 2 * half * 1.1 };
  }
  return { cx: (box.minE + box.maxE) / 2, cy: (box.minN + box.maxN) / 2,
           span: Math.max(box.maxE - box.minE, (box.maxN - box.minN) * W / H, minSpan) * 1.15 };
}

function renderMap(vs, followed) {
  const { cx, cy, span } = extent(vs, followed);
  const s = W / span;
  const sx = (e) => W / 2 + (e - cx) * s, sy = (n) => H / 2 - (n - cy) * s;
  mapProjection = ([e, n]) => [sx(e), sy(n)];
  $("world").setAttribute("transform", `translate(${W / 2} ${H / 2}) scale(${s} ${-s}) translate(${-cx} ${-cy})`);

  // Each vehicle's trail in its colour; the followed one on top, as #trajectory.
  const line = (v) => v.d.path.map((p) => onMap(v.d, p).join(",")).join(" ");
  $("trails").replaceChildren(...vs.filter((v) => v !== followed).map((v) =>
    svg("polyline", { class: "trail", points: line(v), stroke: v.colour, "data-vehicle": v.vid, "data-points": v.d.path.length })));
  const traj = $("trajectory");
  traj.setAttribute("points", line(followed));
  traj.setAttribute("stroke", followed.colour);
  traj.dataset.points = followed.d.path.length;
  traj.dataset.vehicle = followed.vid || "";

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

  // Each vehicle's home, and its marker with a label: the followed one larger.
  const homes = [], marks = [];
  for (const v of vs) {
    const [hx, hy] = mapProjection(onMap(v.d, [0, 0]));
    homes.push(svg("circle", { cx: hx, cy: hy, r: 4, fill: "none", stroke: v.colour, "stroke-width": 1.5 }));
    if (!v.d.path.length) continue;
    const [x, y] = mapProjection(onMap(v.d, v.d.path[v.d.path.length - 1]));
    const p = v.d.state && v.d.state.payload ? v.d.state.payload : {};
    const yaw = isNum(p.yaw_deg) ? p.yaw_deg : 0;
    const big = v === followed ? 1.25 : 1;
    // Over a city, a vehicle without a home fix is in its own frame only: say so rather than mislead.
    const unplaced = store.world.origin && !v.d.shift;
    const label = v.vid + (isNum(p.battery_percent) ? ` ${p.battery_percent.toFixed(0)}%` : "") + (unplaced ? " (no home fix: not placed on the map)" : "");
    marks.push(svg("g", { class: "vehicle" + (v === followed ? " followed" : ""), "data-vehicle": v.vid }, null, [
      svg("path", { d: "M0,-11 L7,8 L0,4 L-7,8 Z", fill: "#ffffff", stroke: v.colour, "stroke-width": 2.5,
                    transform: `translate(${x} ${y}) rotate(${yaw}) scale(${big})` }),
      svg("text", { x: x + 11, y: y - 9, fill: v.colour, class: "label" }, label)]));
  }
  $("home").replaceChildren(...homes);
  $("vehicle-marker").replaceChildren(...marks);
  renderEstimates(vs, followed, mapProjection);
  renderLandmarks(mapProjection);
  const dets = (followed.d.detections || []).filter((x) => x && isNum(x.north) && isNum(x.east));
  $("detections-map").replaceChildren(...dets.map((x) => {
    const [px, py] = mapProjection(onMap(followed.d, [x.east, x.north]));
    return svg("g", {}, null, [svg("circle", { cx: px, cy: py, r: 5, fill: "#ff6b6b" }),
                               svg("text", { x: px + 7, y: py + 4, fill: "#ff9b9b", "font-size": 11 }, x.label || "?")]);
  }));
}

// What each agent believes about its goal (agent_step): the part of the described region it has not
// looked at yet (search_region, a translucent outline beneath everything else), the target estimate
// (a ringed cross, a dashed line from the vehicle to it) and where the goal's name was read (goal_fix,
// a diamond); the followed agent's fused landmarks as small squares.
function renderEstimates(vs, followed, proj) {
  const out = [];
  for (const v of vs) {
    const region = searchRegion(v.d.step);
    if (!region) continue;
    const pts = region.outline.slice(0, 64).map((p) => proj(onMap(v.d, p)).join(",")).join(" ");
    out.push(svg("polygon", { class: "search-region", points: pts, fill: v.colour, stroke: v.colour, "data-vehicle": v.vid },
                 null, [svg("title", {}, `${v.vid}: search region` + (regionWords(region) ? `, ${regionWords(region)}` : ""))]));
  }
  for (const v of vs) {
    const s = v.d.step || {};
    const here = v.d.path.length ? proj(onMap(v.d, v.d.path[v.d.path.length - 1])) : null;
    if (isXY(s.target_estimate)) {
      const [x, y] = proj(onMap(v.d, s.target_estimate));
      if (here) out.push(svg("line", { x1: here[0], y1: here[1], x2: x, y2: y, stroke: v.colour, class: "to-target" }));
      out.push(svg("g", { class: "target", "data-vehicle": v.vid }, null, [
        svg("circle", { cx: x, cy: y, r: 9, stroke: v.colour }),
        svg("path", { d: `M${x - 13},${y}H${x + 13}M${x},${y - 13}V${y + 13}`, stroke: v.colour }),
        svg("title", {}, `${v.vid}: target estimate` + (s.goal ? ` (${s.goal})` : ""))]));
    }
    if (isXY(s.goal_fix)) {
      const [x, y] = proj(onMap(v.d, s.goal_fix));
      out.push(svg("path", { class: "goal-fix", d: `M${x},${y - 8}L${x + 8},${y}L${x},${y + 8}L${x - 8},${y}Z`, stroke: v.colour },
                   null, [svg("title", {}, `${v.vid}: the goal's name was read here`)]));
    }
  }
  const lm = followed.d.step && followed.d.step.landmarks && typeof followed.d.step.landmarks === "object" ? followed.d.step.landmarks : {};
  for (const [name, p] of Object.entries(lm).slice(0, 100)) {
    if (!isXY(p)) continue;
    const [x, y] = proj(onMap(followed.d, p));
    out.push(svg("rect", { class: "agent-landmark", x: x - 3, y: y - 3, width: 6, height: 6 }, null, [svg("title", {}, name)]));
  }
  $("estimates").replaceChildren(...out);
}

// Names of the map's landmarks that are in view (at most 40, so labels stay readable).
function renderLandmarks(proj) {
  const shown = [];
  for (const l of store.world.landmarks) {
    const [x, y] = proj(l.pos);
    if (x < 0 || x > W || y < 0 || y > H) continue;
    shown.push(svg("text", { x, y, class: "landmark" }, l.name));
    if (shown.length >= 40) break;
  }
  $("landmarks").replaceChildren(...shown);
}

function svg(tag, attrs, text, children) {
  const el = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  if (text !== undefined && text !== null) el.textContent = text;
  if (children) el.append(...children);
  return el;
}

// ---- vehicle list -------------------------------------------------------------------------------

// Seconds since the ground last heard from the vehicle (server's clock, counted on since fetched).
function linkAge(vid) {
  const st = store.status[vid];
  if (!st || !st.last_message || !isNum(st.last_message.age_s)) return null;
  return st.last_message.age_s + (performance.now() - store.statusAt) / 1000;
}

function ageText(age) {
  return age < 1 ? `${age.toFixed(1)} s` : age < 120 ? `${age.toFixed(0)} s` : `${(age / 60).toFixed(0)} min`;
}

// One row per vehicle, updated in place: rows rebuilt many times a second would swallow a click
// that lands between mouse-down and mouse-up.
function renderFleet(vs, followed) {
  const body = $("fleet").tBodies[0];
  const rows = new Map([...body.rows].map((tr) => [tr.dataset.vehicle, tr]));
  vs.forEach((v, i) => {
    const p = v.d.state && v.d.state.payload ? v.d.state.payload : {};
    const s = v.d.step;
    const age = store.source === "live" ? linkAge(v.vid) : null;
    const stale = age !== null && age > STALE_S;
    let tr = rows.get(v.vid);
    if (!tr) {
      tr = document.createElement("tr");
      tr.dataset.vehicle = v.vid;
      for (let k = 0; k < 5; k++) tr.append(document.createElement("td"));
    }
    rows.delete(v.vid);
    if (body.rows[i] !== tr) body.insertBefore(tr, body.rows[i] || null);
    tr.className = v === followed ? "followed" : "";
    const cells = [
      [v.vid, "id"], [p.flight_mode || "–", "mode"],
      [isNum(p.battery_percent) ? `${p.battery_percent.toFixed(0)} %` : "–",
       isNum(p.battery_percent) && p.battery_percent < 20 ? "bad" : ""],
      [age === null ? "–" : ageText(age) + (stale ? " stale" : ""), stale ? "bad stale" : "link"],
      [s && isNum(s.step) ? `${s.step}: ${s.strategy || (s.decision && s.decision.action) || "?"}` : (v.d.end ? "ended" : "–"), "step"]];
    cells.forEach(([text, cls], k) => {
      const td = tr.cells[k];
      if (td.textContent !== text) { td.textContent = text; td.title = text; }
      td.className = cls;
    });
    if (!tr.cells[0].querySelector(".swatch")) {
      const sw = document.createElement("span"); sw.className = "swatch"; sw.style.background = v.colour;
      tr.cells[0].prepend(sw);
    }
    tr.title = s && typeof s.goal === "string" && s.goal ? `goal: ${s.goal}` + (s.decision && s.decision.action ? `; last move: ${s.decision.action}` : "") : "";
  });
  for (const tr of rows.values()) tr.remove();
  $("fleet-count").textContent = `(${vs.length})`;
  $("fit-all").classList.toggle("hidden", !store.follow);
}

function followVehicle(vid) {
  if (!vid) return;
  store.vehicle = vid; store.follow = true;
  $("vehicle").value = vid;
  queueRender();
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
  ]).concat(d.vlm.count ? [["VLM answers", `${d.vlm.count}` + (d.vlm.fallbacks ? ` (${d.vlm.fallbacks} fell back)` : "")],
                           ["VLM latest", vlmWords(d.vlm.latest), "reason vlm-latest"]] : []));
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
  const st = store.status[d.state.vehicle_id];
  if (!st || !st.state || st.state.seq !== d.state.seq) return null;
  const age = st.state.age_s + (performance.now() - store.statusAt) / 1000;
  const after = d.end && d.end.seq > d.state.seq ? " · the flight ended after it" : "";
  return { text: `${age < 1 ? age.toFixed(1) : age.toFixed(0)} s ago${after}`, stale: age > STALE_S || !!after };
}

function renderAgent(d) {
  const s = d.step || {};
  const dec = s.decision || {};
  const goal = s.goal !== undefined ? s.goal : (d.plan ? d.plan.goal : undefined);
  const rows = [["task", s.task_instruction || null], ["step", s.step], ["goal", goal],
                ["strategy", s.strategy || null], ["state", s.current_state], ["decision", dec.action],
                ["reason", dec.reason, "reason"], ["distance est. m", s.distance_estimate_m]];
  if (searchRegion(s)) rows.push(["search region", regionWords(searchRegion(s)) || "–"]);
  if (s.plan_version !== undefined && s.plan_version !== null) rows.push(["plan version", s.plan_version]);
  if (s.retrieval_mode) rows.push(["retrieval", s.retrieval_mode]);
  if (s.reflect_reason) rows.push(["reflection", s.reflect_reason, "reason"]);
  if (s.refined_action) rows.push(["refined action", s.refined_action]);
  kvTable($("agent-table"), rows);
  renderPlan(d);
  // The latest semantic map PNG (served from the flight log; fetched only when it changes).
  const link = $("map-link");
  if (d.map) {
    const src = `/api/map/${encodeURIComponent(d.map.vehicle_id)}/${d.map.seq}.png`;
    if (link.getAttribute("href") !== src) { link.href = src; $("map-snapshot").src = src; }
    link.classList.remove("hidden");
  } else link.classList.add("hidden");
}

// The plan in words: what it is for and where it came from, then its sub-goals as a numbered list of
// sentences, the one the agent is on marked. The raw message stays one click away.
function renderPlan(d) {
  const p = d.plan && typeof d.plan === "object" ? d.plan : null;
  const s = d.step || {};
  // What the vehicle understood of its instruction, said back before it armed (flight_start), first.
  const start = d.start && d.start.payload && typeof d.start.payload === "object" ? d.start.payload : {};
  const understood = typeof start.understood === "string" ? start.understood : "";
  $("plan-understood").textContent = understood;
  $("plan-panel").classList.toggle("hidden", !p && !understood);
  if (!p) { $("plan").replaceChildren(); $("plan-summary").textContent = ""; return; }
  const steps = Array.isArray(p.steps) ? p.steps.filter((x) => x && typeof x === "object" && typeof x.goal === "string") : [];
  const on = steps.findIndex((x) => x.goal === s.goal);
  $("plan").replaceChildren(...steps.map((x, i) => {
    const li = document.createElement("li");
    li.textContent = planSentence(x);
    li.className = i === on ? "current" : on > i ? "done" : "";
    if (x.strategy) { const tag = document.createElement("span"); tag.className = "tag"; tag.textContent = x.strategy; li.append(" ", tag); }
    return li;
  }));
  $("plan-summary").textContent = planSummary(p, s);
  $("plan-raw").textContent = JSON.stringify(p, null, 1);
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

// The replayed flight's post-flight analysis, and its key step marked on the map.
function renderAnalysis(followed) {
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
  for (const it of store.replay.items) { if (it.seq > k.seq) break; if (it.type === "state" && isXY(it.pos)) pos = it.pos; }
  const xy = pos && mapProjection ? mapProjection(onMap(followed.d, pos)) : null;
  mark.replaceChildren(...(xy ? [svg("circle", { cx: xy[0], cy: xy[1], r: 8, fill: "none", stroke: "#ff6b6b", "stroke-width": 2 }),
                                 svg("text", { x: xy[0] + 10, y: xy[1] + 4, fill: "#ff6b6b", "font-size": 12 }, `key step ${k.step}`)] : []));
}

// ---- vehicles, flights, replay ------------------------------------------------------------------

function updateVehicleSelect() {
  const sel = $("vehicle");
  const ids = Object.keys(store.live).sort();
  if (sel.options.length !== ids.length) sel.replaceChildren(...ids.map((id) => new Option(id, id, false, id === store.vehicle)));
  if (store.vehicle && sel.value !== store.vehicle) sel.value = store.vehicle;
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
  if (value === "live") {
    store.replay = null; $("replay").classList.add("hidden");
    if (!store.live[store.vehicle]) store.vehicle = Object.keys(store.live).sort()[0] || null;
    queueRender(); return;
  }
  const r = await fetch(`/api/flights/${value}`);
  if (!r.ok) return;
  const data = await r.json();
  const items = data.items;
  const t0 = items.length ? items[0].t_ns : 0, t1 = items.length ? items[items.length - 1].t_ns : 0;
  store.replay = { items, t0, t1, t: t1, timer: null, analysis: data.analysis, vehicle: data.flight.vehicle_id };
  store.vehicle = data.flight.vehicle_id;
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
  es.addEventListener("items", (ev) => {
    let m;
    try { m = JSON.parse(ev.data); } catch (e) { return; }   // a batch that does not parse is skipped
    if (m && typeof m === "object") addLiveItems(m.vehicle_id, m.items);
  });
}

// The city beneath the tracks (streets, buildings, landmarks of the onboard map), fetched once.
async function loadWorld() {
  try {
    const r = await fetch("/api/world");
    if (!r.ok) return;
    const w = await r.json();
    const rings = (x) => Array.isArray(x) ? x.filter((ring) => Array.isArray(ring) && ring.length >= 2 && ring.every(isXY)) : [];
    store.world = { origin: isXY(w.origin) ? w.origin : null, buildings: rings(w.buildings), streets: rings(w.streets),
                    landmarks: Array.isArray(w.landmarks) ? w.landmarks.filter((l) => l && isXY(l.pos) && typeof l.name === "string") : [] };
    renderCity();
    queueRender();
  } catch (e) { /* no city: the map shows the tracks on the grid only */ }
}

// One path per layer (thousands of footprints stay cheap to draw); in the map's frame under #world.
function renderCity() {
  const d = (rings, close) => rings.map((ring) => "M" + ring.map(([e, n]) => `${e},${n}`).join("L") + (close ? "Z" : "")).join("");
  const b = $("buildings"), st = $("streets");
  b.setAttribute("d", d(store.world.buildings, true)); b.dataset.count = store.world.buildings.length;
  st.setAttribute("d", d(store.world.streets, false)); st.dataset.count = store.world.streets.length;
}

$("vehicle").addEventListener("change", (e) => followVehicle(e.target.value));
$("fleet").addEventListener("click", (e) => { const tr = e.target.closest("tr[data-vehicle]"); if (tr) followVehicle(tr.dataset.vehicle); });
$("vehicle-marker").addEventListener("click", (e) => { const g = e.target.closest("g[data-vehicle]"); if (g) followVehicle(g.dataset.vehicle); });
$("fit-all").addEventListener("click", () => { store.follow = false; queueRender(); });
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
