"""Greedy schema-constrained decoding that consults the grammar only when it must.

llama-cpp-python 0.3.x samples a grammar-constrained greedy call with one
sampler chain, penalties → grammar → greedy, so the GBNF grammar is matched
against every token of the vocabulary (49k for SmolLM2) at every step; on a
CPU that doubles the time of a JSON answer. llama.cpp's own common sampler
does it the other way round, and so does :class:`GreedyGrammarSampler`:

1. take the unconstrained greedy token (the first largest logit);
2. ask the grammar about that one token; if it accepts it, that is the token;
3. otherwise let the grammar mask the whole vocabulary and take the first
   largest logit that is left (exactly what the chain would have chosen).

The answer is the same token for token: the unconstrained argmax, when the
grammar allows it, is also the argmax of the masked logits, ties included
(both pick the lowest index among equal logits, as llama.cpp's greedy does).

:func:`greedy_grammar_first` installs the sampler for one
``create_completion`` / ``create_chat_completion`` call by answering
``Llama._init_sampler``, so prompt formatting, caching, stopping and
detokenising stay llama-cpp-python's own. Anything it does not cover
(temperature above 0, penalties, logits processors, no grammar) gets the
stock sampler; a llama-cpp-python without the pieces it needs is left alone.
"""

from __future__ import annotations

import contextlib
import ctypes
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

_NEEDED = ("llama_sampler_init_grammar", "llama_sampler_apply", "llama_sampler_accept", "llama_sampler_free",
           "llama_get_logits_ith", "llama_token_data", "llama_token_data_array")


@dataclass
class GrammarDecodeStats:
    """What the last call did: tokens sampled, and how many needed the whole-vocabulary grammar pass."""

    tokens: int = 0
    full_passes: int = 0
    used: bool = False


def _low_level():
    try:
        from llama_cpp import llama_cpp as low
    except ImportError:
        return None
    return low if all(hasattr(low, n) for n in _NEEDED) else None


def supported(llm: Any) -> bool:
    """Whether this ``Llama`` (and its llama-cpp-python) has what the sampler needs."""
    return _low_level() is not None and callable(getattr(type(llm), "_init_sampler", None)) \
        and hasattr(llm, "_model") and hasattr(llm, "n_vocab")


class GreedyGrammarSampler:
    """Stands in for ``_internals.LlamaSampler`` in ``Llama.generate`` (it calls ``sample(ctx, idx)``)."""

    def __init__(self, low, vocab, grammar_text: str, root: str, n_vocab: int, stats: GrammarDecodeStats) -> None:
        self._low = low
        self._free = low.llama_sampler_free
        self.grammar = low.llama_sampler_init_grammar(vocab, grammar_text.encode("utf-8"), root.encode("utf-8"))
        if not self.grammar:
            raise ValueError("llama.cpp could not parse the grammar")
        self.n_vocab = n_vocab
        self.stats = stats
        # One candidate: the unconstrained choice, checked alone.
        self._one = (low.llama_token_data * 1)()
        self._one_p = low.llama_token_data_array(self._one, 1, -1, False)
        # The whole vocabulary, for the tokens the grammar rejects (layout of llama_token_data).
        self._all = np.zeros(n_vocab, dtype=np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)]))
        assert self._all.dtype.itemsize == ctypes.sizeof(low.llama_token_data)
        self._all["id"] = np.arange(n_vocab, dtype=np.int32)
        self._all_p = low.llama_token_data_array(
            ctypes.cast(self._all.ctypes.data, ctypes.POINTER(low.llama_token_data)), n_vocab, -1, False)

    def _logits(self, ctx, idx: int) -> np.ndarray:
        ptr = self._low.llama_get_logits_ith(ctx.ctx, idx)
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))

    def _allowed(self, token: int, logit: float) -> bool:
        one = self._one[0]
        one.id, one.logit, one.p = token, logit, 0.0
        self._one_p.size, self._one_p.selected, self._one_p.sorted = 1, -1, False
        self._low.llama_sampler_apply(self.grammar, ctypes.byref(self._one_p))
        return self._one[0].logit != float("-inf")

    def sample(self, ctx, idx: int = -1) -> int:
        logits = self._logits(ctx, idx)
        token = int(np.argmax(logits))
        logit = float(logits[token])
        if logit != logit or not self._allowed(token, logit):  # NaN: leave the choice to the full pass
            self.stats.full_passes += 1
            self._all["logit"] = logits
            self._all["p"] = 0.0
            self._all_p.size, self._all_p.selected, self._all_p.sorted = self.n_vocab, -1, False
            self._low.llama_sampler_apply(self.grammar, ctypes.byref(self._all_p))
            masked = self._all["logit"][: self._all_p.size]
            token = int(self._all["id"][_first_max(masked)])
        self._low.llama_sampler_accept(self.grammar, token)
        self.stats.tokens += 1
        return token

    def accept(self, token: int) -> None:
        self._low.llama_sampler_accept(self.grammar, token)

    def reset(self) -> None:
        self._low.llama_sampler_reset(self.grammar)

    def close(self) -> None:
        if self.grammar:
            self._free(self.grammar)
            self.grammar = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


def _first_max(values: np.ndarray) -> int:
    """llama.cpp's greedy choice: index 0, replaced only by a strictly larger logit (so NaN never wins)."""
    if np.isnan(values[0]):
        return 0
    return int(np.flatnonzero(values == np.nanmax(values))[0])


@contextlib.contextmanager
def greedy_grammar_first(llm: Any, stats: GrammarDecodeStats | None = None) -> Iterator[GrammarDecodeStats]:
    """Within the block, greedy grammar-constrained calls on ``llm`` try the greedy token first."""
    stats = stats if stats is not None else GrammarDecodeStats()
    low = _low_level()
    if low is None or not supported(llm):
        yield stats
        return
    original = llm._init_sampler  # the bound method

    def init_sampler(*args: Any, **kw: Any):
        grammar = kw.get("grammar")
        plain = (not args and grammar is not None and kw.get("temp") == 0.0 and kw.get("logits_processor") is None
                 and kw.get("repeat_penalty", 1.0) == 1.0 and kw.get("frequency_penalty", 0.0) == 0.0
                 and kw.get("presence_penalty", 0.0) == 0.0)
        if plain:
            try:
                sampler = GreedyGrammarSampler(low, llm._model.vocab, grammar._grammar, grammar._root, llm.n_vocab(), stats)
            except (AttributeError, ValueError, TypeError):
                return original(*args, **kw)
            stats.used = True
            return sampler
        return original(*args, **kw)

    llm._init_sampler = init_sampler
    try:
        yield stats
    finally:
        with contextlib.suppress(AttributeError):
            del llm._init_sampler
