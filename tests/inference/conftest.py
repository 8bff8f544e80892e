"""Where tests find prepared model files (``aerie models prepare`` / ``make models``)."""

import os
from dataclasses import replace
from pathlib import Path

import numpy as np

import pytest

from onboard.inference.manifest import load_manifest, model_dir, require_verified, ModelFileError
from onboard.inference.settings import InferenceConfig


def _prepared(name: str) -> Path:
    """The verified file of a manifest model, or skip naming the missing step."""
    directory = model_dir(os.environ.get("AERIE_MODEL_DIR") or InferenceConfig().model_dir)
    spec = load_manifest().get(name)
    try:
        return require_verified(spec, directory)
    except ModelFileError as exc:
        pytest.skip(f"{exc} (run `make models`)")


@pytest.fixture
def smollm2_path() -> Path:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    return _prepared("smollm2-135m-instruct")


@pytest.fixture(scope="module")
def smollm2_model():
    """A greedy LlamaTextModel on the shipped SmolLM2 GGUF, one per test module."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    from onboard.inference.llama_backend import LlamaTextModel

    return LlamaTextModel(_prepared("smollm2-135m-instruct"), n_ctx=2048, max_tokens=256, temperature=0.0)


@pytest.fixture
def ssdlite_path() -> Path:
    return _prepared("ssdlite-person")


@pytest.fixture(scope="session")
def tiny_vlm_dir() -> Path:
    """The model directory, holding the random-weight VLM the tests build there once (sim/tiny_vlm.py)."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    from sim.tiny_vlm import build_tiny_vlm

    directory = model_dir(os.environ.get("AERIE_MODEL_DIR") or InferenceConfig().model_dir)
    build_tiny_vlm(directory)
    return directory


def tiny_vlm_config(directory: Path, **overrides) -> InferenceConfig:
    """The inference settings a user writes to fly with a VLM, pointed at the test model."""
    return InferenceConfig(model_dir=str(directory), vlm_model="tiny-vlm", vlm_chat_handler="MTMDChatHandler", n_threads=1,
                           **overrides)


@pytest.fixture(scope="module")
def tiny_vlm(tiny_vlm_dir):
    """The test VLM opened as a user's weights are: manifest, checksum, projector, chat handler (`open_vlm`)."""
    from onboard.inference.llama_backend import open_vlm

    model = open_vlm(tiny_vlm_config(tiny_vlm_dir))
    yield model
    model.llm.close()  # now, not at interpreter exit, when mtmd's teardown finds stderr closed


@pytest.fixture(scope="module")
def flight_images() -> list[np.ndarray]:
    """A camera frame from the simulator's renderer and the agent's landmark and semantic maps (RGB)."""
    from onboard.agent import map_render
    from onboard.agent.agent import GraphAgent
    from onboard.agent.settings import AgentConfig
    from sim.world.render import ViewRenderer
    from tests.agent.toy_city import ToyCity
    from tests.sim.test_world_signage import CLEAN, street_world

    frame, _ = ViewRenderer(street_world(), replace(CLEAN, width=640, height=480)).render_at(np.array([20.0, -40.0, 8.0]), 0.0)
    agent = GraphAgent(AgentConfig(), ["Tower", "Kiasma"])
    agent.reset("Cafe Aalto is about 140 m north-east of Tower.")
    ToyCity(landmarks={"Tower": (200.0, 200.0), "Kiasma": (400.0, 50.0)}).fly(agent, start=0, limit=3)
    landmark, semantic = map_render.render_maps(agent.state, "t1")
    return [np.ascontiguousarray(im[:, :, ::-1]) for im in (frame, landmark, semantic)]  # BGR -> RGB
