"""A tiny vision-language model with random weights, in SmolVLM's (Idefics3's) architecture, as GGUF.

No registry ships a multimodal GGUF, and without one no test could load a VLM
through llama.cpp's ``mtmd`` the way a user's weights are loaded. This module
writes one: a two-layer Llama text model (SmolVLM's text side is SmolLM2, a
Llama) and a two-layer SigLIP vision encoder with the Idefics3 pixel-shuffle
projector, as the pair of files llama.cpp's ``convert_hf_to_gguf.py`` writes
for SmolVLM (the text GGUF and the ``--mmproj`` projector GGUF). Its answers
are noise; what it proves is the plumbing: images decoded, tiled and encoded
by mtmd, their embeddings placed in the prompt, decoding constrained by the
contract's grammar.

Why not the converter itself: ``convert_hf_to_gguf.py`` (in the
llama-cpp-python 0.3.36 source) imports torch at the top and reads the weights
as torch tensors; the only torch on PyPI for this platform brings the CUDA
libraries, gigabytes for a file of a few hundred kilobytes. So the files are
written with ``gguf`` (gguf-py, the writer the converter itself uses), every
metadata key and tensor name taken from gguf-py's own tables
(``gguf.Keys``, ``gguf.TENSOR_NAMES``) exactly as the converter's
``SmolVLMModel``/``MmprojModel`` and ``LlamaModel`` classes write them.

The vocabulary is byte-level BPE (the ``gpt2`` tokenizer model, SmolLM2's
``smollm`` pre-tokenizer): the 256 byte tokens, the one merge mtmd looks up
(``"\\n\\n"``) and SmolVLM's special tokens, so any text tokenizes and mtmd
finds every marker it places around an image.

Building is idempotent: files present and matching the checksums recorded at
build time (``checksums.yaml`` in the model directory, as for every prepared
model) are left alone. ``python -m sim.tiny_vlm [--model-dir DIR]``.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from onboard.inference.manifest import (load_manifest, model_dir, read_local_checksums, record_local_checksum, sha256_file,
                                        verify_model)

MANIFEST_NAME = "tiny-vlm"
# SmolVLM's own chat template, which also renders a message whose content is a plain string.
CHAT_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{ message['role'] | capitalize }}"
    "{% if message['content'] is string %}: {{ message['content'] }}"
    "{% else %}{% if message['content'][0]['type'] == 'image' %}:{% else %}: {% endif %}"
    "{% for line in message['content'] %}{% if line['type'] == 'text' %}{{ line['text'] }}"
    "{% elif line['type'] == 'image' %}<image>{% endif %}{% endfor %}{% endif %}"
    "<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}"
)
SPECIAL_BEFORE = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
SPECIAL_AFTER = ("<end_of_utterance>", "<fake_token_around_image>", "<image>", "<global-img>") + tuple(
    f"<row_{r}_col_{c}>" for r in range(1, 7) for c in range(1, 7))


class TinyVlmError(RuntimeError):
    """The model could not be built (gguf-py missing, directory not writable); says which."""


@dataclass(frozen=True)
class TinyVlmShape:
    """Sizes of the stand-in; tiles of ``image_size`` give (image_size/patch/scale)^2 tokens each."""

    n_embd: int = 64
    n_layer: int = 2
    n_head: int = 4
    n_head_kv: int = 2
    n_ff: int = 128
    n_ctx_train: int = 8192
    v_embd: int = 32
    v_layer: int = 2
    v_head: int = 2
    v_ff: int = 48  # not v_embd: llama.cpp takes equal up/down shapes for the swapped legacy layout
    image_size: int = 64  # one tile
    patch_size: int = 8
    scale_factor: int = 2  # Idefics3 pixel shuffle: 4 patches -> 1 token
    longest_edge: int = 128  # images are resized so their longer side is this, then cut into tiles
    seed: int = 38

    @property
    def tokens_per_tile(self) -> int:
        side = self.image_size // self.patch_size // self.scale_factor
        return side * side


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character map (what byte-level BPE vocabularies are written in)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = list(bs)
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def vocabulary() -> tuple[list[str], list[int], list[str]]:
    """Tokens, their gguf token types, and the merges."""
    import gguf

    byte_tokens = list(_bytes_to_unicode().values())
    newline = _bytes_to_unicode()[ord("\n")]
    tokens = list(SPECIAL_BEFORE) + byte_tokens + [newline * 2] + list(SPECIAL_AFTER)
    control = set(SPECIAL_BEFORE) | set(SPECIAL_AFTER)
    types = [int(gguf.TokenType.CONTROL if t in control else gguf.TokenType.NORMAL) for t in tokens]
    return tokens, types, [f"{newline} {newline}"]


def _gguf():
    try:
        import gguf
    except ImportError as exc:
        raise TinyVlmError("gguf (gguf-py) is not installed: pip install 'gguf>=0.17' (in the dev extras)") from exc
    return gguf


def _weights(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return (rng.standard_normal(shape) * 0.02).astype(np.float32)


def write_text_model(path: Path, shape: TinyVlmShape) -> None:
    """The Llama text model with its tokenizer and chat template (SmolVLM's text side)."""
    gguf = _gguf()
    rng = np.random.default_rng(shape.seed)
    tokens, types, merges = vocabulary()
    head_dim = shape.n_embd // shape.n_head
    w = gguf.GGUFWriter(str(path), gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.LLAMA])
    w.add_name("aerie tiny-vlm (random weights)")
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_vocab_size(len(tokens))
    w.add_context_length(shape.n_ctx_train)
    w.add_embedding_length(shape.n_embd)
    w.add_block_count(shape.n_layer)
    w.add_feed_forward_length(shape.n_ff)
    w.add_head_count(shape.n_head)
    w.add_head_count_kv(shape.n_head_kv)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(100000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(tokens.index("<|im_start|>"))
    w.add_eos_token_id(tokens.index("<end_of_utterance>"))
    w.add_pad_token_id(tokens.index("<|endoftext|>"))
    w.add_add_bos_token(False)
    w.add_chat_template(CHAT_TEMPLATE)
    name = lambda t, bid=None: gguf.TENSOR_NAMES[t].format(bid=bid)  # noqa: E731
    T = gguf.MODEL_TENSOR
    w.add_tensor(name(T.TOKEN_EMBD) + ".weight", _weights(rng, len(tokens), shape.n_embd))
    for b in range(shape.n_layer):
        w.add_tensor(name(T.ATTN_NORM, b) + ".weight", np.ones(shape.n_embd, np.float32))
        w.add_tensor(name(T.ATTN_Q, b) + ".weight", _weights(rng, shape.n_embd, shape.n_embd))
        w.add_tensor(name(T.ATTN_K, b) + ".weight", _weights(rng, shape.n_head_kv * head_dim, shape.n_embd))
        w.add_tensor(name(T.ATTN_V, b) + ".weight", _weights(rng, shape.n_head_kv * head_dim, shape.n_embd))
        w.add_tensor(name(T.ATTN_OUT, b) + ".weight", _weights(rng, shape.n_embd, shape.n_embd))
        w.add_tensor(name(T.FFN_NORM, b) + ".weight", np.ones(shape.n_embd, np.float32))
        w.add_tensor(name(T.FFN_GATE, b) + ".weight", _weights(rng, shape.n_ff, shape.n_embd))
        w.add_tensor(name(T.FFN_UP, b) + ".weight", _weights(rng, shape.n_ff, shape.n_embd))
        w.add_tensor(name(T.FFN_DOWN, b) + ".weight", _weights(rng, shape.n_embd, shape.n_ff))
    w.add_tensor(name(T.OUTPUT_NORM) + ".weight", np.ones(shape.n_embd, np.float32))
    w.add_tensor(name(T.OUTPUT) + ".weight", _weights(rng, len(tokens), shape.n_embd))
    _finish(w)


def write_projector(path: Path, shape: TinyVlmShape) -> None:
    """The SigLIP encoder and Idefics3 projector, as ``convert_hf_to_gguf.py --mmproj`` writes SmolVLM's."""
    gguf = _gguf()
    rng = np.random.default_rng(shape.seed + 1)
    w = gguf.GGUFWriter(str(path), gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.MMPROJ])
    w.add_type(gguf.GGUFType.MMPROJ)
    w.add_name("aerie tiny-vlm projector (random weights)")
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_clip_has_vision_encoder(True)
    w.add_vision_projection_dim(shape.n_embd)
    w.add_vision_image_size(shape.image_size)
    w.add_vision_patch_size(shape.patch_size)
    w.add_vision_embedding_length(shape.v_embd)
    w.add_vision_feed_forward_length(shape.v_ff)
    w.add_vision_block_count(shape.v_layer)
    w.add_vision_head_count(shape.v_head)
    w.add_vision_image_mean([0.5, 0.5, 0.5])
    w.add_vision_image_std([0.5, 0.5, 0.5])
    w.add_clip_projector_type(gguf.VisionProjectorType.IDEFICS3)
    w.add_vision_attention_layernorm_eps(1e-6)
    w.add_vision_projector_scale_factor(shape.scale_factor)
    w.add_vision_use_gelu(True)
    w.add_vision_preproc_image_size(shape.longest_edge)
    name = lambda t, bid=None: gguf.TENSOR_NAMES[t].format(bid=bid)  # noqa: E731
    T = gguf.MODEL_TENSOR
    d, p = shape.v_embd, shape.patch_size
    n_patches = (shape.image_size // p) ** 2
    w.add_tensor(name(T.V_ENC_EMBD_PATCH) + ".weight", _weights(rng, d, 3, p, p))
    w.add_tensor(name(T.V_ENC_EMBD_PATCH) + ".bias", np.zeros(d, np.float32))
    w.add_tensor(name(T.V_ENC_EMBD_POS) + ".weight", _weights(rng, n_patches, d))
    for b in range(shape.v_layer):
        for norm in (T.V_ENC_INPUT_NORM, T.V_ENC_POST_ATTN_NORM):
            w.add_tensor(name(norm, b) + ".weight", np.ones(d, np.float32))
            w.add_tensor(name(norm, b) + ".bias", np.zeros(d, np.float32))
        for proj in (T.V_ENC_ATTN_Q, T.V_ENC_ATTN_K, T.V_ENC_ATTN_V, T.V_ENC_ATTN_O):
            w.add_tensor(name(proj, b) + ".weight", _weights(rng, d, d))
            w.add_tensor(name(proj, b) + ".bias", np.zeros(d, np.float32))
        w.add_tensor(name(T.V_ENC_FFN_UP, b) + ".weight", _weights(rng, shape.v_ff, d))
        w.add_tensor(name(T.V_ENC_FFN_UP, b) + ".bias", np.zeros(shape.v_ff, np.float32))
        w.add_tensor(name(T.V_ENC_FFN_DOWN, b) + ".weight", _weights(rng, d, shape.v_ff))
        w.add_tensor(name(T.V_ENC_FFN_DOWN, b) + ".bias", np.zeros(d, np.float32))
    w.add_tensor(name(T.V_POST_NORM) + ".weight", np.ones(d, np.float32))
    w.add_tensor(name(T.V_POST_NORM) + ".bias", np.zeros(d, np.float32))
    w.add_tensor(name(T.V_MMPROJ_FC) + ".weight", _weights(rng, shape.n_embd, d * shape.scale_factor ** 2))
    _finish(w)


def _finish(w) -> None:
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


@dataclass(frozen=True)
class TinyVlmFiles:
    model: Path
    mmproj: Path
    built: bool  # False: found, checksums matching


def build_tiny_vlm(directory: Path, shape: TinyVlmShape = TinyVlmShape(), *, manifest=None) -> TinyVlmFiles:
    """Build (or find) the manifest's ``tiny-vlm`` pair in ``directory``, recording their checksums.

    Test workers build it at once on a fresh machine, so the check and the build hold a lock on the
    directory and each file is written under a name of its own, then renamed into place.
    """
    spec = (manifest or load_manifest()).get(MANIFEST_NAME)
    model, mmproj = directory / spec.file, directory / spec.companions["mmproj"]
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with open(directory / ".tiny_vlm.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            mmproj_sum = read_local_checksums(directory).get(mmproj.name)
            if verify_model(spec, directory).status == "ok" and mmproj.exists() and sha256_file(mmproj) == mmproj_sum:
                return TinyVlmFiles(model, mmproj, False)
            for target, write in ((model, write_text_model), (mmproj, write_projector)):
                tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
                write(tmp, shape)
                tmp.replace(target)
                record_local_checksum(directory, target.name, sha256_file(target))
    except OSError as exc:
        raise TinyVlmError(f"could not write the tiny VLM into {directory}: {exc}") from exc
    return TinyVlmFiles(model, mmproj, True)


def main(argv: list[str] | None = None) -> int:
    from onboard.inference.settings import InferenceConfig

    ap = argparse.ArgumentParser(prog="python -m sim.tiny_vlm", description=__doc__.split("\n")[0])
    ap.add_argument("--model-dir", default=InferenceConfig().model_dir, help="where the prepared models live")
    args = ap.parse_args(argv)
    try:
        files = build_tiny_vlm(model_dir(args.model_dir))
    except TinyVlmError as exc:
        print(f"tiny-vlm: {exc}", file=sys.stderr)
        return 1
    state = "built" if files.built else "present"
    print(f"tiny-vlm {state}: {files.model} ({files.model.stat().st_size} B), {files.mmproj} ({files.mmproj.stat().st_size} B)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
