"""Typed settings of model loading and inference workers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from common.typed_config import ranged


@dataclass(frozen=True)
class InferenceConfig:
    # Where model files live; the manifest names files relative to it.
    model_dir: str = "~/.cache/aerie/models"
    # The model manifest; empty means the repository's models/manifest.yaml.
    manifest: str = ""
    # Every model call has a deadline; a call past it surfaces as an error.
    call_deadline_s: float = ranged(5.0, 0.01, 3600.0)
    # Structured (JSON) model calls are retried this many times after an invalid
    # answer before the caller's documented fallback is used.
    json_retries: int = ranged(1, 0, 10)
    # How language-model calls are isolated: "thread" (cheap; a hung call is
    # abandoned and the worker reports itself wedged) or "process" (llama.cpp in a
    # child process, killed when a call overruns or crashes). Perception models
    # always run on a worker thread (ONNX Runtime releases the GIL).
    worker_kind: Literal["thread", "process"] = "thread"

    # ONNX Runtime execution providers, tried in this order; ones this build of
    # onnxruntime lacks are skipped. The live one is reported by each session.
    providers: tuple[str, ...] = ("TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider")
    # CPU threads per ONNX Runtime session (0 = onnxruntime's choice).
    intra_op_threads: int = ranged(0, 0, 256)
    # TensorRT EP: build FP16 engines.
    trt_fp16: bool = True
    # TensorRT EP: build INT8 engines (needs a calibration table next to the model). An INT8 copy
    # with TensorRT ranges (grounding-dino-swint-int8, mobilesam-*-int8) runs INT8 whatever this says:
    # its fp32 source, with the ranges `aerie models quantize` measured as the table.
    trt_int8: bool = False
    # TensorRT EP engine cache; engines are keyed by the model file's sha256.
    # Empty means <model_dir>/trt-cache.
    trt_cache_dir: str = ""
    # TensorRT builder workspace limit, bytes.
    trt_workspace_bytes: int = ranged(1073741824, 1 << 20, 1 << 40)

    # Detector backend: "ssdlite" (person detector), "grounding_dino" (open
    # vocabulary, needs user weights) or "oracle" (the simulator's ground truth).
    detector: Literal["ssdlite", "grounding_dino", "oracle"] = "ssdlite"
    # Manifest names of the detector models.
    ssdlite_model: str = "ssdlite-person"
    grounding_dino_model: str = "grounding-dino-swint"
    # Detections scoring below this are dropped.
    box_threshold: float = ranged(0.35, 0.0, 1.0)
    # Grounding DINO: a prompt token counts towards a label above this probability.
    text_threshold: float = ranged(0.25, 0.0, 1.0)
    # Segmenter: "sam" (encoder/decoder ONNX, needs user weights) or "none".
    segmenter: Literal["sam", "none"] = "none"
    sam_encoder_model: str = "mobilesam-encoder"
    sam_decoder_model: str = "mobilesam-decoder"

    # Reading names on facades (onboard/perception/text_reader.py): manifest names of
    # the PP-OCRv5 text detector and recogniser. The detector is its INT8 copy (made by
    # `aerie models prepare`): under half the fp32 time a view, for one name fewer of the reading
    # bench's (docs/BENCHMARKS.md, "Reading shop signs"); "ppocrv5-det" is the fp32 file.
    text_det_model: str = "ppocrv5-det-int8"
    text_rec_model: str = "ppocrv5-rec"
    # The detector's input: the frame scaled so its longest side is at most this
    # many pixels (multiples of 32). Cost grows with the pixel count; lettering
    # shorter than ~7 px at this scale is not found. Only finding text runs at this
    # scale: each line found is read from the full frame (1152 of a 1920x1080 frame
    # finds the 12 px signs that 960 misses; bench/results/2026-11-26/camera_crops).
    text_det_max_side: int = ranged(1152, 64, 4096)
    # A pixel is text above this probability (DB's binarisation threshold).
    text_det_threshold: float = ranged(0.3, 0.0, 1.0)
    # A text box is kept when the mean probability inside it is at least this.
    text_box_threshold: float = ranged(0.6, 0.0, 1.0)
    # Growth of DB's shrunk text regions back to the letters' extent (PP-OCR's 1.5).
    text_unclip_ratio: float = ranged(1.5, 1.0, 4.0)
    # Lines less tall than this (px, in the frame) are not read: too few pixels to
    # tell letters apart, and each costs a recogniser call.
    text_min_height_px: float = ranged(8.0, 1.0, 200.0)
    # Reads whose mean character probability is below this are dropped.
    text_min_confidence: float = ranged(0.5, 0.0, 1.0)
    # An exact read of the goal's name locks the goal only at this confidence or more.
    text_goal_min_confidence: float = ranged(0.8, 0.0, 1.0)
    # Height above the ground (m) of the lettering's bottom edge, for the
    # ground-plane range (a shop fascia is ~3 m up).
    text_sign_height_m: float = ranged(3.0, 0.0, 100.0)
    # Ranges beyond this (m) are reported as unknown.
    text_max_range_m: float = ranged(400.0, 1.0, 5000.0)
    # CPU threads per OCR session (0 = intra_op_threads).
    text_threads: int = ranged(0, 0, 64)
    # Walls seen aslant are read again upright (onboard/perception/facade_views.py): with the map's
    # footprints and the frame's pose, each wall's sign band is warped to face the camera. Off: the frame alone.
    text_rectify: bool = True
    # Walls turned less than this (degrees) from the sight line are read in the frame alone (chosen on the
    # reading bench's dev views: 30 reads 0.55 of its signs, 40 0.54, 60 0.48; docs/BENCHMARKS.md).
    text_rectify_min_angle_deg: float = ranged(30.0, 0.0, 89.0)
    # Walls farther than this (m) are not warped: 0.8 m shop lettering is under 10 px there.
    text_rectify_max_range_m: float = ranged(100.0, 1.0, 1000.0)
    # The sign band warped, metres above the ground (shop fronts hang 2-5 m up).
    text_rectify_band_low_m: float = ranged(1.5, 0.0, 200.0)
    text_rectify_band_high_m: float = ranged(6.0, 0.1, 500.0)
    # The warped pictures' pixels a view, all walls together, at the detector's scale (nearest walls
    # first): a cap on what rectifying costs (150,000: about a fifth of the frame detector's input at 1152;
    # on dev it reads what 400,000 does).
    text_rectify_max_pixels: int = ranged(150_000, 0, 50_000_000)

    def __post_init__(self) -> None:
        if not self.text_rectify_band_low_m < self.text_rectify_band_high_m:
            raise ValueError(f"inference.text_rectify_band_low_m ({self.text_rectify_band_low_m}) must be below "
                             f"text_rectify_band_high_m ({self.text_rectify_band_high_m})")

    # Language model (manifest name) used for planning and text reasoning.
    llm_model: str = "smollm2-135m-instruct"
    # Vision-language model (manifest name) and its CLIP/mmproj projector file in
    # model_dir (empty: the manifest's mmproj companion). Set, `aerie fly` asks it
    # between steps, never waiting: a caption of the frame for the agent, and
    # whether the frame shows the goal once it is placed. Empty: off.
    vlm_model: str = ""
    vlm_mmproj: str = ""
    # llama-cpp-python chat handler class for the VLM ("MTMDChatHandler",
    # "Llava15ChatHandler", "MoondreamChatHandler", ...).
    vlm_chat_handler: str = "Llava15ChatHandler"
    # Frames and maps are scaled down to this longest side (px) before the VLM sees them (0: as
    # captured). Qwen2.5-VL spends a token per 28 x 28 pixels: a 1920 x 1080 frame is ~2,600 tokens,
    # at 768 px ~400; Gemma 3 (896 x 896) and SmolVLM (512 px tiles) resize to their own sizes
    # anyway. Why 768: docs/VLM_ON_JETSON.md.
    vlm_image_max_side: int = ranged(768, 0, 8192)
    # llama.cpp context window, tokens.
    n_ctx: int = ranged(2048, 0, 1 << 20)
    # llama.cpp CPU threads for decoding (0 = half the cores).
    n_threads: int = ranged(0, 0, 256)
    # llama.cpp CPU threads for prompt evaluation (0 = same as n_threads; more
    # threads than free cores makes prompts several times slower).
    n_threads_batch: int = ranged(0, 0, 256)
    # Layers offloaded to a GPU (0 = CPU only, -1 = all).
    n_gpu_layers: int = ranged(0, -1, 10_000)
    # Use llama.cpp's extra CPU weight buffers (AMX / repacked). Off: the
    # llama-cpp-python 0.3.36 build segfaults in batched decode with them on
    # AMX-capable x86 CPUs; turn on where a build is known good (a Jetson has none).
    llama_extra_buffers: bool = False
    # Greedy structured calls check the grammar on the greedy token first and mask
    # the whole vocabulary only when it is rejected: the same tokens, with the
    # grammar's cost a small fraction of what masking every token costs
    # (docs/BENCHMARKS.md, "Grammar decoding").
    # Off: llama-cpp-python's own sampler chain.
    llama_grammar_first: bool = True
    # Longest answer of one model call, tokens.
    max_tokens: int = ranged(256, 1, 1 << 16)
    # Sampling temperature of structured calls (0 = greedy, reproducible).
    temperature: float = ranged(0.0, 0.0, 5.0)
