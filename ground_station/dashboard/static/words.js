// Aerie ground-station dashboard: plans and events in words (pure functions of payloads; app.js draws them).
// Loaded before app.js; a field that is missing or of the wrong type reads as nothing, never as an error.
"use strict";

const isNum = (v) => typeof v === "number" && Number.isFinite(v);
const isXY = (p) => Array.isArray(p) && p.length >= 2 && isNum(p[0]) && isNum(p[1]);

function fmt(v, digits = 1) {
  if (v === null || v === undefined) return "–";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : v.toFixed(digits);
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

const cap = (t) => t ? t[0].toUpperCase() + t.slice(1) : t;

function planSentence(x) {
  const goal = x.goal.trim().replace(/[.]$/, "");
  const verb = /^(fly|go|reach|search|read|find|look|locate|follow|return|land|navigate|turn|climb|hover)\b/i.test(goal) ? ""
    : x.strategy === "search" ? "search " : x.strategy === "locate" ? "find " : x.strategy === "navigate" ? "fly to " : "";
  const until = typeof x.desired_state === "string" && x.desired_state ? `, until ${x.desired_state}` : "";
  return `${cap(verb + goal)}${until}.`;
}

function planSummary(p, s) {
  const parts = [];
  if (typeof p.goal === "string" && p.goal) parts.push(`For the instruction “${p.goal}”`);
  const from = [p.source ? `${p.source} plan` : "plan", isNum(s.plan_version) ? `version ${s.plan_version}` : ""].filter(Boolean).join(", ");
  parts.push(parts.length ? `(${from})` : cap(from));
  let text = parts.join(" ") + (typeof p.reason === "string" && p.reason ? `: ${p.reason}.` : ".");
  const llm = p.llm && typeof p.llm === "object" ? p.llm : null;
  if (llm && isNum(llm.requested_step)) {
    text += ` Asked the model at step ${llm.requested_step}` + (isNum(llm.answered_step) ? `, answered at step ${llm.answered_step}` : ", no answer yet")
      + (isNum(llm.adopted_step) ? `, adopted at step ${llm.adopted_step}` : "") + (isNum(llm.call_s) ? ` (${llm.call_s.toFixed(1)} s)` : "") + ".";
  }
  if (Array.isArray(p.retrieved) && p.retrieved.length) text += ` Made with ${p.retrieved.length} past lesson${p.retrieved.length > 1 ? "s" : ""}.`;
  if (Array.isArray(p.errors) && p.errors.length) text += ` Problems: ${p.errors.filter((e) => typeof e === "string").join("; ")}.`;
  return text;
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
  mission_start: (x) => `mission started${x.goal ? ": find " + x.goal : ""}`,
  mission_end: (x) => `mission ended${x.result ? ": " + x.result : x.outcome ? ": " + x.outcome : ""}`,
  anchor_created: (x) => `new anchor #${fmt(x.anchor_id)} in the agent's memory`,
  place_created: (x) => `new place #${fmt(x.place_id)}${x.place_type ? " (" + x.place_type + ")" : ""}`,
  pattern_stuck: (x) => `the agent is going round in circles${isNum(x.window) ? ` (last ${x.window} steps)` : ""}`,
  move_timeout: (x) => `${x.command ? x.command : "move" + (x.waypoint !== undefined ? " to waypoint " + fmt(x.waypoint) : "")} not reached in time`
    + (isNum(x.error_m) ? ` (${x.error_m.toFixed(0)} m off)` : ""),
  command_refused: (x) => `${x.command || "command"} refused${x.reason ? ": " + x.reason : ""}`,
  perception: (x) => x.note ? String(x.note) : (x.enabled ? "perception on" : "perception off"),
  bad_frame: (x) => `camera frame dropped${x.reason ? ": " + x.reason : ""}`,
  mission_error: (x) => `mission failed${x.error ? ": " + x.error : ""}`,
  vlm_answer: (x) => vlmWords(x),
};

// One answer of the vision-language model (a vlm_answer event's detail): what was asked, of which
// step's frame, how long it took, whether the fallback stood in, and what it said.
function vlmWords(x) {
  const head = [String(x.kind || "?"), isNum(x.step) ? `step ${x.step}` : null,
                isNum(x.seconds) ? `${x.seconds.toFixed(1)} s` : null, x.used_fallback ? "fallback" : null];
  return head.filter((w) => w).join(" · ") + (x.text ? `: ${x.text}` : "");
}

function eventWords(kind, detail) {
  if (detail === null || detail === undefined) detail = {};
  if (typeof detail !== "object" || Array.isArray(detail)) return fmt(detail);
  const words = EVENT_WORDS[kind];
  if (words) return words(detail);
  return Object.entries(detail).map(([k, v]) => `${k.replace(/_/g, " ")} ${fmt(v)}`).join(", ");
}

// A step's search region (agent_step.search_region), if it is one the page can draw: 3 or more [x, y] vertices.
function searchRegion(s) {
  const r = s && s.search_region;
  return r && typeof r === "object" && Array.isArray(r.outline) && r.outline.length >= 3 && r.outline.every(isXY) ? r : null;
}

// "12 ha not yet looked at": the unseen area the search region stands for.
function regionWords(r) {
  if (!r || !isNum(r.unseen_m2)) return "";
  const ha = r.unseen_m2 / 1e4;
  return `${ha < 10 ? ha.toFixed(1) : ha.toFixed(0)} ha not yet looked at`;
}
