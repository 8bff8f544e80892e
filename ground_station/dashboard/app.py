"""The dashboard's ASGI app: the page, JSON for flights and replay, and a Server-Sent Events live feed.

Routes:

* ``GET /`` the page (``static/index.html`` with ``words.js``, ``app.js`` and ``style.css``; no CDN).
* ``GET /api/vehicles``: the vehicles in the flight log with their counters, their last message
  and their last ``state`` (its payload), each with ``age_s``: seconds since the ground received it,
  and ``vlm``: the latest flight's VLM answers (``{count, fallbacks, refused, latest}``, null without any).
* ``GET /api/flights``: every flight (vehicle, start/end seq and time, flight_start info).
* ``GET /api/flights/{vehicle_id}/{start_seq}``: all items of one flight, for replay, and its
  deterministic post-flight analysis (:mod:`ground_station.post_flight`; null without agent steps).
* ``GET /api/live``: SSE; an ``items`` event per batch of new messages of each vehicle's
  latest flight (the first batch is that flight so far), comments as keep-alive. At most
  ``max_live_clients`` at once (503 beyond); a viewer's reader is freed when it disconnects.
* ``GET /api/map/{vehicle_id}/{seq}.png``: the PNG of a stored ``map`` message (404 for any other seq).
* ``GET /api/world``: the city beneath the tracks (:mod:`.city_layer`): ``{origin: [lat, lon] | null,
  buildings, streets, landmarks, name}`` in metres east/north of the onboard map's origin, if a map
  is configured. State items then carry ``shift``, their vehicle's home in that frame, so every
  vehicle is drawn on the one map.

Off loopback every route sits behind the token gate (:mod:`.auth`).

Payload shapes the page understands beyond the envelope types (all optional):
``agent_step`` may carry ``goal``, ``task_instruction``, ``strategy``, ``reflect_reason``,
``refined_action``, ``target_estimate`` and ``goal_fix`` (``[x, y]``, the agent's frame),
``landmarks`` (``{name: [x, y]}``), ``search_region`` (``{outline: [[x, y], ...], unseen_m2}``) and ``anchor_graph: {anchors: [{anchor_id, x, y, place_id,
neighbours}], places: [{place_id, place_type, anchors}]}``; ``detections`` is ``{detections:
[{label, score, bearing_deg, range_m, north, east}]}`` or a bare list; ``plan`` carries ``goal``,
``source``, ``reason`` and ``steps: [{goal, strategy, desired_state}]`` (said as sentences).
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from ground_station.dashboard.auth import TokenGate

from ground_station.dashboard.city_layer import WorldData, empty_world
from ground_station.dashboard.items import ItemMaker, json_safe
from ground_station.dashboard.log_reader import (SEQ_LIMIT, LogReader, Tail, flight_dict, latest_flight_start,
                                                 latest_of, map_png, open_reader, vehicle_ids,
                                                 vlm_answers)
from ground_station.flight_analysis import FlightAnalysis, analyse

STATIC_DIR = Path(__file__).with_name("static")
# Items per SSE event: a long flight's first batch is split so the page can draw as it arrives.
_ITEMS_PER_EVENT = 2000
_KEEPALIVE_S = 10.0

log = logging.getLogger("aerie.ground.dashboard")


@dataclass
class DashboardContext:
    """What the routes need; one per app, so two dashboards in one process share nothing."""

    db_path: Path | str   # the flight log file or its postgresql:// URL
    poll_interval_s: float = 0.25
    # Returns the world (origin and footprints); called once, in a worker thread, on the first /api/world.
    load_world: Callable[[], WorldData] | None = None
    stopping: threading.Event = field(default_factory=threading.Event)
    # SHA-256 of the access token; None serves without one (loopback only, see DashboardServer).
    token_digest: bytes | None = None
    # Most live viewers at once, and how many are being served now (read by tests and the log).
    max_live_clients: int = 32
    live_clients: int = 0
    _world: WorldData | None = None
    _world_lock: threading.Lock = field(default_factory=threading.Lock)
    _world_body: tuple[bytes, bytes, str] | None = None

    def world(self) -> WorldData:
        """The city, loaded on first use and kept; a map that does not load leaves the page without one."""
        with self._world_lock:
            if self._world is None:
                try:
                    self._world = self.load_world() if self.load_world else empty_world()
                except Exception as exc:   # a bad map file must not take the dashboard down with it
                    log.warning("dashboard map not loaded, drawing no city: %s", exc)
                    self._world = empty_world()
            return self._world

    def world_body(self) -> tuple[bytes, bytes, str]:
        """The world as JSON bytes, gzipped, and their ETag: made once, as the map does not change while serving."""
        world = self.world()
        with self._world_lock:
            if self._world_body is None:
                body = json.dumps(world, allow_nan=False, separators=(",", ":")).encode()
                self._world_body = (body, gzip.compress(body, 6, mtime=0), '"' + hashlib.sha256(body).hexdigest()[:32] + '"')
            return self._world_body

    def frame_origin(self) -> tuple[float, float] | None:
        """The map's origin (lat, lon): the frame every vehicle is drawn in, if there is a map."""
        o = self.world().get("origin")
        return (float(o[0]), float(o[1])) if o else None


def analysis_dict(a: FlightAnalysis | None) -> dict[str, Any] | None:
    """What the replay view shows of a flight's post-flight analysis."""
    if a is None:
        return None
    k = a.key
    return json_safe({"status": a.status, "steps": a.steps, "task_instruction": a.task_instruction,
                      "key_step": {"seq": k.step.seq, "step": k.step.step, "action": k.step.action,
                                   "reason": k.step.reason, "current_state": k.step.current_state,
                                   "distance_before_m": k.distance_before_m, "distance_after_m": k.distance_after_m,
                                   "increase_m": k.increase_m},
                      "reflect_reason": a.decision.reflect_reason, "refined_action": a.decision.refined_action,
                      "reflection_note": a.plan.reflection_note})


def _json(data: Any) -> JSONResponse:
    return JSONResponse(data, headers={"Cache-Control": "no-store"})


def _sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, allow_nan=False, separators=(',', ':'))}\n\n"


class _LiveResponse(StreamingResponse):
    """The SSE stream of one viewer: its slot and its generator (and reader) are released however it ends."""

    def __init__(self, ctx: DashboardContext, request: Request) -> None:
        self._ctx = ctx
        ctx.live_clients += 1
        super().__init__(_live_stream(ctx, request), media_type="text/event-stream",
                         headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            try:
                await self.body_iterator.aclose()   # type: ignore[attr-defined]
            finally:
                self._ctx.live_clients -= 1


def create_app(ctx: DashboardContext) -> Starlette:
    async def index(request: Request) -> Response:
        return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-store"})

    def _read(fn: Callable[[LogReader], Any], default: Any) -> Any:
        reader = open_reader(ctx.db_path)
        if reader is None:
            return default
        try:
            return fn(reader)
        finally:
            reader.close()

    async def vehicles(request: Request) -> Response:
        def read(r: LogReader) -> Any:
            now_ns = time.time_ns()
            return json_safe({vid: {**{k: v for k, v in s.items() if k != "flights"}, **latest_of(r, vid, now_ns),
                                    "vlm": vlm_answers(r, vid)}
                              for vid, s in r.log.summary().items()})
        return _json(await asyncio.to_thread(_read, read, {}))

    async def flights(request: Request) -> Response:
        return _json(await asyncio.to_thread(_read, lambda r: [flight_dict(f) for f in r.log.flights()], []))

    async def flight(request: Request) -> Response:
        vid, start = request.path_params["vehicle_id"], request.path_params["start_seq"]
        if not (0 <= start < SEQ_LIMIT):
            return JSONResponse({"error": "no such flight"}, status_code=404)

        def read(r: LogReader) -> Any:
            flights = r.log.flights(vid)
            idx = next((i for i, f in enumerate(flights) if f.start_seq == start), None)
            if idx is None:
                return None
            f = flights[idx]
            # A flight whose end never arrived stops where the next one starts.
            end = f.end_seq if f.end_seq is not None else (flights[idx + 1].start_seq - 1 if idx + 1 < len(flights)
                                                             else None)
            maker = ItemMaker(ctx.frame_origin())
            messages = list(r.log.messages(vid, from_seq=f.start_seq, to_seq=end))
            return {"flight": flight_dict(f), "items": maker.items(messages),
                    "analysis": analysis_dict(analyse(messages, vehicle_id=vid, start_seq=start))}
        data = await asyncio.to_thread(_read, read, None)
        return _json(data) if data is not None else JSONResponse({"error": "no such flight"}, status_code=404)

    async def map_image(request: Request) -> Response:
        vid, seq = request.path_params["vehicle_id"], request.path_params["seq"]
        if not (0 <= seq < SEQ_LIMIT):   # SQLite integers are 64-bit signed: a larger one is no stored seq
            return Response(status_code=404)
        png = await asyncio.to_thread(_read, lambda r: map_png(r, vid, seq), None)
        return Response(png, media_type="image/png") if png else Response(status_code=404)

    async def world(request: Request) -> Response:
        # The page fetches the city once per load; a reload revalidates (ETag) instead of fetching it again.
        body, gz, etag = await asyncio.to_thread(ctx.world_body)
        headers = {"Cache-Control": "no-cache", "ETag": etag, "Vary": "Accept-Encoding"}
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers=headers)
        if "gzip" in request.headers.get("accept-encoding", ""):
            return Response(gz, media_type="application/json", headers={**headers, "Content-Encoding": "gzip"})
        return Response(body, media_type="application/json", headers=headers)

    async def live(request: Request) -> Response:
        if ctx.live_clients >= ctx.max_live_clients:
            return JSONResponse({"error": f"too many live viewers (at most {ctx.max_live_clients})"},
                                status_code=503, headers={"Retry-After": "5", "Cache-Control": "no-store"})
        return _LiveResponse(ctx, request)

    gate = [Middleware(TokenGate, digest=ctx.token_digest)] if ctx.token_digest is not None else []
    return Starlette(middleware=gate, routes=[
        Route("/", index),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Route("/api/vehicles", vehicles),
        Route("/api/flights", flights),
        Route("/api/flights/{vehicle_id}/{start_seq:int}", flight),
        Route("/api/map/{vehicle_id}/{seq:int}.png", map_image),
        Route("/api/world", world),
        Route("/api/live", live),
        Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"),
    ])


async def _live_stream(ctx: DashboardContext, request: Request) -> AsyncIterator[str]:
    """New messages of every vehicle's latest flight, as they reach the flight log."""
    reader: LogReader | None = None
    tails: dict[str, Tail] = {}
    makers: dict[str, ItemMaker] = {}
    loop = asyncio.get_running_loop()
    last_sent = loop.time()
    yield "retry: 1000\n\n"
    try:
        while not ctx.stopping.is_set():
            if reader is None:
                reader = await asyncio.to_thread(open_reader, ctx.db_path)
            if reader is not None:
                batches = await asyncio.to_thread(reader.locked, _poll, reader, tails, makers, ctx)
                for vid, items in batches:
                    for i in range(0, len(items), _ITEMS_PER_EVENT):
                        yield _sse("items", {"vehicle_id": vid, "items": items[i:i + _ITEMS_PER_EVENT]})
                        last_sent = loop.time()
            if loop.time() - last_sent >= _KEEPALIVE_S:
                yield ": keep-alive\n\n"
                last_sent = loop.time()
            if await request.is_disconnected():
                break
            await asyncio.sleep(ctx.poll_interval_s)
    finally:
        if reader is not None:
            reader.close()   # waits for a read still running in its worker thread


def _poll(reader: LogReader, tails: dict[str, Tail], makers: dict[str, ItemMaker],
          ctx: DashboardContext) -> list[tuple[str, list[dict[str, Any]]]]:
    out = []
    for vid in vehicle_ids(reader):
        if vid not in tails:
            tails[vid] = Tail(vid, latest_flight_start(reader, vid) - 1)
            makers[vid] = ItemMaker(ctx.frame_origin())
        items = makers[vid].items(tails[vid].read(reader))
        if items:
            out.append((vid, items))
    return out
