"""The agent's handle on the language model: contract calls off the loop, with a deadline.

Usage (from the agent's asyncio code)::

    planner = PlannerModel.from_config(load_config().inference)
    result = await planner.ask_or_fallback(messages, PlaceAnchorPlan, PlaceAnchorPlan.fallback)
    result.value.angle, result.used_fallback, result.errors

``ask`` validates against the contract, retries ``inference.json_retries``
times with the validation error, then returns the fallback; a model that hangs
or crashes raises :class:`~onboard.inference.inference_worker.InferenceWorkerError`
(``ask_or_fallback`` turns that into the fallback too, recording why).
``inference.worker_kind: process`` keeps llama.cpp in a child process that is
killed when it overruns its deadline.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from onboard.inference.inference_worker import InferenceWorkerError, ProcessWorker, ThreadWorker
from onboard.inference.json_contract import ContractResult, call_contract

T = TypeVar("T")


def _child_llm(cfg) -> Callable[[Any], str]:
    """Runs in the model process: build the LLM there, answer (messages, schema) requests."""
    from onboard.inference.llama_backend import open_llm

    model = open_llm(cfg)
    return lambda request: model.chat(request[0], json_schema=request[1])


class PlannerModel:
    def __init__(self, generate: Callable[[list[dict[str, Any]], dict[str, Any] | None], str], worker, *, deadline_s: float, retries: int = 1) -> None:
        self._generate = generate
        self.worker = worker
        self.deadline_s = deadline_s
        self.retries = retries

    @staticmethod
    def from_config(cfg) -> "PlannerModel":
        if cfg.worker_kind == "process":
            from onboard.inference.manifest import load_manifest, model_dir, require_verified

            # Fail here, naming the file, rather than inside the child process.
            require_verified(load_manifest(cfg.manifest or None).get(cfg.llm_model), model_dir(cfg.model_dir))
            worker = ProcessWorker("planner", functools.partial(_child_llm, cfg), deadline_s=cfg.call_deadline_s)
            generate = lambda messages, schema: worker.call((messages, schema))  # noqa: E731
        else:
            from onboard.inference.llama_backend import open_llm

            model = open_llm(cfg)
            worker = ThreadWorker("planner", cfg.call_deadline_s)
            generate = lambda messages, schema: worker.call(model.chat, messages, json_schema=schema)  # noqa: E731
        return PlannerModel(generate, worker, deadline_s=cfg.call_deadline_s, retries=cfg.json_retries)

    def generate_json(self, messages: list[dict[str, Any]], schema: dict[str, Any]) -> str:
        """One schema-constrained answer under the worker's deadline (the instruction reader's call)."""
        return self._generate(messages, schema)

    def ask_sync(self, messages: list[dict[str, Any]], contract: type[T], fallback: Callable[[], T]) -> ContractResult[T]:
        """Blocking form, for code already off the event loop."""
        return call_contract(self._generate, messages, contract, fallback=fallback, retries=self.retries)

    async def ask(self, messages: list[dict[str, Any]], contract: type[T], fallback: Callable[[], T]) -> ContractResult[T]:
        import asyncio

        # Each model call inside has its own deadline; this thread only waits on them.
        return await asyncio.to_thread(self.ask_sync, messages, contract, fallback)

    async def ask_or_fallback(self, messages: list[dict[str, Any]], contract: type[T], fallback: Callable[[], T]) -> ContractResult[T]:
        try:
            return await self.ask(messages, contract, fallback)
        except InferenceWorkerError as exc:
            return ContractResult(fallback(), 0, True, [f"{type(exc).__name__}: {exc}"])

    def close(self) -> None:
        self.worker.close()
