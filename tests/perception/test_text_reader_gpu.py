"""The reader on ONNX Runtime's CUDA execution provider: the path a Jetson or a GPU ground box takes.

Deselected by default (marker ``gpu``). Run on a CUDA machine with onnxruntime-gpu after
``aerie models prepare``: ``pytest -m gpu tests/perception/test_text_reader_gpu.py -s``
(``-s`` prints the per-view times of both providers; they are reported, never asserted).
"""

import os
import statistics
import time
from dataclasses import replace

import numpy as np
import pytest

from onboard.inference.manifest import model_dir
from sim.reading_scores import goal_for
from onboard.inference.settings import InferenceConfig
from sim.sign_frames import SignSpec, render_frame
from onboard.perception.name_matching import goal_sightings

GOAL = "Alepa Kallio"
NAMES = ["Alepa Kallio", "Alepa Töölö", "Kiasma", "Tavastia"]
CPU = "CPUExecutionProvider"
CUDA = "CUDAExecutionProvider"


def _reader(providers: tuple[str, ...]):
    from onboard.perception.text_reader import open_text_reader

    cfg = replace(InferenceConfig(), providers=providers)
    return open_text_reader(cfg, model_dir(os.environ.get("AERIE_MODEL_DIR") or cfg.model_dir))


def _p50_ms(reader, image, runs: int = 20) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        reader.read(image)
        times.append((time.perf_counter() - t) * 1000.0)
    return statistics.median(times)


@pytest.mark.gpu
def test_cuda_reader_reads_what_the_cpu_reader_reads():
    ort = pytest.importorskip("onnxruntime")
    if CUDA not in ort.get_available_providers():
        pytest.skip("this onnxruntime build has no CUDA execution provider")
    gpu, cpu = _reader((CUDA, CPU)), _reader((CPU,))
    assert gpu.detector.session.provider == CUDA and gpu.recognizer.session.provider == CUDA
    f = render_frame([SignSpec(GOAL, 48.0, 30.0, letter_m=1.0, facing_deg=15.0),
                      SignSpec("Tavastia", 10.0, 35.0, letter_m=1.0, facing_deg=-20.0)],
                     rng=np.random.default_rng(3), yaw_deg=30.0, altitude_m=12.0, goal=GOAL)
    on_gpu = gpu.sightings(f.image, f.intr, f.pose, NAMES)
    on_cpu = cpu.sightings(f.image, f.intr, f.pose, NAMES)
    assert sorted(s.name for s in on_gpu) == sorted(s.name for s in on_cpu)
    locked = goal_sightings(on_gpu, goal_for(GOAL, ["Kiasma"]), 0.8)
    truth = next(t for t in f.truths if t.name == GOAL)
    assert len(locked) == 1 and abs((locked[0].bearing_deg - truth.bearing_deg + 180) % 360 - 180) <= 2.0
    print(f"\nread p50 per view ({f.image.shape[1]}x{f.image.shape[0]}): CUDA {_p50_ms(gpu, f.image):.1f} ms, "
          f"CPU {_p50_ms(cpu, f.image):.1f} ms")
