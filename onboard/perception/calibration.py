"""Grounding DINO's and SAM's calibration inputs: the simulator's frames, fed as in flight.

An activation's calibrated range is only right for inputs prepared exactly as the vehicle
prepares them, so the feeds come from the detector's and segmenter's own preprocessing
(`GroundingDinoDetector.feeds`, `SamSegmenter.preprocess` and `decoder_feeds`) on the frames
and prompts of ``models/calibration/scenes/`` (rendered by `sim.calibration_scenes`). The
decoder is calibrated on the embeddings its own fp32 encoder makes of those frames, one feed
per box prompt. This lives in perception because inference, below it, must not know how a
detector prepares a frame; `quantize.calibration_for` takes `scene_feeds_for(...)` as an argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from onboard.inference.manifest import Manifest, require_verified
from onboard.inference.ort_session import CPU, OrtSession
from onboard.inference.quantize import CALIBRATION_DIR, QuantizeError
from onboard.perception.types import Box

SCENES_DIR = CALIBRATION_DIR / "scenes"
FEED_KINDS = ("grounding-dino", "sam-encoder", "sam-decoder")


@dataclass(frozen=True)
class Scene:
    file: str
    image: np.ndarray  # RGB, as the camera frames the perception pipeline is given
    prompts: list[str]  # Grounding DINO's text prompts
    boxes: list[Box]  # SAM's box prompts, pixels


def load_scenes(directory: Path = SCENES_DIR) -> list[Scene]:
    import cv2
    import yaml

    index = directory / "scenes.yaml"
    if not index.exists():
        raise QuantizeError(f"no calibration scenes in {directory} (render them: python -m sim.calibration_scenes)")
    scenes = []
    for r in (yaml.safe_load(index.read_text(encoding="utf-8")) or {}).get("frames", []):
        bgr = cv2.imread(str(directory / r["file"]), cv2.IMREAD_COLOR)
        if bgr is None:
            raise QuantizeError(f"calibration frame {directory / r['file']} is missing or unreadable")
        scenes.append(Scene(r["file"], cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), list(r["prompts"]),
                            [tuple(float(v) for v in b) for b in r["boxes"]]))
    if not scenes:
        raise QuantizeError(f"{index} lists no frames")
    return scenes


def dino_feeds(session: OrtSession, vocab: Path, scenes: list[Scene]) -> list[dict[str, np.ndarray]]:
    from onboard.perception.grounding_dino import BertTokenizer, GroundingDinoDetector, encode_prompt

    tokenizer = BertTokenizer(vocab)
    det = GroundingDinoDetector(session, tokenizer)
    return [det.feeds(s.image, encode_prompt(tokenizer, s.prompts, det.fixed_len or det.max_text_len)) for s in scenes]


def sam_encoder_feeds(encoder: OrtSession, scenes: list[Scene]) -> list[dict[str, np.ndarray]]:
    from onboard.perception.sam_segmenter import PROMPT_FRAME, encoder_input

    name = encoder.input_names[0]
    side = encoder.inputs()[name][1][-1]
    frame = side if isinstance(side, int) else PROMPT_FRAME
    return [{name: encoder_input(s.image, frame)[0]} for s in scenes]


def sam_decoder_feeds(encoder: OrtSession, decoder: OrtSession, scenes: list[Scene]) -> list[dict[str, np.ndarray]]:
    from onboard.perception.sam_segmenter import SamSegmenter

    seg = SamSegmenter(encoder, decoder, cache_frames=1)
    feeds = []
    for s in scenes:
        emb = seg.embeddings(s.image)
        feeds += [seg.decoder_feeds(emb, box, s.image.shape[:2]) for box in s.boxes]
    return feeds


def scene_feeds_for(manifest: Manifest, directory: Path, scenes_dir: Path = SCENES_DIR
                    ) -> Callable[[dict], list[dict[str, np.ndarray]]]:
    """`quantize.calibration_for`'s ``scene_feeds``: a manifest ``source`` -> its model's feeds.

    ``source.feeds`` says which model it is (grounding-dino, sam-encoder, sam-decoder); the fp32
    files are the verified ones in `directory` (a decoder's feeds need its ``source.encoder``).
    """

    def feeds(source: dict) -> list[dict[str, np.ndarray]]:
        kind = source.get("feeds")
        if kind not in FEED_KINDS:
            raise QuantizeError(f"calibration 'scenes' needs source.feeds, one of {FEED_KINDS} (got {kind!r})")
        base = manifest.get(source["from"])
        session = OrtSession(require_verified(base, directory), providers=[CPU])
        scenes = load_scenes(scenes_dir)
        if kind == "grounding-dino":
            vocab = directory / base.companions.get("vocab", "")
            if not vocab.is_file():
                raise QuantizeError(f"{base.name}: its tokeniser vocabulary {vocab} is absent "
                                    f"(`aerie models import {base.name} VOCAB --companion vocab`)")
            return dino_feeds(session, vocab, scenes)
        if kind == "sam-encoder":
            return sam_encoder_feeds(session, scenes)
        if "encoder" not in source:
            raise QuantizeError(f"{base.name}: a sam-decoder calibration needs source.encoder (the fp32 encoder's entry)")
        encoder = OrtSession(require_verified(manifest.get(source["encoder"]), directory), providers=[CPU])
        return sam_decoder_feeds(encoder, session, scenes)

    return feeds
