"""`aerie models quantize` on Grounding DINO and SAM: INT8 and FP16 copies that stay near FP32.

No registry ships their weights, so the user's files are stood in for by random-weight networks
with the real exports' signatures (sim/standin_networks.py: patch and residual convolutions,
masked attention between image, text and query tokens, a hypernetwork mask head). They are
imported as a user's files are, quantised by the command a user runs (calibrated on the
committed simulator frames, models/calibration/scenes/), verified by `aerie models verify`,
opened through the loaders, and compared with FP32 on frames the renderer draws here, which
are not calibration frames. The tolerances are stated below; a copy that loses the padding's
-inf, swaps inputs, or quantises with wrong ranges falls far outside them.
"""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from onboard.inference import models_cli
from onboard.inference.manifest import load_manifest, read_local_checksums
from onboard.inference.ort_session import OrtSession
from onboard.inference.settings import InferenceConfig

# How far a copy may stray from FP32 on the rendered frames (stand-in networks, random weights).
# Grounding DINO: |sigmoid(logit) - fp32's| over the prompt's tokens, and |box - fp32's| (normalised cxcywh).
DINO_INT8_PROB_MAX, DINO_INT8_PROB_MEAN, DINO_INT8_BOX_MAX = 0.15, 0.02, 0.10
DINO_FP16_PROB_MAX, DINO_FP16_BOX_MAX = 0.01, 0.01
# SAM: embeddings' relative error ||e - e32|| / ||e32||, and the box prompt's mask IoU with FP32's.
SAM_INT8_EMB_REL, SAM_INT8_MASK_IOU = 0.05, 0.85
SAM_FP16_EMB_REL, SAM_FP16_MASK_IOU = 0.01, 0.99

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "?", "a", "the", "red", "car", "building", "shop", "sign",
         "person", "cafe", "kiosk", "clothes", "restaurant", "pub", "fast", "food", "optician", "funeral", "directors",
         "street", "door", "roof", "blue", "tree"]
PROMPTS = ["red car", "building", "cafe door"]
VARIANTS = ("int8", "fp16")
BASES = ("grounding-dino-swint", "mobilesam-encoder", "mobilesam-decoder")


def _cli(directory: Path, *args: str) -> int:
    return models_cli.main(["--model-dir", str(directory), *args])


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    """The stand-ins imported as a user's exports, then `aerie models quantize` on all three."""
    from sim.standin_networks import build_grounding_dino_network, build_sam_decoder_network, build_sam_encoder_network

    src, directory = tmp_path_factory.mktemp("exports"), tmp_path_factory.mktemp("models")
    (src / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    files = {"grounding-dino-swint": build_grounding_dino_network(src / "gd.onnx", len(VOCAB)),
             "mobilesam-encoder": build_sam_encoder_network(src / "enc.onnx"),
             "mobilesam-decoder": build_sam_decoder_network(src / "dec.onnx")}
    for name, path in files.items():
        assert _cli(directory, "import", name, str(path)) == 0
    assert _cli(directory, "import", "grounding-dino-swint", str(src / "vocab.txt"), "--companion", "vocab") == 0
    assert _cli(directory, "quantize", *BASES) == 0
    return directory


@pytest.fixture(scope="module")
def frames() -> list[np.ndarray]:
    """Three frames of the renderer's street (RGB, 1280x720), none of them a calibration frame."""
    from sim.world.render import ViewRenderer
    from tests.sim.test_world_signage import CLEAN, street_world

    r = ViewRenderer(street_world(wall=True), replace(CLEAN, width=1280, height=720, noise_sigma=2.0))
    views = [r.render_at(np.array(eye), heading)[0] for eye, heading in
             (([20.0, -40.0, 8.0], 0.0), ([100.0, -5.0, 25.0], 330.0), ([180.0, 0.0, 40.0], 280.0))]
    return [np.ascontiguousarray(v[:, :, ::-1]) for v in views]


def _open(directory: Path, name: str) -> OrtSession:
    from onboard.inference.ort_session import open_model

    cfg = InferenceConfig(model_dir=str(directory), providers=("CPUExecutionProvider",), intra_op_threads=1)
    return open_model(load_manifest().get(name), directory, cfg)


def test_copies_are_written_beside_the_sources_with_checksums_and_verify(model_dir, capsys):
    manifest = load_manifest()
    sums = read_local_checksums(model_dir)
    for base in BASES:
        for variant in VARIANTS:
            spec = manifest.get(f"{base}-{variant}")
            assert spec.source["from"] == base and spec.precision == variant
            assert (model_dir / spec.file).parent == (model_dir / manifest.get(base).file).parent
            assert spec.file in sums
        ranges = manifest.get(f"{base}-int8").companions["trt_calibration"]
        assert ranges in sums and manifest.get(f"{base}-int8").source["calibration"] == "scenes"
    names = [f"{b}-{v}" for b in BASES for v in VARIANTS]
    assert _cli(model_dir, "verify", "--require", *names) == 0
    assert all(f"OK       {n}:" in capsys.readouterr().out for n in names[:1])


def test_verify_refuses_a_changed_copy(model_dir, tmp_path, capsys):
    import shutil

    copy = tmp_path / "models"
    shutil.copytree(model_dir, copy)
    spec = load_manifest().get("mobilesam-decoder-int8")
    data = bytearray((copy / spec.file).read_bytes())
    data[-100] ^= 0xFF
    (copy / spec.file).write_bytes(bytes(data))
    assert _cli(copy, "verify", spec.name) == 1
    assert "MISMATCH mobilesam-decoder-int8" in capsys.readouterr().err
    ranges = copy / load_manifest().get("grounding-dino-swint-int8").companions["trt_calibration"]
    ranges.write_text(ranges.read_text().replace('"ranges": {', '"ranges": {"forged": 1.0, ', 1))
    assert _cli(copy, "verify", "grounding-dino-swint-int8") == 1
    assert "MISMATCH grounding-dino-swint-int8 trt_calibration" in capsys.readouterr().err


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def test_grounding_dino_copies_stay_near_fp32_through_the_loader(model_dir, frames):
    from onboard.perception.grounding_dino import BertTokenizer, GroundingDinoDetector, encode_prompt

    tok = BertTokenizer(model_dir / "bert-base-uncased-vocab.txt")
    dets = {v: GroundingDinoDetector(_open(model_dir, n), tok) for v, n in
            (("fp32", "grounding-dino-swint"), ("int8", "grounding-dino-swint-int8"), ("fp16", "grounding-dino-swint-fp16"))}
    assert dets["int8"].session.path.name == "grounding_dino_swint.int8.onnx"
    prompt = encode_prompt(tok, PROMPTS)
    n = len(prompt.input_ids)
    worst = {v: [0.0, 0.0, 0.0] for v in VARIANTS}
    for frame in frames:
        feeds = dets["fp32"].feeds(frame, prompt)
        assert feeds["img"].shape == (1, 3, 750, 1333)  # the detector's own resize of a 16:9 frame
        ref_logits, ref_boxes = dets["fp32"].session.run(feeds)
        for v in VARIANTS:
            logits, boxes = dets[v].session.run(feeds)
            assert np.isneginf(logits[0, :, n:]).all() and np.isfinite(logits[0, :, :n]).all()
            dp = np.abs(_sigmoid(logits[0, :, :n]) - _sigmoid(ref_logits[0, :, :n]))
            worst[v] = [max(worst[v][0], float(dp.max())), max(worst[v][1], float(dp.mean())),
                        max(worst[v][2], float(np.abs(boxes - ref_boxes).max()))]
    print(f"grounding dino vs fp32 (prob max, prob mean, box max): {worst}")
    assert worst["int8"][0] <= DINO_INT8_PROB_MAX and worst["int8"][1] <= DINO_INT8_PROB_MEAN
    assert worst["int8"][2] <= DINO_INT8_BOX_MAX
    assert worst["fp16"][0] <= DINO_FP16_PROB_MAX and worst["fp16"][2] <= DINO_FP16_BOX_MAX
    assert worst["int8"][0] > worst["fp16"][0] > 0.0  # each copy is its own arithmetic, not the fp32 file again


def _mask_iou(a: np.ndarray, b: np.ndarray) -> float:
    union = (a | b).sum()
    return float((a & b).sum() / union) if union else 1.0


def test_sam_copies_stay_near_fp32_through_the_loader(model_dir, frames):
    from onboard.perception.sam_segmenter import SamSegmenter

    segs = {v: SamSegmenter(_open(model_dir, f"mobilesam-encoder{s}"), _open(model_dir, f"mobilesam-decoder{s}"))
            for v, s in (("fp32", ""), ("int8", "-int8"), ("fp16", "-fp16"))}
    boxes = [(300.0, 200.0, 700.0, 500.0), (50.0, 400.0, 400.0, 700.0)]
    rel = {v: 0.0 for v in VARIANTS}
    iou = {v: 1.0 for v in VARIANTS}
    for frame in frames:
        ref_emb = segs["fp32"].embeddings(frame)
        ref_masks = segs["fp32"].segment(frame, boxes)
        assert all(0.02 < m.mean() < 0.98 for m in ref_masks)  # masks with both sides, so IoU can fall
        for v in VARIANTS:
            emb = segs[v].embeddings(frame)
            rel[v] = max(rel[v], float(np.linalg.norm(emb - ref_emb) / np.linalg.norm(ref_emb)))
            masks = segs[v].segment(frame, boxes)
            assert masks[0].shape == frame.shape[:2]
            iou[v] = min(iou[v], *(_mask_iou(m, r) for m, r in zip(masks, ref_masks)))
    print(f"sam vs fp32: embedding relative error {rel}, worst mask IoU {iou}")
    assert rel["int8"] <= SAM_INT8_EMB_REL and iou["int8"] >= SAM_INT8_MASK_IOU
    assert rel["fp16"] <= SAM_FP16_EMB_REL and iou["fp16"] >= SAM_FP16_MASK_IOU
    assert rel["int8"] > rel["fp16"] > 0.0


def test_the_pipeline_flies_the_int8_copies_when_named(model_dir):
    from onboard.perception.camera_model import CameraIntrinsics
    from onboard.perception.pipeline import build_pipeline

    cfg = InferenceConfig(model_dir=str(model_dir), providers=("CPUExecutionProvider",), detector="grounding_dino",
                          grounding_dino_model="grounding-dino-swint-int8", segmenter="sam",
                          sam_encoder_model="mobilesam-encoder-int8", sam_decoder_model="mobilesam-decoder-int8")
    pipeline = build_pipeline(cfg, CameraIntrinsics.from_hfov(1280, 720, 81.0))
    assert pipeline.detector.session.path.name == "grounding_dino_swint.int8.onnx"
    assert pipeline.segmenter.encoder.path.name == "mobilesam_encoder.int8.onnx"
    assert pipeline.segmenter.decoder.path.name == "mobilesam_decoder.int8.onnx"


def test_tensor_ranges_are_of_the_fp32_graph_and_refuse_another(model_dir):
    import onnx

    from onboard.inference.derived import read_ranges
    from onboard.inference.manifest import sha256_file
    from onboard.inference.quantize import QuantizeError

    spec = load_manifest().get("grounding-dino-swint-int8")
    fp32 = model_dir / "grounding_dino_swint.onnx"
    ranges = read_ranges(model_dir / spec.companions["trt_calibration"], sha256_file(fp32))
    graph = onnx.load(str(fp32)).graph
    produced = {o for node in graph.node for o in node.output} | {i.name for i in graph.input}
    assert "img" in ranges and len(ranges) > 40 and set(ranges) <= produced
    assert all(np.isfinite(a) and a > 0 for a in ranges.values())
    with pytest.raises(QuantizeError, match="measured on grounding_dino_swint.onnx"):
        read_ranges(model_dir / spec.companions["trt_calibration"], "0" * 64)


def test_prepare_leaves_the_copies_to_quantize(model_dir, tmp_path):
    import shutil

    from onboard.inference.prepare import prepare_models

    copy = tmp_path / "models"
    shutil.copytree(model_dir, copy)
    (copy / "grounding_dino_swint.int8.onnx").unlink()
    results = prepare_models(load_manifest(), copy, ["grounding-dino-swint-int8", "mobilesam-encoder-fp16"], log=lambda m: None)
    by_name = {r.name: r for r in results}
    assert by_name["grounding-dino-swint-int8"].status == "skipped"
    assert "aerie models quantize grounding-dino-swint" in by_name["grounding-dino-swint-int8"].detail
    assert by_name["mobilesam-encoder-fp16"].status == "ready"  # made by quantize, and its checksum holds


def test_quantize_refuses_what_it_cannot_make(model_dir, capsys):
    assert _cli(model_dir, "quantize", "smollm2-135m-instruct") == 1
    assert "no int8 or fp16 entry in the manifest is made from 'smollm2-135m-instruct'" in capsys.readouterr().err


def test_a_flash_ships_the_copies_and_their_tensor_ranges(model_dir):
    from deploy.release import local_model_files
    from onboard.inference.manifest import default_manifest_path

    files, shipped, _ = local_model_files(default_manifest_path(), model_dir)
    for base in BASES:
        assert {base, f"{base}-int8", f"{base}-fp16"} <= set(shipped)
    assert {"grounding_dino_swint.int8.ranges.json", "mobilesam_encoder.int8.ranges.json",
            "mobilesam_decoder.int8.ranges.json", "bert-base-uncased-vocab.txt"} <= set(files)


def test_build_engine_reads_the_ranges_and_says_when_tensorrt_is_missing(model_dir, capsys):
    try:
        import tensorrt  # noqa: F401
        pytest.skip("TensorRT is here: the Jetson tests build the engines")
    except ImportError:
        pass
    assert _cli(model_dir, "build-engine", "grounding-dino-swint-int8") == 1
    assert "the tensorrt module is not installed" in capsys.readouterr().err
    (model_dir / "mobilesam_encoder.int8.ranges.json").rename(model_dir / "moved.json")
    try:
        assert _cli(model_dir, "build-engine", "mobilesam-encoder-int8") == 1
        assert "mobilesam_encoder.int8.ranges.json (mobilesam-encoder-int8 trt_calibration) is absent" in capsys.readouterr().err
    finally:
        (model_dir / "moved.json").rename(model_dir / "mobilesam_encoder.int8.ranges.json")


def test_the_ranges_become_onnx_runtime_s_tensorrt_calibration_table(model_dir, tmp_path):
    from onnxruntime.quantization.CalTableFlatBuffers.TrtTable import TrtTable

    from onboard.inference.derived import read_ranges
    from onboard.inference.quantize import write_trt_calibration_table

    ranges = read_ranges(model_dir / "mobilesam_decoder.int8.ranges.json")
    table = write_trt_calibration_table(ranges, tmp_path / "cache")
    t = TrtTable.GetRootAsTrtTable(table.read_bytes(), 0)
    read = {t.Dict(i).Key().decode(): float(t.Dict(i).Value()) for i in range(t.DictLength())}
    assert read.keys() == ranges.keys()
    assert all(abs(read[k] - ranges[k]) <= 1e-6 * max(1.0, ranges[k]) for k in ranges)
