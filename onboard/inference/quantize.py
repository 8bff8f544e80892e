"""INT8 quantisation for CPU with ``onnxruntime.quantization``, and how much it agrees.

Static QDQ quantisation of the convolutions, calibrated on the images in
``models/calibration/`` (not the ones agreement is measured on). Only the
listed op types are quantised: the detector's post-processing (NMS loops,
box decoding) stays in float, where quantisation would only move boxes.

A manifest entry says what it is calibrated on (``source.calibration``):
the person detector on two 300x300 photographs (the default), the text
detector on city views (``text``: ``models/calibration/text/``, fed exactly as
the reader feeds a frame, at ``source.max_side``). The text detector's
activations have long tails (a few bright pixels of lettering in a large
facade): ``source.calibrate: percentile`` keeps the 99.999th percentile of
each instead of its min/max: on the reading bench it read 30 names where the
fp32 detector read 31 and min/max calibration 22 (bench/results/2026-11-26/text_int8/).

Grounding DINO and SAM (``source.calibration: scenes``) are calibrated on frames the simulator
rendered (``models/calibration/scenes/``, with DINO's text prompts and SAM's box prompts in its
``scenes.yaml``), fed through the detector's and segmenter's own preprocessing, which the
perception layer supplies as ``scene_feeds``. Their convolutions and matrix products are
quantised (``op_types: [Conv, MatMul]``); softmax, masking and box heads stay in float.
The same pass also writes each tensor's range (:func:`tensor_ranges`): the calibration a
TensorRT INT8 engine of the fp32 graph is built with on the vehicle (``tensorrt_engine``),
because ONNX Runtime's CPU QDQ file has asymmetric activations, which TensorRT refuses.
FP16 copies (:func:`float16_model`) keep float32 inputs and outputs, so the loaders feed them
as they feed the fp32 file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

CALIBRATION_DIR = Path(__file__).resolve().parents[2] / "models" / "calibration"


class QuantizeError(RuntimeError):
    """Quantisation failed; names the model."""


def calibration_images(directory: Path = CALIBRATION_DIR, size: tuple[int, int] = (300, 300)) -> list[np.ndarray]:
    import cv2

    images = []
    for p in sorted(directory.glob("*.png")):
        bgr = cv2.imread(str(p), cv2.IMREAD_COLOR)
        images.append(cv2.resize(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), size, interpolation=cv2.INTER_LINEAR))
    if not images:
        raise QuantizeError(f"no calibration images in {directory}")
    return images


def calibration_for(source: dict, text_feeds: Callable[[int], list[np.ndarray]] | None = None,
                    scene_feeds: Callable[[dict], list[dict[str, np.ndarray]]] | None = None) -> dict:
    """`quantize_model` keywords from a manifest entry's ``source`` (what it is calibrated on, and how).

    `text_feeds(max_side)` gives the text detector's inputs for ``calibration: text``: the reader's
    own preprocessing (`onboard.perception.text_detection.calibration_feeds`), passed in because
    perception sits above inference and the feeds must be exactly what the reader feeds.
    `scene_feeds(source)` gives Grounding DINO's or SAM's inputs for ``calibration: scenes``
    (`onboard.perception.calibration.scene_feeds_for`), bound to the model directory.
    """
    kw: dict = {"op_types": source.get("op_types"), "calibrate": source.get("calibrate", "minmax"),
                "optimise": bool(source.get("optimise", False))}
    cal = source.get("calibration", "photos")
    if cal == "text":
        if text_feeds is None:
            raise QuantizeError("calibration 'text' needs the text detector's feeds, and none were given")
        kw["feeds"] = text_feeds(int(source.get("max_side", 1152)))
    elif cal == "scenes":
        if scene_feeds is None:
            raise QuantizeError("calibration 'scenes' needs the simulator frames' feeds, and none were given")
        kw["feeds"] = scene_feeds(source)
    elif cal != "photos":
        raise QuantizeError(f"unknown calibration {cal!r} (photos, text or scenes)")
    return kw


def quantize_model(
    src: Path,
    dst: Path,
    *,
    input_name: str | None = None,
    images: Sequence[np.ndarray] | None = None,
    feeds: Sequence[np.ndarray | dict[str, np.ndarray]] | None = None,
    op_types: Iterable[str] | None = ("Conv",),
    calibrate: str = "minmax",
    optimise: bool = False,
) -> str:
    """Write a static-QDQ INT8 copy of ``src`` to ``dst``; returns a one-line summary.

    `images` are fed as the person detector takes them (a batch of one, HWC); `feeds` are ready inputs:
    arrays for the first input, or dicts naming every input (a model of several inputs).
    `calibrate`: "minmax" or "percentile" (each activation's range from its 99.999th percentile).
    `optimise`: run ONNX Runtime's pre-quantisation pass first (batch norms folded into their
    convolutions, shapes inferred): the text detector's INT8 copy runs in about half the time with it
    (docs/BENCHMARKS.md, "Why the defaults").
    """
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)

    methods = {"minmax": CalibrationMethod.MinMax, "percentile": CalibrationMethod.Percentile}
    if calibrate not in methods:
        raise QuantizeError(f"unknown calibration method {calibrate!r} (minmax or percentile)")

    sess = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"])
    name = input_name or sess.get_inputs()[0].name
    input_type = sess.get_inputs()[0].type
    del sess
    if feeds is not None:
        inputs = [x if isinstance(x, dict) else {name: np.asarray(x, np.float32)} for x in feeds]
    else:
        frames = list(images) if images is not None else calibration_images()
        inputs = [{name: img[None].astype(np.uint8) if "uint8" in input_type else img[None].astype(np.float32)}
                  for img in frames]
    if not inputs:
        raise QuantizeError(f"quantising {src}: no calibration inputs")

    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".part")
    pre = dst.with_name(dst.name + ".pre")
    try:
        if optimise:
            from onnxruntime.quantization.shape_inference import quant_pre_process

            quant_pre_process(str(src), str(pre), skip_symbolic_shape=True)
        quantize_static(
            str(pre if optimise else src), str(tmp), _reader(inputs),
            quant_format=QuantFormat.QDQ,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=list(op_types) if op_types else None,
            calibrate_method=methods[calibrate],
        )
    except Exception as exc:
        tmp.unlink(missing_ok=True)
        raise QuantizeError(f"quantising {src} failed: {exc}") from exc
    finally:
        pre.unlink(missing_ok=True)
    tmp.replace(dst)
    return (f"static QDQ int8 of {','.join(op_types or ['all'])}, {len(inputs)} calibration inputs ({calibrate}), "
            f"{dst.stat().st_size / 1e6:.1f} MB")


def _reader(inputs: list[dict[str, np.ndarray]]):
    from onnxruntime.quantization import CalibrationDataReader

    class _Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self._it = iter(inputs)

        def get_next(self):
            return next(self._it, None)

    return _Reader()


def float16_model(src: Path, dst: Path) -> str:
    """Write an FP16 copy of ``src`` (weights and arithmetic) whose inputs and outputs stay float32.

    ONNX Runtime's own converter (``onnxruntime.transformers.float16``, the onnxconverter-common
    code it vendors): no extra package. Values beyond FP16's range are clamped to +-65504, which
    keeps Grounding DINO's -inf padding logits -inf (a sign and an infinity survive).
    """
    import onnx
    from onnxruntime.transformers.float16 import convert_float_to_float16

    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".part")
    try:
        model = convert_float_to_float16(onnx.load(str(src)), keep_io_types=True)
        onnx.save(model, str(tmp))
    except Exception as exc:
        tmp.unlink(missing_ok=True)
        raise QuantizeError(f"converting {src} to fp16 failed: {exc}") from exc
    tmp.replace(dst)
    return f"fp16 weights and arithmetic, float32 inputs and outputs, {dst.stat().st_size / 1e6:.1f} MB"


def tensor_ranges(src: Path, feeds: Sequence[dict[str, np.ndarray]], calibrate: str = "minmax") -> dict[str, float]:
    """Each float tensor's absolute range (max |value|) over ``feeds``: TensorRT's INT8 dynamic ranges.

    Tensor names are the ONNX graph's, which TensorRT's parser keeps for the network's tensors.
    """
    import tempfile

    from onnxruntime.quantization import CalibrationMethod
    from onnxruntime.quantization.calibrate import create_calibrator

    methods = {"minmax": CalibrationMethod.MinMax, "percentile": CalibrationMethod.Percentile}
    if calibrate not in methods:
        raise QuantizeError(f"unknown calibration method {calibrate!r} (minmax or percentile)")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            cal = create_calibrator(str(src), None, augmented_model_path=str(Path(tmp) / "augmented.onnx"),
                                    calibrate_method=methods[calibrate], providers=["CPUExecutionProvider"])
            for feed in feeds:  # one at a time: the calibrator keeps every tensor of what it is given at once
                cal.collect_data(_reader([feed]))
            data = cal.compute_data()
        except Exception as exc:
            raise QuantizeError(f"calibrating {src} for TensorRT failed: {exc}") from exc
    ranges = {}
    for name, td in data.data.items():
        d = td.to_dict() if hasattr(td, "to_dict") else {"lowest": td[0], "highest": td[1]}
        amax = max(abs(float(np.max(d["lowest"]))), abs(float(np.max(d["highest"]))),
                   abs(float(np.min(d["lowest"]))), abs(float(np.min(d["highest"]))))
        if np.isfinite(amax) and amax > 0:
            ranges[name] = amax
    return ranges


def write_trt_calibration_table(ranges: dict[str, float], directory: Path) -> Path:
    """`ranges` as ONNX Runtime's TensorRT calibration table (``calibration.flatbuffers``) in `directory`.

    The TensorRT execution provider builds an INT8 engine of an fp32 graph with it
    (``trt_int8_calibration_table_name``), looking for the file in its engine cache directory.
    """
    from onnxruntime.quantization.calibrate import TensorData
    from onnxruntime.quantization.quant_utils import write_calibration_table

    directory.mkdir(parents=True, exist_ok=True)
    data = {k: TensorData(lowest=np.array(-a, np.float32), highest=np.array(a, np.float32)) for k, a in ranges.items()}
    write_calibration_table(data, dir=str(directory))
    return directory / "calibration.flatbuffers"


@dataclass(frozen=True)
class Agreement:
    images: int
    matched: int  # FP32 detections that INT8 also found (same label, IoU >= iou)
    fp32_detections: int
    int8_detections: int
    mean_iou: float
    mean_score_delta: float

    @property
    def recall(self) -> float:
        return self.matched / self.fp32_detections if self.fp32_detections else 1.0


def box_iou(a: Sequence[float], b: Sequence[float]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def detection_agreement(fp32: list[list], int8: list[list], iou: float = 0.5) -> Agreement:
    """Compare two detectors' outputs image by image (lists of Detection lists)."""
    matched, ious, deltas = 0, [], []
    for ref, q in zip(fp32, int8):
        used: set[int] = set()
        for d in ref:
            best, best_j = 0.0, -1
            for j, e in enumerate(q):
                if j in used or e.label != d.label:
                    continue
                v = box_iou(d.box, e.box)
                if v > best:
                    best, best_j = v, j
            if best_j >= 0 and best >= iou:
                used.add(best_j)
                matched += 1
                ious.append(best)
                deltas.append(abs(d.score - q[best_j].score))
    return Agreement(
        images=len(fp32),
        matched=matched,
        fp32_detections=sum(len(r) for r in fp32),
        int8_detections=sum(len(r) for r in int8),
        mean_iou=float(np.mean(ious)) if ious else 0.0,
        mean_score_delta=float(np.mean(deltas)) if deltas else 0.0,
    )
