"""`GraphAgent`: one mission at a time through the agent graph; the object a supervisor or benchmark holds."""

from __future__ import annotations

import uuid
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Mapping

from contract.results import write_episode

from onboard.agent.agent_state import AgentState, StaticState
from onboard.agent.corridor_map import CorridorMap
from onboard.agent.instruction_reader import Generate, Reading, read_instruction
from onboard.agent import vlm_planner
from onboard.agent.graph import run_step
from onboard.agent.map_knowledge import MapKnowledge
from onboard.agent.mission_analysis import MissionAnalysis, await_analysis
from onboard.agent.mission_lessons import store_analysis
from onboard.vocab.observation import AgentAction, AgentObservation, SharedFindings, SharedLandmark
from onboard.agent.place_memory import waypoint_anchor_config
from onboard.agent.settings import AgentConfig
from onboard.agent.strategy_control import ErrorThresholdController
from onboard.agent.street_map import StreetMap
from onboard.agent.working_memory import WorkingMemory
from onboard.memory.anchor_graph import AnchorGraph
from onboard.memory.reflection_memory import EpisodicMemory, ReflectionWindow
from onboard.memory.settings import MemoryConfig

# Ablations of the geometric backend, by agent name.
VARIANTS: dict[str, dict[str, bool]] = {
    "geometric": {},
    "geometric-no-reflection": {"use_reflection": False},
    "geometric-no-plan": {"use_plan": False},
    "geometric-no-anchors": {"use_anchors": False},
    "geometric-no-look-up": {"use_look_up": False},
}


def variant_config(name: str, base: AgentConfig | None = None) -> AgentConfig:
    if name not in VARIANTS:
        raise ValueError(f"unknown agent variant {name!r}; choose one of {sorted(VARIANTS)}")
    return replace(base or AgentConfig(), **VARIANTS[name])


class GraphAgent:
    """Resets per mission (`reset`), then one `act` per observation.

    `gazetteer` is the list of landmark names the agent can recognise (it
    does not know where they are); `aliases` their other names (alias -> name, from the map's
    OSM tags), read in a description as the name itself. `experience_store` (optional) feeds plan
    retrieval; the benchmark runs without one. `plan_model` (a
    `PlannerModel`) is used when `config.planner == "llm"`; without one the
    geometric plan is used. `memory` gives the reflection window and the
    episodic prompt length (defaults: `MemoryConfig()`). `reader_generate`
    (``generate(messages, schema) -> str``) is the model the combined
    instruction reader asks where the parser cannot settle; by default the
    plan model's, so both share one loaded model. `flight_id` names the flight
    in the memory file (reflections, the mission analysis); the supervisor
    passes its own, the one the ground station sees in ``flight_start``. `vlm` (a `VlmAsker`) answers the
    navigate and search questions of the `vlm` backend (`onboard.agent.vlm_planner`); the caller hands each
    step's camera frame in first (`see_frame`).
    """

    def __init__(self, config: AgentConfig | None = None, gazetteer: list[str] | None = None, *,
                 name: str = "geometric", memory: MemoryConfig | None = None, experience_store=None,
                 plan_model=None, step_spacing_m: float = 50.0, reader_generate: Generate | None = None,
                 flight_id: str = "", aliases: Mapping[str, str] | None = None, vlm: Any = None) -> None:
        self.config = config or AgentConfig()
        # Labels what this agent writes into the memory file; the merge key with the ground's lessons.
        self.flight_id = flight_id or uuid.uuid4().hex[:12]
        self.memory_config = memory or MemoryConfig()
        if self.config.planner not in ("geometric", "llm", "vlm"):
            raise ValueError(f"unknown planner backend {self.config.planner!r}; use 'geometric', 'llm' or 'vlm'")
        if self.config.planner == "vlm" and vlm is None:
            raise ValueError("planner backend 'vlm' needs a VLM (inference.vlm_model and vlm_mmproj: the model that "
                             "answers the navigate and search questions)")
        self.plan_model = plan_model
        self.vlm = vlm
        self.reader_generate = reader_generate or getattr(plan_model, "generate_json", None)
        self.reading: Reading | None = None
        self.gazetteer = list(gazetteer or [])
        self.aliases = dict(aliases or {})
        self.name = name
        self.experience_store = experience_store
        self.step_spacing_m = step_spacing_m
        self.state: AgentState | None = None
        self.last_path: list[str] = []

    def reset(self, description: str, seed: int = 0, map_knowledge: MapKnowledge | None = None) -> None:
        """Start a mission. `map_knowledge`: what the onboard map says, already in this flight's frame
        (take-off = origin); ignored when `config.use_map` is false. The goal is never taken from it."""
        c = self.config
        self.reading = read_instruction(description, self.gazetteer, self.reader_generate, reader=c.reader,
                                        aliases=self.aliases)
        goal = self.reading.goal
        memory = WorkingMemory(goal, keep=c.fixes_per_landmark, outlier_mads=c.outlier_mads,
                               outlier_floor_m=c.outlier_floor_m, ray_default_m=c.ray_default_m,
                               ray_max_m=c.ray_max_m)
        known = map_knowledge if c.use_map else None
        if known is not None:
            memory.set_map(known.landmarks, known.uncertainty_m, overrule_m=c.map_overrule_m,
                           overrule_min_fixes=c.map_overrule_min_fixes, absent_within_m=c.map_absent_within_m,
                           overrule_spreads=c.map_overrule_spreads)
        static = StaticState(
            config=c, task_instruction=description, goal=goal, memory=memory,
            corridors=None if known is None or known.corridors is None else CorridorMap(known.corridors, c.map_snap_m),
            street_map=StreetMap(),
            anchors=AnchorGraph(waypoint_anchor_config(self.step_spacing_m)) if c.use_anchors else None,
            episodic=EpisodicMemory(prompt_sentences=self.memory_config.episodic_prompt_sentences),
            reflections=ReflectionWindow(
                self.memory_config.reflection_window, flight_id=self.flight_id, task=description,
                store=self.experience_store if c.use_persistent_reflections else None),
            controller=ErrorThresholdController(c.max_consecutive_failures, c.reflection_ttl_steps),
            experience_store=self.experience_store, plan_model=self.plan_model,
            reflection_window=self.memory_config.reflection_window,
            vlm=self.vlm if c.planner == "vlm" else None)
        self.state = AgentState(static)

    def act(self, observation: AgentObservation) -> AgentAction:
        if self.state is None:
            raise RuntimeError("call reset(description) before act()")
        if self.state.static.vlm is not None:  # answers nobody handed in yet (the benchmark has no hook that does)
            for answer in self.state.static.vlm.answers():
                self.note_vlm(answer)
        action, self.last_path = run_step(self.state, observation)
        self.state.dynamic.camera_frame = None  # a frame is this step's only: none next step unless handed in
        return action

    def see_frame(self, frame: Any) -> None:
        """This step's camera frame (RGB), for the `vlm` backend's question; handed in before `act`."""
        if self.state is not None:
            self.state.dynamic.camera_frame = frame

    def note_vlm(self, answer: Any) -> None:
        """A VLM answer (`onboard.inference.vlm_asker.VlmAnswer`) handed in between steps.

        A caption leads the next steps' scene description; a confirm answer is kept beside the goal's
        evidence (it never places or arrives at the goal by itself); both go into the next FrameLog.
        """
        if self.state is None:
            return
        d = self.state.dynamic
        if answer.kind in vlm_planner.STRATEGIES:  # the vlm backend's decision: taken in at the next step
            vlm_planner.note_answer(self.state, answer)
            return
        d.vlm_answers.append(answer.to_json())
        if answer.kind == "caption" and answer.text and not answer.errors:
            d.vlm_caption = (answer.step, answer.text)
        elif answer.kind == "confirm" and answer.goal_seen is not None:
            d.goal_seen.append({**answer.to_json(), "shows_goal": answer.goal_seen.shows_goal,
                                "confidence": answer.goal_seen.confidence, "delivered": d.timestep})

    def findings(self, most: int) -> SharedFindings | None:
        """What this vehicle found itself so far (own frame), for the others of its fleet: the `most` newest
        of each kind (receivers keep what they were told before). None before a mission. Never the fleet's
        own findings again: they would echo round the fleet and gain weight they do not have."""
        if self.state is None:
            return None
        mem = self.state.static.memory
        marks = []
        for name, f in mem.fixes.items():
            lp = mem.landmark(name, live_only=True)
            if lp is not None:
                marks.append(SharedLandmark(name, _xy(lp[0]), round(float(lp[1]), 1), len(f.points)))
        signs = tuple((key[0], _xy(xy)) for key, xy in list(mem.signs_read.items())[-most:])
        return SharedFindings(tuple(marks[-most:]), signs, tuple(_xy(p) for p in mem.looked_from[-most:]))

    def finish_mission(self, deadline_s: float | None = None) -> MissionAnalysis | None:
        """After the mission: wait (at most the deadline) for the model's analysis, keep and store it.

        The analysis becomes a reflection (kept in the memory file with the task, so later flights of
        similar tasks start with it) and, when the model wrote it, the flight's main-plan lesson. Returns
        the mission's analysis (rule-based without a model); None before the mission ended. Idempotent.
        """
        d = self.state.dynamic if self.state is not None else None
        if d is None or d.analysis_request is None:
            return None if d is None else d.mission_analysis
        s = self.state.static
        wait = self.config.mission_analysis_deadline_s if deadline_s is None else deadline_s
        analysis = await_analysis(d.analysis_request, wait, d.mission_analysis)
        d.analysis_request, d.mission_analysis = None, analysis
        s.reflections.add(analysis.text)
        if analysis.source == "model" and self.experience_store is not None:
            plan = asdict(d.plan) if d.plan is not None else {}
            store_analysis(self.experience_store, self.flight_id, s.task_instruction, plan, analysis)
        return analysis

    def summary(self) -> dict:
        """What the mission came to, JSON-ready (episode_summary.json)."""
        st = self.state
        d, f = st.dynamic, st.final
        est = st.static.memory.estimate()
        return {
            "agent": self.name, "task_instruction": st.static.task_instruction,
            "instruction_reader": None if self.reading is None else {
                "reader": self.reading.reader, "unsettled": self.reading.unsettled,
                "model_errors": list(self.reading.model_errors), "model_s": round(self.reading.model_s, 3)},
            "mission_success": f.mission_success, "final_reason": f.final_reason, "timesteps": d.timestep,
            "plan": asdict(d.plan) if d.plan else None, "plan_source": d.plan_source, "plan_errors": d.plan_errors,
            "llm_plan": dict(d.llm_plan) or None, "plan_version": d.plan_version, "llm_calls": list(d.llm_calls),
            "model_calls": len(d.llm_calls), "model_s": round(sum(c["call_s"] or 0.0 for c in d.llm_calls), 3),
            "retrieved_lessons": d.retrieved, "branch_events": list(d.branch_events),
            "target_estimate": None if est is None else [round(float(v), 1) for v in est.xy],
            "goal_prior": None if st.static.memory.prior is None
            else [round(float(v), 1) for v in st.static.memory.prior],
            "prior_dropped": st.static.memory.prior_dropped,
            "goal_read_at": None if st.static.memory.goal_fix is None
            else [round(float(v), 1) for v in st.static.memory.goal_fix],
            "map": self._map_summary(),
            "effects": [e.value for e in st.static.controller.effects],
            "reflections": st.static.reflections.recent(), "episodic_memory": st.static.episodic.sentences,
            "reflections_inherited": st.static.reflections.inherited,
            "mission_analysis": None if d.mission_analysis is None else d.mission_analysis.to_json(),
            **({"vlm_goal_seen": list(d.goal_seen)} if d.goal_seen else {}),
            **({"vlm_planner": vlm_planner.summary(st)} if st.static.vlm is not None else {}),
        }

    def _map_summary(self) -> dict[str, Any] | None:
        """What the onboard map gave and which of its landmarks live perception overruled, and why."""
        st = self.state.static
        mem, cm = st.memory, st.corridors
        if not (mem.map_landmarks or mem.map_dropped or mem.map_refused or cm is not None):
            return None
        return {"landmarks_used": len(mem.map_landmarks), "uncertainty_m": mem.map_uncertainty_m,
                "refused_goal_named": list(mem.map_refused),
                "dropped": {n: {"step": d.step, "why": d.why} for n, d in mem.map_dropped.items()},
                "corridor_waypoints": None if cm is None else len(cm.graph.xy),
                "moves_snapped": None if cm is None else cm.snapped,
                "moves_unsnapped": None if cm is None else cm.unsnapped}

    def write_results(self, folder: str | Path, extra: dict[str, Any] | None = None) -> Path:
        """`trajectory.json` (the FrameLogs) and `episode_summary.json` (the summary plus ``extra``) into `folder`."""
        frames = [fr.to_json() for fr in self.state.dynamic.trajectory_history]
        return write_episode(folder, frames, {**self.summary(), **(extra or {})})


def _xy(p) -> tuple[float, float]:
    return round(float(p[0]), 1), round(float(p[1]), 1)
