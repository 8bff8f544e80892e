"""Typed settings of model loading and inference workers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from contract.typed_config import ranged


@dataclass(frozen=True)
class InferenceConfig:
    # Where model files live; the manifest names files relative to it.
    model_dir: str = "~/.cache/aerie/models"
    # The model manifest; empty means the repository's models/manifest.yaml.
    manifest: str = ""
    # Every model call has a deadline; a call past it surfaces as an error.
    call_deadline_s: float = 5.0
    # Structured (JSON) model calls are retried this many times after an invalid
    # answer before the caller's documented fallback is used.
    json_retries: int = 1
    # How language-model calls are isolated: "thread" (cheap; a hung call is
    # abandoned and the worker reports itself wedged) or "process" (llama.cpp in a
    # child process, killed when a call overruns or crashes). Perception models
    # always run on a worker thread (ONNX Runtime releases the GIL).
    worker_kind: Literal["thread", "process"] = "thread"

    # ONNX Runtime execution providers, tried in this order; ones this build of
    # onnxruntime lacks are skipped. The live one is reported by each session.
    providers: tuple[str, ...] = ("TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider")
    # CPU threads per ONNX Runtime session (0 = onnxruntime's choice).
    intra_op_threads: int = 0
    # TensorRT EP: build FP16 engines.
    trt_fp16: bool = True
    # TensorRT EP: build INT8 engines (needs a calibration table next to the model).
    trt_int8: bool = False
    # TensorRT EP engine cache; engines are keyed by the model file's sha256.
    # Empty means <model_dir>/trt-cache.
    trt_cache_dir: str = ""
    # TensorRT builder workspace limit, bytes.
    trt_workspace_bytes: int = 1073741824

    # Detector backend: "ssdlite" (person detector), "grounding_dino" (open
    # vocabulary, needs user weights) or "oracle" (the simulator's ground truth).
    detector: Literal["ssdlite", "grounding_dino", "oracle"] = "ssdlite"
    # Manifest names of the detector models.
    ssdlite_model: str = "ssdlite-person"
    grounding_dino_model: str = "grounding-dino-swint"
    # Detections scoring below this are dropped.
    box_threshold: float = 0.35
    # Grounding DINO: a prompt token counts towards a label above this probability.
    text_threshold: float = 0.25
    # Segmenter: "sam" (encoder/decoder ONNX, needs user weights) or "none".
    segmenter: Literal["sam", "none"] = "none"
    sam_encoder_model: str = "mobilesam-encoder"
    sam_decoder_model: str = "mobilesam-decoder"

    # Language model (manifest name) used for planning and text reasoning.
    llm_model: str = "smollm2-135m-instruct"
    # Vision-language model (manifest name) and its CLIP/mmproj projector file in
    # model_dir (empty: the manifest's mmproj companion). An empty vlm_model means
    # captions are composed from detections instead.
    vlm_model: str = ""
    vlm_mmproj: str = ""
    # llama-cpp-python chat handler class for the VLM ("MTMDChatHandler",
    # "Llava15ChatHandler", "MoondreamChatHandler", ...).
    vlm_chat_handler: str = "Llava15ChatHandler"
    # llama.cpp context window, tokens.
    n_ctx: int = 2048
    # llama.cpp CPU threads for decoding (0 = half the cores).
    n_threads: int = 0
    # llama.cpp CPU threads for prompt evaluation (0 = same as n_threads; more
    # threads than free cores makes prompts several times slower).
    n_threads_batch: int = 0
    # Layers offloaded to a GPU (0 = CPU only, -1 = all).
    n_gpu_layers: int = ranged(0, -1, 10_000)
    # Use llama.cpp's extra CPU weight buffers (AMX / repacked). Off: the
    # llama-cpp-python 0.3.36 build segfaults in batched decode with them on
    # AMX-capable x86 CPUs; turn on where a build is known good (a Jetson has none).
    llama_extra_buffers: bool = False
    # Greedy structured calls check the grammar on the greedy token first and mask
    # the whole vocabulary only when it is rejected: the same tokens, with the
    # grammar's cost per token down from ~15 ms to under 1 ms on a small CPU.
    # Off: llama-cpp-python's own sampler chain.
    llama_grammar_first: bool = True
    # Longest answer of one model call, tokens.
    max_tokens: int = 256
    # Sampling temperature of structured calls (0 = greedy, reproducible).
    temperature: float = 0.0
