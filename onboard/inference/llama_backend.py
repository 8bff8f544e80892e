"""llama.cpp language and vision-language models (llama-cpp-python).

``LlamaTextModel`` runs a GGUF chat model (SmolLM2-135M-Instruct by default:
small enough for a CPU, and the one GGUF a registry ships).
``LlamaVisionModel`` adds images through llama-cpp-python's multimodal chat
handlers and a CLIP/mmproj file the user supplies; the handler class is named
in config because it must match the model family (Llava15, Moondream,
MiniCPMv26, Qwen25VL, MTMD...).

Every structured call constrains decoding with the contract's JSON schema
(compiled to a GBNF grammar by llama-cpp-python's converter, strings held to
what JSON allows: :func:`schema_grammar`), so even a tiny model produces
parseable JSON; :func:`~onboard.inference.json_contract.call_contract`
validates, retries once and falls back. Greedy (temperature 0) structured
calls ask the grammar about the greedy token first and mask the whole
vocabulary only when it is rejected (:mod:`onboard.inference.grammar_decoding`):
the same tokens, with choosing them ~15 ms a token cheaper on a CPU.

A ``Llama`` object is not thread-safe: give each model its own
:class:`~onboard.inference.inference_worker.ThreadWorker`.
"""

from __future__ import annotations

import base64
import os
import contextlib
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Protocol, Sequence

import numpy as np

from onboard.inference.grammar_decoding import GrammarDecodeStats, greedy_grammar_first


class LlamaBackendError(RuntimeError):
    """llama.cpp is missing, or a model or its projector could not be loaded; names the file."""


class LanguageModel(Protocol):
    def chat(self, messages: list[dict[str, Any]], *, json_schema: dict[str, Any] | None = None, max_tokens: int | None = None) -> str:
        ...


@dataclass(frozen=True)
class StreamTiming:
    time_to_first_token_s: float
    tokens: int
    total_s: float

    @property
    def tokens_per_s(self) -> float:
        gen = self.total_s - self.time_to_first_token_s
        return (self.tokens - 1) / gen if self.tokens > 1 and gen > 0 else 0.0


_PARAMS_LOCK = threading.Lock()


@contextlib.contextmanager
def _model_params(llama_cpp, *, extra_buffers: bool):
    """Apply model-load parameters ``Llama()`` does not expose, for the duration of one load.

    ``use_extra_bufts`` (llama.cpp's AMX / repacked CPU weight buffers) is not a
    ``Llama()`` argument; with it on, the llama-cpp-python 0.3.36 built here
    segfaults in batched decode (any prompt longer than one token) on this
    AMX-capable CPU. ``Llama()`` reads ``llama_model_default_params()`` once while
    loading, so that one call is redirected under a lock and restored at once.
    """
    low = llama_cpp.llama.llama_cpp
    if extra_buffers or "use_extra_bufts" not in dict(low.llama_model_params._fields_):
        yield
        return
    with _PARAMS_LOCK:
        original = low.llama_model_default_params

        def defaults():
            params = original()
            params.use_extra_bufts = False
            return params

        low.llama_model_default_params = defaults
        try:
            yield
        finally:
            low.llama_model_default_params = original


def _import_llama():
    try:
        import llama_cpp
    except ImportError as exc:
        raise LlamaBackendError("llama-cpp-python is not installed (pip install llama-cpp-python; it builds from source)") from exc
    return llama_cpp


class LlamaTextModel:
    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int = 2048,
        n_threads: int = 0,
        n_threads_batch: int = 0,
        n_gpu_layers: int = 0,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int = 0,
        chat_handler: Any = None,
        extra_buffers: bool = False,
        grammar_first: bool = True,
        chat_format: str | None = None,
    ) -> None:
        llama_cpp = _import_llama()
        self.grammar_first = grammar_first
        # What the last structured call's decoding did (tokens, whole-vocabulary grammar passes).
        self.last_decode = GrammarDecodeStats()
        # Tokens of the last call's prompt, images' embeddings included (what a frame costs in context).
        self.last_prompt_tokens = 0
        self.model_path = Path(model_path)
        if not self.model_path.exists():
            raise LlamaBackendError(f"model file {self.model_path} does not exist")
        self.max_tokens = max_tokens
        self.temperature = temperature
        kwargs: dict[str, Any] = dict(n_ctx=n_ctx, n_gpu_layers=n_gpu_layers, seed=seed, verbose=False)
        # llama-cpp-python defaults to half the cores for decode but all of them for
        # prompt evaluation; on a small, busy CPU (the vehicle's, shared with the
        # detector) the extra OpenMP thread waits for a core and the prompt takes
        # 2-4 s instead of 0.5 s. Prompt threads therefore follow decode threads.
        decode_threads = n_threads or max(1, (os.cpu_count() or 2) // 2)
        kwargs["n_threads"] = decode_threads
        kwargs["n_threads_batch"] = n_threads_batch or decode_threads
        if chat_handler is not None:
            kwargs["chat_handler"] = chat_handler
        if chat_format:  # a GGUF without a chat template (a base model) would get llama.cpp's llama-2 format
            kwargs["chat_format"] = chat_format
        try:
            with _model_params(llama_cpp, extra_buffers=extra_buffers):
                self.llm = llama_cpp.Llama(model_path=str(self.model_path), **kwargs)
        except (ValueError, RuntimeError) as exc:
            raise LlamaBackendError(f"model file {self.model_path} could not be loaded by llama.cpp: {exc}") from exc

    def chat(self, messages: list[dict[str, Any]], *, json_schema: dict[str, Any] | None = None, max_tokens: int | None = None) -> str:
        kwargs: dict[str, Any] = dict(messages=messages, max_tokens=max_tokens or self.max_tokens, temperature=self.temperature)
        if json_schema is not None:
            from onboard.inference.json_contract import json_budget

            kwargs["grammar"] = schema_grammar(json_schema)
            # The grammar ends the answer; the ceiling must not cut a valid one short.
            kwargs["max_tokens"] = max(kwargs["max_tokens"], min(json_budget(json_schema), self.llm.n_ctx() // 2))
        if json_schema is not None and self.grammar_first and self.temperature == 0:
            self.last_decode = GrammarDecodeStats()
            with greedy_grammar_first(self.llm, self.last_decode):
                out = self.llm.create_chat_completion(**kwargs)
        else:
            out = self.llm.create_chat_completion(**kwargs)
        self.last_prompt_tokens = int((out.get("usage") or {}).get("prompt_tokens", 0))
        return out["choices"][0]["message"]["content"] or ""

    def generate_json(self, messages: list[dict[str, Any]], schema: dict[str, Any]) -> str:
        """The ``generate`` callable :func:`call_contract` wants."""
        return self.chat(messages, json_schema=schema)

    def timed_stream(self, messages: list[dict[str, Any]], max_tokens: int = 64) -> StreamTiming:
        """Time to first token and decode rate, for ``aerie bench perception``."""
        t0 = time.perf_counter()
        first = None
        n = 0
        for chunk in self.llm.create_chat_completion(messages=messages, max_tokens=max_tokens, temperature=self.temperature, stream=True):
            if chunk["choices"][0]["delta"].get("content"):
                n += 1
                if first is None:
                    first = time.perf_counter() - t0
        total = time.perf_counter() - t0
        return StreamTiming(first if first is not None else total, n, total)


# llama-cpp-python's schema converter lets any character but quote and backslash into a string, so a
# model could write a raw newline or control byte there, which JSON (and so the contract) refuses; this
# is llama.cpp's own rule (common/json-schema-to-grammar.cpp), which stops control characters.
_LOOSE_CHAR = r'''char ::= [^"\\] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])'''
_JSON_CHAR = r'''char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])'''
_GRAMMARS: dict[str, Any] = {}
# The converter ignores a number's minimum and maximum (its own TODO), so noise wrote confidences of 624 that
# the contract then refused: every navigate and search answer of the test VLM fell back. A number bounded to
# [0, 1] is decoded through this rule instead: 0, 1, or 0.d to three decimals.
UNIT_NUMBER_RULE = 'unit-number ::= ("0" ("." [0-9] ([0-9] [0-9]?)?)? | "1" ("." "0" ("0" "0"?)?)?) space'


def _unit_bounded(schema: dict[str, Any]) -> set[str]:
    """Names of the properties (at any depth) that are numbers bounded to [0, 1], and of no other kind anywhere."""
    unit: set[str] = set()
    other: set[str] = set()

    def walk(s: dict[str, Any]) -> None:
        for name, sub in (s.get("properties") or {}).items():
            bounded = sub.get("type") == "number" and sub.get("minimum") == 0 and sub.get("maximum") == 1
            (unit if bounded else other).add(name)
            walk(sub)
        if isinstance(s.get("items"), dict):
            walk(s["items"])

    walk(schema)
    return unit - other


def schema_grammar(schema: dict[str, Any]):
    """The GBNF grammar of a JSON schema, strings limited to characters JSON allows unescaped and numbers
    bounded to [0, 1] held there (cached)."""
    import json
    import re

    from llama_cpp import llama_grammar

    key = json.dumps(schema, sort_keys=True)
    if key not in _GRAMMARS:
        text = llama_grammar.json_schema_to_gbnf(json.dumps(schema)).replace(_LOOSE_CHAR, _JSON_CHAR)
        unit = _unit_bounded(schema)
        for name in unit:
            text = re.sub(r'^(\S+-kv ::= "\\"' + re.escape(name) + r'\\"" space ":" space )number$',
                          r"\1unit-number", text, flags=re.M)
        if unit:
            text += "\n" + UNIT_NUMBER_RULE + "\n"
        _GRAMMARS[key] = llama_grammar.LlamaGrammar.from_string(text, verbose=False)
    return _GRAMMARS[key]


def fit_longest_side(image: np.ndarray, side: int) -> np.ndarray:
    """`image` scaled down (never up) so its longest side is at most `side` pixels; 0 leaves it as it is.

    A VLM's image tokens grow with the pixels it is given where its encoder keeps the resolution
    (Qwen2.5-VL: one token per 28 x 28 pixels), and the PNG a frame travels in costs time to
    encode on the vehicle's CPU; docs/VLM_ON_JETSON.md says why 768 is the default.
    """
    h, w = image.shape[:2]
    if side <= 0 or max(h, w) <= side:
        return image
    import cv2

    scale = side / max(h, w)
    return cv2.resize(image, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)


def image_data_uri(image: np.ndarray) -> str:
    """An RGB uint8 image as a PNG data URI, the form llama-cpp-python's handlers accept."""
    import cv2

    ok, png = cv2.imencode(".png", cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
    if not ok:
        raise LlamaBackendError("could not encode the image as PNG")
    return "data:image/png;base64," + base64.b64encode(png.tobytes()).decode("ascii")


class LlamaVisionModel(LlamaTextModel):
    """A multimodal GGUF plus its CLIP/mmproj projector, via a llama-cpp-python chat handler."""

    def __init__(self, model_path: str | Path, mmproj_path: str | Path, *, handler: str = "Llava15ChatHandler", n_ctx: int = 4096,
                 image_max_side: int = 0, **kwargs: Any) -> None:
        self.image_max_side = image_max_side  # images are scaled down to this longest side first (0: as given)
        llama_cpp = _import_llama()
        from llama_cpp import llama_chat_format

        mmproj = Path(mmproj_path)
        if not mmproj.exists():
            raise LlamaBackendError(f"projector file {mmproj} does not exist")
        cls = getattr(llama_chat_format, handler, None)
        if cls is None:
            known = sorted(n for n in dir(llama_chat_format) if n.endswith("ChatHandler"))
            raise LlamaBackendError(f"llama-cpp-python {llama_cpp.__version__} has no chat handler {handler!r} (has: {', '.join(known)})")
        _quiet_mtmd()
        try:
            chat_handler = cls(clip_model_path=str(mmproj), verbose=False)
        except (ValueError, RuntimeError) as exc:
            raise LlamaBackendError(f"projector file {mmproj} could not be loaded by {handler}: {exc}") from exc
        super().__init__(model_path, n_ctx=n_ctx, chat_handler=chat_handler, **kwargs)

    def chat_with_images(
        self,
        prompt: str,
        images: Sequence[np.ndarray],
        *,
        system: str | None = None,
        json_schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> str:
        return self.chat(vision_messages(prompt, images, system=system, max_side=self.image_max_side),
                         json_schema=json_schema, max_tokens=max_tokens)


def _quiet_mtmd() -> None:
    """Send mtmd's log (a few lines per image slice) through llama-cpp-python's logger, which drops it unless verbose."""
    try:
        from llama_cpp import _logger, mtmd_cpp
    except ImportError:
        return
    for setter in ("mtmd_log_set", "mtmd_helper_log_set"):
        if hasattr(mtmd_cpp, setter):
            getattr(mtmd_cpp, setter)(_logger.llama_log_callback, None)


def vision_messages(prompt: str, images: Iterable[np.ndarray], *, system: str | None = None, max_side: int = 0
                    ) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = [{"type": "image_url", "image_url": {"url": image_data_uri(fit_longest_side(im, max_side))}}
                                     for im in images]
    content.append({"type": "text", "text": prompt})
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": content})
    return messages


def open_llm(cfg) -> LlamaTextModel:
    """The configured text model (``inference.llm_model``), checksum-verified first."""
    from onboard.inference.manifest import load_manifest, model_dir, require_verified

    manifest = load_manifest(cfg.manifest or None)
    spec = manifest.get(cfg.llm_model)
    path = require_verified(spec, model_dir(cfg.model_dir))
    return LlamaTextModel(path, chat_format=spec.input.get("chat_format"), n_ctx=cfg.n_ctx, n_threads=cfg.n_threads, n_threads_batch=cfg.n_threads_batch, n_gpu_layers=cfg.n_gpu_layers,
                          max_tokens=cfg.max_tokens, temperature=cfg.temperature, extra_buffers=cfg.llama_extra_buffers,
                          grammar_first=cfg.llama_grammar_first)


def open_vlm(cfg) -> LlamaVisionModel | None:
    """The configured vision-language model, or None when ``inference.vlm_model`` is empty."""
    if not cfg.vlm_model:
        return None
    from onboard.inference.manifest import load_manifest, model_dir, require_verified

    manifest = load_manifest(cfg.manifest or None)
    directory = model_dir(cfg.model_dir)
    spec = manifest.get(cfg.vlm_model)
    path = require_verified(spec, directory)
    mmproj = directory / (cfg.vlm_mmproj or spec.companions.get("mmproj", ""))
    return LlamaVisionModel(path, mmproj, handler=cfg.vlm_chat_handler, n_ctx=max(cfg.n_ctx, 4096), image_max_side=cfg.vlm_image_max_side,
                            n_threads=cfg.n_threads, n_threads_batch=cfg.n_threads_batch,
                            n_gpu_layers=cfg.n_gpu_layers, max_tokens=cfg.max_tokens, temperature=cfg.temperature,
                            extra_buffers=cfg.llama_extra_buffers, grammar_first=cfg.llama_grammar_first)
