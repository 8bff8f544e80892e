"""The vision-language model on the flight path: asked between steps, answered on its own thread.

A VLM call takes seconds on the vehicle's CPU (a frame is hundreds of image
tokens), so nothing in a step waits for one: :class:`VlmAsker` takes a
question when no call is in flight (``ask`` returns False otherwise, and the
question is simply not asked), runs it on a
:class:`~onboard.inference.inference_worker.ThreadWorker` of its own, and hands
finished answers out at the next step boundary (``answers``), each saying the
step whose frame it saw, how long it took and what it said. Two questions:

* **caption**: one sentence about the frame, for the agent's
  ``current_observation.scene_description``;
* **confirm**: once the goal is placed (its name read, or the oracle's), does
  the frame show it? A :class:`~onboard.inference.contracts.GoalSeen` under the
  contract's grammar; an invalid answer is retried, then the contract's
  fallback (not seen, low), counted in ``fallbacks``;
* **navigate / search** (the ``vlm`` planner backend, ``onboard.agent.vlm_planner``):
  the camera frame and the agent's two maps with the seeds' expert prompt,
  answered under :class:`~onboard.inference.contracts.NavigationDecisionOutput`
  or :class:`~onboard.inference.contracts.SearchOutput`; an invalid answer is
  retried, then flagged as the fallback (the agent keeps its geometric move), counted.

Off unless ``inference.vlm_model`` names a model (:meth:`VlmAsker.from_config`
returns None): without one nothing is asked and nothing changes.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from onboard.inference.contracts import GoalSeen, NavigationDecisionOutput, SearchOutput
from onboard.inference.inference_worker import InferenceWorkerError, ThreadWorker
from onboard.inference.json_contract import call_contract, to_dict

log = logging.getLogger(__name__)

# chat(messages, schema or None, max_tokens or None) -> text: LlamaVisionModel.chat's shape.
Chat = Callable[[list[dict[str, Any]], "dict[str, Any] | None", "int | None"], str]

CONFIRM_PROMPT = ("You are the camera of a drone looking for {goal}{kind}. Does this frame show it: its name on a "
                  "sign, the kind of place, or its entrance? JSON only: shows_goal (true or false), confidence "
                  "(low, medium or high), seen (what is there, a few words).")
# The expert decisions a VLM answers, by the strategy asked about.
DECISIONS: dict[str, type] = {"navigate": NavigationDecisionOutput, "search": SearchOutput}


@dataclass(frozen=True)
class VlmAnswer:
    kind: str  # "caption", "confirm", or the strategy of an expert decision ("navigate", "search")
    step: int  # the step whose frame it saw
    seconds: float  # the call's own wall time, retries included (a failed call: until it was given up)
    text: str  # the caption, or the confirm answer as JSON
    goal_seen: GoalSeen | None = None  # confirm: the answer (the fallback when invalid)
    used_fallback: bool = False
    errors: tuple[str, ...] = ()
    decision: Any = None  # navigate / search: NavigationDecisionOutput or SearchOutput (the fallback when invalid)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "step": self.step, "seconds": round(self.seconds, 3),
                               "text": self.text[:200], "used_fallback": self.used_fallback}
        if self.errors:
            out["errors"] = [e[:160] for e in self.errors]
        return out


@dataclass
class VlmCounts:
    asked: int = 0
    answered: int = 0
    fallbacks: int = 0  # confirm and decision answers the contract refused twice
    failed: int = 0  # calls that raised (deadline, crash): no answer
    not_asked_busy: int = 0  # questions dropped because a call was still in flight
    seconds: list[float] = field(default_factory=list)


class VlmAsker:
    def __init__(self, chat: Chat, *, deadline_s: float, retries: int = 1, caption_tokens: int = 60,
                 worker: ThreadWorker | None = None, image_max_side: int = 0) -> None:
        self._chat = chat
        self.image_max_side = image_max_side  # frames are scaled down to this longest side (0: as captured)
        self.retries = retries
        self.caption_tokens = caption_tokens
        self.worker = worker or ThreadWorker("vlm", deadline_s)
        self.counts = VlmCounts()
        self._pending: tuple[str, int, float, Future] | None = None

    @staticmethod
    def from_config(cfg) -> "VlmAsker | None":
        """The configured VLM (checksum-verified, projector loaded) behind an asker; None without ``vlm_model``."""
        from onboard.inference.llama_backend import open_vlm

        vlm = open_vlm(cfg)
        if vlm is None:
            return None
        return VlmAsker(lambda m, schema, most: vlm.chat(m, json_schema=schema, max_tokens=most),
                        deadline_s=cfg.call_deadline_s, retries=cfg.json_retries, image_max_side=cfg.vlm_image_max_side)

    @property
    def busy(self) -> bool:
        return self._pending is not None

    def ask_caption(self, step: int, frame: np.ndarray, prompt: str) -> bool:
        """Ask for one sentence about `frame` (RGB); False (not asked) while a call is in flight."""
        from onboard.inference.llama_backend import vision_messages

        # The frame is encoded on the worker too: a 1920 x 1080 PNG is ~0.1 s, not to be spent on the event loop.
        return self._ask("caption", step, lambda: self._chat(
            vision_messages(prompt, [frame], max_side=self.image_max_side), None, self.caption_tokens))

    def ask_confirm(self, step: int, frame: np.ndarray, goal: str, kind: str = "") -> bool:
        """Ask whether `frame` (RGB) shows the goal; False (not asked) while a call is in flight."""
        from onboard.inference.llama_backend import vision_messages

        prompt = CONFIRM_PROMPT.format(goal=goal, kind=f", {kind}" if kind else "")
        generate = lambda m, schema: self._chat(m, schema, None)  # noqa: E731
        return self._ask("confirm", step, lambda: call_contract(
            generate, vision_messages(prompt, [frame], max_side=self.image_max_side), GoalSeen,
            fallback=GoalSeen.fallback, retries=self.retries))

    def ask_decision(self, step: int, strategy: str, images: list[np.ndarray], prompt: str, system: str = "") -> bool:
        """Ask the navigate or search expert's decision on `images` (RGB: frame, landmark map, semantic map);
        False (not asked) while a call is in flight."""
        from onboard.inference.llama_backend import vision_messages

        if strategy not in DECISIONS:
            raise ValueError(f"no VLM decision contract for strategy {strategy!r}; one of {sorted(DECISIONS)}")
        contract = DECISIONS[strategy]
        generate = lambda m, schema: self._chat(m, schema, None)  # noqa: E731
        return self._ask(strategy, step, lambda: call_contract(
            generate, vision_messages(prompt, images, system=system or None, max_side=self.image_max_side), contract,
            fallback=contract.fallback,
            retries=self.retries))

    def _ask(self, kind: str, step: int, call: Callable[[], Any]) -> bool:
        if self._pending is not None:
            self.counts.not_asked_busy += 1
            return False

        def timed() -> tuple[Any, float]:  # the call's own time, not its wait for the next step boundary
            t0 = time.perf_counter()
            return call(), time.perf_counter() - t0

        try:
            fut = self.worker.submit(timed)
        except InferenceWorkerError:  # wedged by an abandoned call, or closed: nothing more is asked
            self.counts.failed += 1
            return False
        self.counts.asked += 1
        self._pending = (kind, step, time.monotonic(), fut)
        return True

    def answers(self) -> list[VlmAnswer]:
        """The answer that has come in since the last look (at most one); never waits."""
        if self._pending is None:
            return []
        kind, step, t0, fut = self._pending
        seconds = time.monotonic() - t0
        if not fut.done():
            if seconds <= self.worker.deadline_s:
                return []
            fut.cancel()  # past its deadline: abandoned, counted; the worker reports itself wedged if it hangs on
            self._pending = None
            self.counts.failed += 1
            return [VlmAnswer(kind, step, seconds, "", None, True, (f"no answer within {self.worker.deadline_s:.1f} s",))]
        self._pending = None
        try:
            result, seconds = fut.result()
        except Exception as exc:  # a deadline, a crashed model: no answer this time, counted
            self.counts.failed += 1
            return [VlmAnswer(kind, step, seconds, "", None, True, (f"{type(exc).__name__}: {exc}",))]
        self.counts.answered += 1
        self.counts.seconds.append(seconds)
        if kind == "caption":
            text = " ".join(str(result).split())
            return [VlmAnswer(kind, step, seconds, text)]
        import json

        self.counts.fallbacks += result.used_fallback
        text = json.dumps(to_dict(result.value), ensure_ascii=False)
        if kind == "confirm":
            return [VlmAnswer(kind, step, seconds, text, result.value, result.used_fallback, tuple(result.errors))]
        return [VlmAnswer(kind, step, seconds, text, None, result.used_fallback, tuple(result.errors),
                          decision=result.value)]

    def settle(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` for the call in flight to end (the mission is over; nothing steps now)."""
        if self._pending is None:
            return True
        try:
            self._pending[3].exception(timeout=timeout_s)
        except Exception:  # still running (TimeoutError), or cancelled
            return self._pending[3].done()
        return True

    def summary(self) -> dict[str, Any]:
        c = self.counts
        return {"asked": c.asked, "answered": c.answered, "fallbacks": c.fallbacks, "failed": c.failed,
                "not_asked_busy": c.not_asked_busy,
                "seconds_p50": round(float(np.median(c.seconds)), 3) if c.seconds else None}

    def close(self, wait_s: float | None = None) -> bool:
        """Stop asking; wait for a call in flight (up to its deadline, or ``wait_s``) before the model may be freed."""
        done = self.worker.close(self.worker.deadline_s if wait_s is None else wait_s)
        if not done:
            log.warning("VLM call still running at close: the model is left to the process's exit")
        return done

