"""What the supervisor does around each step of a flying mission: telemetry, maps, detections, the fleet.

The mission runner calls these hooks (`onboard.mission.ports.MissionHooks`); none of them changes
what the mission does. A by-product that fails (a map that does not draw) is logged and the
flight goes on.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from contract.messages import Detection, Detections, FlightStart, MapImage, VlmAnswerReport
from contract.results import rgb_image_path
from onboard.vocab.observation import ActionKind, AgentAction, SharedFindings
from onboard.mission.observed import WorldObservation
from onboard.mission.ports import MissionHooks

log = logging.getLogger("aerie.supervisor")


def action_words(action: AgentAction) -> str:
    """The action as a progress line says it."""
    if action.kind == ActionKind.ARRIVE:
        return "arrive"
    if action.kind == ActionKind.LOOK_UP:
        return f"look up {action.altitude_m} m"
    if action.kind == ActionKind.COME_DOWN:
        return "come down" + ("" if action.node is None else f" -> {action.node}")
    if action.kind == ActionKind.LOOK_LOW:
        return f"look low {action.altitude_m} m"
    return f"-> waypoint {action.node}"


class FlightHooks(MissionHooks):
    """The supervisor's side of one mission (`sup`: the `Supervisor`, for its publisher, bridge and settings)."""

    def __init__(self, sup: Any, agent: Any, folder: Path, outcome: Any, step_limit: int) -> None:
        self.sup = sup
        self.agent = agent
        self.folder = folder
        self.outcome = outcome
        self.step_limit = step_limit
        self._published_plan: Any = None
        self._confirmed_at: tuple[int, int] | None = None  # the goal's place the VLM was last asked to confirm

    def event(self, kind: str, detail: dict[str, Any]) -> None:
        self.sup.event(kind, detail)

    def progress(self, line: str) -> None:
        self.sup.on_progress(line)
        log.info("%s", line)  # in the journal too, whether or not progress lines are shown

    def starting(self, understood_line: str) -> None:
        sup = self.sup
        s = sup.bridge.state
        if sup.publisher is not None:
            home = (s.home_lat, s.home_lon) if math.isfinite(s.home_lat) and math.isfinite(s.home_lon) else None
            sup.publisher.flight_start(FlightStart(sup.flight_id, sup.mission.name, sup.mission.instruction,
                                                   sup.cfg.agent.planner, home, self.step_limit,
                                                   understood=understood_line))
        sup.on_progress(f"taking off to {sup.sup.cruise_alt_m:.0f} m")

    async def before_act(self, step: int, observed: WorldObservation, heading: float = 0.0) -> None:
        await self._detect(step, observed, heading)
        await self._vlm(step, observed)

    def shared(self) -> SharedFindings | None:
        """What the other members found, in this flight's frame (None: flying alone or nothing yet)."""
        findings = self.sup.fleet_findings
        envelope = self.sup.bridge.envelope() if findings is not None else None
        return None if envelope is None else findings.for_agent(
            envelope.home, fence_m=envelope.cfg.geofence.max_distance_from_home_m)

    async def after_act(self, step: int, action: AgentAction) -> None:
        from onboard.agent.step_report import plan_payload, step_payload

        self._findings_out()
        st = self.agent.state
        # A new plan, or the same one with news: the model's plan failed late (source llm-fallback).
        if st.dynamic.plan is not None and (st.dynamic.plan, st.dynamic.plan_source) != self._published_plan:
            self._published_plan = (st.dynamic.plan, st.dynamic.plan_source)
            self.sup.publish("plan", plan_payload(st))
        frame = st.dynamic.trajectory_history[-1]
        self.sup.publish("agent_step", step_payload(st, frame))
        # Every answer the agent took in before this step (the hooks' and those the vlm planner took itself).
        for said in frame.vlm:
            self.sup.event("vlm_answer", VlmAnswerReport.read({**said, "delivered_step": frame.timestep}).body())
        t_map = time.perf_counter()
        if await asyncio.to_thread(self._maps, step):
            self.outcome.map_ms.append((time.perf_counter() - t_map) * 1000.0)
        dist = frame.distance_to_target
        self.sup.on_progress(f"step {step:>3}  {frame.strategy:<8} {action_words(action):<18} "
                             f"target est. {'?' if dist is None else f'{dist:.0f} m':>7}  {action.reason[:70]}")

    def _findings_out(self) -> None:
        """What this vehicle found, for the others: set between steps, while the agent is idle."""
        from contract.fleet_discovery import MAX_ITEMS

        findings = self.sup.fleet_findings
        envelope = self.sup.bridge.envelope() if findings is not None else None
        if envelope is not None:
            findings.publish(self.agent.findings(MAX_ITEMS), envelope.home, self.sup.flight_id)

    def _maps(self, step: int) -> bool:
        """The agent's landmark and semantic maps of this step: into semantic_images/, the semantic one published."""
        sup = self.sup
        if not sup.sup.save_maps and sup.publisher is None:
            return False
        from onboard.agent.map_render import encode_png, render_semantic_map, write_maps

        try:
            if sup.sup.save_maps:
                semantic = write_maps(self.agent.state, self.folder, sup.mission.name)[1]
            else:
                semantic = encode_png(render_semantic_map(self.agent.state, sup.mission.name)[0])
        except Exception:  # a map is a by-product: never let it end a flight
            log.exception("drawing the agent's maps at step %d", step)
            return False
        sup.publish("map", MapImage(semantic, step=step, kind="semantic"))
        return True

    async def _vlm(self, step: int, obs: WorldObservation) -> None:
        """The VLM between steps (`inference.vlm_model`): hand in what came back, ask the next question.

        Never waits for the model (`onboard.inference.vlm_asker`): confirm once for each place the goal is
        put at (again when the locate expert asks for another look), a caption otherwise, on this step's frame;
        a question while one is in flight is not asked. With the `vlm` planner the frame goes to the agent,
        whose step asks the navigate or search question, and no caption is asked (the worker is its).
        """
        asker = self.sup.vlm
        if asker is None:
            return
        for answer in asker.answers():
            self.agent.note_vlm(answer)  # on telemetry with the step's FrameLog (after_act)
        if asker.busy:
            return
        from onboard.perception.captioning import CAPTION_PROMPT
        from onboard.supervisor.camera_frames import shared_frames
        from onboard.supervisor.camera_source import decode_png

        frames = shared_frames(self.sup)
        if frames is not None:  # the camera's newest frame, from the one connection the vehicle keeps to it
            shot = frames.newest()
            frame = shot[0] if shot is not None else None
        else:  # decoded off the loop: a 1920 x 1080 PNG takes tens of ms
            frame = await asyncio.to_thread(decode_png, obs.image_png) if obs.image_png else None
        if frame is None:
            return
        rgb = np.ascontiguousarray(frame[:, :, ::-1])  # BGR -> RGB, as the VLM's encoder wants
        st = self.agent.state.static
        fix = st.memory.goal_fix
        placed = None if fix is None else (round(float(fix[0])), round(float(fix[1])))
        if st.vlm is not None:  # the vlm planner asks about this frame in the step, if the worker is free
            self.agent.see_frame(rgb)
        again = self.agent.state.dynamic.confirm_again
        if placed is not None and (placed != self._confirmed_at or again):
            if asker.ask_confirm(step, rgb, st.goal.goal_name or st.task_instruction):
                self._confirmed_at = placed
                self.agent.state.dynamic.confirm_again = False
        elif st.vlm is None:
            asker.ask_caption(step, rgb, CAPTION_PROMPT)

    async def _detect(self, step: int, obs: WorldObservation, heading: float) -> None:
        """The detector on this step's frame (`supervisor.detect_every_steps`), its objects to telemetry."""
        sup = self.sup
        if sup.detector is None or step % sup.sup.detect_every_steps:
            return
        import cv2

        from firmware_bridge.intents import PositionNed
        from firmware_bridge.maneuvers import position_from_home
        from onboard.perception.camera_model import CameraPose
        from onboard.supervisor.camera_frames import shared_frames
        from onboard.supervisor.camera_source import decode_png

        cfg = sup.sup
        frames = shared_frames(sup)
        taken_at = None  # the pose the camera's frame was taken at (None: the world feed's, taken here and now)
        if frames is not None:
            shot = frames.newest()
            frame, taken_at = shot if shot is not None else (None, None)
        else:
            frame = decode_png(obs.image_png) if obs.image_png else None
        if frame is None:
            return
        if cfg.save_images:
            cv2.imwrite(str(rgb_image_path(self.folder, step)), frame)
        if frame.shape[:2] != (cfg.camera_height, cfg.camera_width):
            frame = cv2.resize(frame, (cfg.camera_width, cfg.camera_height))
        here = position_from_home(sup.bridge)
        pose = CameraPose(here.north_m, here.east_m, here.down_m, yaw_deg=heading, pitch_deg=cfg.camera_pitch_deg)
        if taken_at is not None:
            pose = CameraPose(taken_at.north, taken_at.east, -taken_at.up, yaw_deg=taken_at.camera_heading_deg(),
                              pitch_deg=taken_at.camera_pitch_deg(cfg.camera_pitch_deg))
            here = PositionNed(taken_at.north, taken_at.east, -taken_at.up)
        out = await sup.detector.call(lambda p: p.perceive_async(frame, pose, list(cfg.detect_prompts)))
        if out is None:
            return
        dets = []
        for o in out.objects:
            rng = o.range_m
            north = east = None
            if rng is not None and math.isfinite(rng):
                north = here.north_m + rng * math.cos(math.radians(o.bearing_deg))
                east = here.east_m + rng * math.sin(math.radians(o.bearing_deg))
            dets.append(Detection(str(o.label), round(min(1.0, max(0.0, float(o.score))), 3),
                                  round(float(o.bearing_deg), 1),
                                  None if rng is None or not math.isfinite(rng) else round(float(rng), 1), north, east))
        timings = {str(k): float(v) for k, v in dict(out.timings_ms).items()
                   if isinstance(v, (int, float)) and math.isfinite(v)}
        sup.publish("detections", Detections(tuple(dets), step=step, timings_ms=timings))
