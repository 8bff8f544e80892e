"""Fault handling on real models: corrupted files are named, hung calls hit their deadline."""

import asyncio
import sys
from pathlib import Path

import numpy as np
import pytest

from onboard.inference.inference_worker import DeadlineExceeded, ProcessWorker
from onboard.perception.camera_model import CameraIntrinsics, CameraPose
from onboard.perception.pipeline import PerceptionPipeline

sys.path.insert(0, str(Path(__file__).parent))
import workers_for_tests  # noqa: E402


def test_corrupted_gguf_is_named(tmp_path, smollm2_path):
    from onboard.inference.llama_backend import LlamaBackendError, LlamaTextModel

    bad = tmp_path / "planner.gguf"
    bad.write_bytes(smollm2_path.read_bytes()[:2_000_000])
    with pytest.raises(LlamaBackendError, match="planner.gguf"):
        LlamaTextModel(bad)


def test_corrupted_detector_file_is_named(tmp_path, ssdlite_path):
    from onboard.inference.manifest import ModelFileError
    from onboard.inference.ort_session import OrtSession

    bad = tmp_path / "ssdlite_person.onnx"
    data = ssdlite_path.read_bytes()
    bad.write_bytes(data[: len(data) // 3])
    with pytest.raises(ModelFileError, match="ssdlite_person.onnx"):
        OrtSession(bad)


def test_real_llm_call_past_its_deadline_is_killed(smollm2_path, monkeypatch):
    """SmolLM2 asked for 400 tokens with a 0.5 s deadline: the process is killed, the next call works in a fresh one."""
    monkeypatch.setenv("AERIE_TEST_GGUF", str(smollm2_path))
    worker = ProcessWorker("planner", workers_for_tests.make_smollm2, deadline_s=60.0)
    try:
        assert isinstance(worker.call(("Say hi.", 2)), str)
        with pytest.raises(DeadlineExceeded, match="killed"):
            worker.call(("Write a long story about drones.", 400), deadline_s=0.5)
        assert isinstance(worker.call(("Say hi.", 2)), str)
    finally:
        worker.close()


class _HungDetector:
    """A detector whose model never answers (a wedged GPU, a deadlocked runtime)."""

    def __init__(self):
        import threading

        self.entered = threading.Event()
        self.release = threading.Event()

    def detect(self, image, prompts):
        self.entered.set()
        self.release.wait(30)
        return []


def test_hung_detector_surfaces_as_deadline_while_the_loop_runs():
    """Ordering, not timing: a ticker that yields on every loop turn runs between the call's submission
    and its DeadlineExceeded, which a call blocking the loop would make impossible."""
    det = _HungDetector()
    pipeline = PerceptionPipeline(det, CameraIntrinsics.from_hfov(64, 48, 90), deadline_s=0.3)

    async def scenario():
        ticks = 0
        stop = False

        async def ticker():
            nonlocal ticks
            while not stop:
                ticks += 1
                await asyncio.sleep(0)

        t = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        before = ticks
        with pytest.raises(DeadlineExceeded):
            await pipeline.perceive_async(np.zeros((48, 64, 3), np.uint8), CameraPose(0, 0, -10, 0, -30), ["person"])
        during = ticks - before
        stop = True
        await t
        return during

    ticked_during_hang = asyncio.run(scenario())
    assert det.entered.wait(30), "the detector was never called"
    det.release.set()
    pipeline.close()
    assert ticked_during_hang >= 1


def test_vlm_errors_name_the_projector_and_handler(tmp_path, smollm2_path):
    from onboard.inference.llama_backend import LlamaBackendError, LlamaVisionModel

    with pytest.raises(LlamaBackendError, match="projector file .*mmproj.gguf does not exist"):
        LlamaVisionModel(smollm2_path, tmp_path / "mmproj.gguf")
    (tmp_path / "mmproj.gguf").write_bytes(b"GGUF")
    with pytest.raises(LlamaBackendError, match="no chat handler 'NopeChatHandler'.*Llava15ChatHandler"):
        LlamaVisionModel(smollm2_path, tmp_path / "mmproj.gguf", handler="NopeChatHandler")
