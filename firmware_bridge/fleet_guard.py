"""Ties the separation rule to one live vehicle: its telemetry, its fleet picture, its events.

The rule (``separation.py``) is arithmetic on positions in one frame; this
glue puts the vehicle's own telemetry and the others' geodetic reports into
its home frame, calls the rule from whichever thread asks (the event loop on
submit, the setpoint thread on every tick) and announces every change of
what the rule does, so a person can see why a vehicle stopped or climbed:
``separation_hold`` / ``_layer`` / ``_climb`` / ``_clear``,
``fleet_channel_silent`` / ``fleet_channel_restored``,
``separation_refused`` (a goto) and ``traffic_rejected`` (a bad report).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from common.geodesy import ned_from_geo
from common.stopping import stop_offset
from firmware_bridge.fleet_picture import FleetPicture, TrafficReport
from firmware_bridge.intents import Intent, PositionNed
from firmware_bridge.safety_envelope import SafetyEnvelope, SafetyViolation
from firmware_bridge.separation import Decision, Kinematics, Other, SeparationRule, conflict, margin, other_path
from firmware_bridge.settings import FleetConfig, SafetyConfig
from firmware_bridge.vehicle_state import VehicleState

log = logging.getLogger(__name__)

# A landing spot is searched on a ring of this many bearings ...
LANDING_BEARINGS = 12
# ... and is good enough when every member is at least this many min_separation_m away.
LANDING_CLEARANCE = 1.5
# A member gone quiet slower than this (m/s, across and up/down) near the ground is taken to stand there.
PARKED_SPEED_M_S = 0.5


class FleetGuard:
    """One vehicle's separation: ``update_traffic`` in, ``apply`` on every setpoint, ``check_goto`` on gotos."""

    def __init__(self, cfg: FleetConfig, safety: SafetyConfig, state_of: Callable[[], VehicleState],
                 envelope_of: Callable[[], SafetyEnvelope | None],
                 on_event: Callable[[str, dict], Any] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.cfg = cfg
        self.picture = FleetPicture(cfg.member_id, cfg.channel_timeout_s, clock)
        self.rule = SeparationRule(cfg, safety.max_horizontal_speed_m_s, safety.max_vertical_speed_m_s)
        self._state_of = state_of
        self._envelope_of = envelope_of
        self._on_event = on_event or (lambda kind, detail: None)
        self._clock = clock
        self._lock = threading.Lock()
        self._last_action = "clear"
        self._silent = False
        self.last: Decision | None = None

    # -- input ---------------------------------------------------------------------------
    def update_traffic(self, reports: Iterable[TrafficReport]) -> tuple[str, ...]:
        rejected = self.picture.update(reports)
        for why in rejected:
            log.warning("traffic report rejected: %s", why,
                        extra={"fields": {"event": "traffic_rejected", "reason": why}})
            self._on_event("traffic_rejected", {"reason": why})
        return rejected

    # -- frames --------------------------------------------------------------------------
    def _here(self, envelope: SafetyEnvelope) -> Kinematics:
        s = self._state_of()
        north, east = ned_from_geo(envelope.home, s.lat, s.lon) if math.isfinite(s.lat + s.lon) else (math.nan,) * 2
        return Kinematics(north, east, s.rel_alt_m, s.vn_m_s, s.ve_m_s, s.vd_m_s)

    def _others(self, envelope: SafetyEnvelope, now: float, entries: list | None = None) -> list[Other]:
        out = []
        for e in self.picture.fresh(now) if entries is None else entries:
            r = e.report
            north, east = ned_from_geo(envelope.home, r.lat, r.lon)
            alt = r.alt_amsl_m - envelope.home.alt_amsl
            out.append(Other(r.member_id, Kinematics(north, east, alt, r.vn_m_s, r.ve_m_s, r.vd_m_s), e.age_s(now)))
        return out

    def _parked(self, envelope: SafetyEnvelope, now: float) -> list[Other]:
        """Members gone quiet standing still near the ground (within a band of home), as they were last heard.

        Only landings judge them: in the air an old position says nothing, but a vehicle that went quiet
        on the ground (its mission over, its process gone) is still standing there.
        """
        out = []
        for o in self._others(envelope, now, self.picture.last_known(now)):
            k = o.at
            still = math.hypot(k.vn_m_s, k.ve_m_s) < PARKED_SPEED_M_S and abs(k.vd_m_s) < PARKED_SPEED_M_S
            if still and abs(k.alt_m) < self.cfg.altitude_band_m:
                out.append(Other(o.member_id, replace(k, vn_m_s=0.0, ve_m_s=0.0, vd_m_s=0.0), 0.0))
        return out

    # -- the rule ------------------------------------------------------------------------
    def apply(self, intent: Intent, envelope: SafetyEnvelope) -> Decision:
        """The intent as it may be flown; raises :class:`SafetyViolation` when the own position is unknown."""
        if not self.cfg.enabled:
            return Decision(intent, "clear")
        with self._lock:
            now = self._clock()
            here = self._here(envelope)
            if not here.finite():
                raise SafetyViolation("own position or velocity unknown: separation cannot be judged", intent)
            silent = self.picture.stale(now)
            decision = self.rule.judge(here, intent, self._others(envelope, now), silent)
            self._announce(decision, silent, now)
            self.last = decision
            return decision

    def check_goto(self, target: PositionNed, envelope: SafetyEnvelope) -> str | None:
        """Why a goto to ``target`` is refused (it conflicts now, or the channel is silent), or None."""
        if not self.cfg.enabled:
            return None
        with self._lock:
            now = self._clock()
            here = self._here(envelope)
            why = None
            if not here.finite():
                why = "own position unknown: separation cannot be judged"
            elif self.picture.stale(now):
                why = f"fleet channel silent for {self.picture.silent_s(now):.1f} s"
            else:
                paths = self.rule.paths(here, target)
                hits = [o.member_id for o in self._others(envelope, now)
                        if any(conflict(q, other_path(o), self.cfg.lookahead_s, self.cfg, margin(here, o.at, self.cfg))
                               for q in paths)]
                if hits:
                    why = f"path conflicts with fleet members {sorted(hits)}"
        if why is not None:
            log.warning("goto refused: %s", why, extra={"fields": {"event": "separation_refused", "reason": why}})
            self._on_event("separation_refused", {"reason": why})
        return why

    def landing_spot(self, envelope: SafetyEnvelope) -> tuple[PositionNed | None, list[int]]:
        """Where to land instead, and the members too near where the vehicle would come down; (None, []) when clear.

        A landing is PX4's Land, which no setpoint check sees, so it is judged once, before it is
        commanded, and at the point where PX4 will put the vehicle down: not here but a braking
        distance on along its course (``common/stopping.py``; the caller brakes to a hover first,
        so that is nearly here). Judging the commanded point let a member landing at 7 m/s touch down
        0.6 m from another on PX4 SITL (issue 36, row 14). Each member counts by where it is and by
        where it would come down if it landed now (its reported velocity); one within
        ``min_separation_m`` horizontally of that point (landed or not) makes the vehicle land beside
        it instead, on a ring of 2, 3 or 4 times ``min_separation_m`` around the point at the spot
        farthest from every member the envelope accepts. Two missions ending at one waypoint
        otherwise landed on each other (0.38 m apart in the first 8-vehicle ``aerie bench fleet``).
        """
        if not self.cfg.enabled:
            return None, []
        with self._lock:
            here = self._here(envelope)
            now = self._clock()
            others = self._others(envelope, now) + self._parked(envelope, now)
        if not here.finite():
            return None, []
        limit = self.cfg.min_separation_m
        dn, de = stop_offset(here.vn_m_s, here.ve_m_s)
        down_n, down_e = here.north_m + dn, here.east_m + de
        spots = {o.member_id: _where_it_may_come_down(o) for o in others}

        def clearance(n: float, e: float, member: int | None = None) -> float:
            return min((math.hypot(n - pn, e - pe) for m, points in spots.items() if member in (None, m)
                        for pn, pe in points), default=math.inf)

        near = sorted(m for m in spots if clearance(down_n, down_e, m) < limit)
        if not near:
            return None, []
        best: tuple[float, PositionNed] | None = None
        for k in (2.0, 3.0, 4.0):
            for i in range(LANDING_BEARINGS):
                a = 2.0 * math.pi * i / LANDING_BEARINGS
                spot = PositionNed(down_n + k * limit * math.cos(a), down_e + k * limit * math.sin(a), -here.alt_m)
                try:
                    if envelope.check_position(spot).clamped:
                        continue
                except SafetyViolation:
                    continue
                c = clearance(spot.north_m, spot.east_m)
                if best is None or c > best[0]:
                    best = (c, spot)
            if best is not None and best[0] >= LANDING_CLEARANCE * limit:
                break
        return (best[1] if best is not None else None), near

    def _announce(self, d: Decision, silent: bool, now: float) -> None:
        if silent != self._silent:
            self._silent = silent
            kind = "fleet_channel_silent" if silent else "fleet_channel_restored"
            detail = {"silent_s": round(self.picture.silent_s(now), 3), "layer_alt_m": self.cfg.layer_alt_m}
            log.warning("%s", kind, extra={"fields": {"event": kind, **detail}})
            self._on_event(kind, detail)
        if d.action != self._last_action:
            self._last_action = d.action
            kind = "separation_" + d.action
            detail = {"reason": d.reason, "with": list(d.conflicts), "layer_alt_m": self.cfg.layer_alt_m}
            log.warning("%s: %s", kind, d.reason, extra={"fields": {"event": kind, **detail}})
            self._on_event(kind, detail)


def _where_it_may_come_down(o: Other) -> tuple[tuple[float, float], ...]:
    """A member's position and the point where PX4 would put it down were it to land now."""
    k = o.at
    dn, de = stop_offset(k.vn_m_s, k.ve_m_s) if math.isfinite(k.vn_m_s + k.ve_m_s) else (0.0, 0.0)
    return (k.north_m, k.east_m), (k.north_m + dn, k.east_m + de)
