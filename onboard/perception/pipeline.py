"""One perception step for the agent: detect, segment, localise, caption, geoinstruct.

``perceive_async`` is what the agent's ``perceive_and_model`` node awaits: the
whole step runs on an inference worker with the configured deadline, so a
stuck model surfaces as :class:`~onboard.inference.inference_worker.DeadlineExceeded`
and the asyncio loop (and the 20 Hz setpoint stream) never waits for it.

Usage::

    cfg = load_config().inference
    cam = CameraIntrinsics.from_hfov(640, 480, 90)
    perception = build_pipeline(cfg, cam)
    out = await perception.perceive_async(rgb, CameraPose(0, 0, -30, yaw_deg=90, pitch_deg=-30), ["person"])
    out.objects[0].bearing_deg, out.objects[0].range_m, out.caption, out.geoinstruct
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from onboard.inference.inference_worker import ThreadWorker
from onboard.perception.camera_model import CameraIntrinsics, CameraPose, localise_box
from onboard.perception.captioning import Captioner, DetectionCaptioner
from onboard.perception.geoinstruct import Landmark, build_geoinstruct
from onboard.perception.types import Box, Detector, Segmenter


@dataclass(frozen=True)
class PerceivedObject:
    label: str
    score: float
    box: Box
    bearing_deg: float
    elevation_deg: float
    range_m: float | None
    range_method: str | None
    north: float | None
    east: float | None
    mask: np.ndarray | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class PerceptionOutput:
    objects: list[PerceivedObject]
    caption: str
    geoinstruct: str
    timings_ms: dict[str, float]

    def as_observation(self) -> dict[str, object]:
        """The agent's ``current_observation`` entries (plain data, no masks)."""
        return {
            "scene_description": self.caption,
            "geoinstruct": self.geoinstruct,
            "detections": [
                {"label": o.label, "score": round(o.score, 3), "box": [round(v, 1) for v in o.box],
                 "bearing_deg": round(o.bearing_deg, 1), "range_m": None if o.range_m is None else round(o.range_m, 1),
                 "range_method": o.range_method}
                for o in self.objects
            ],
        }


class PerceptionPipeline:
    def __init__(
        self,
        detector: Detector,
        camera: CameraIntrinsics,
        *,
        segmenter: Segmenter | None = None,
        captioner: Captioner | None = None,
        deadline_s: float = 5.0,
    ) -> None:
        self.detector = detector
        self.camera = camera
        self.segmenter = segmenter
        self.captioner = captioner or DetectionCaptioner()
        self.deadline_s = deadline_s
        self.worker = ThreadWorker("perception", deadline_s)

    def perceive(self, image: np.ndarray, pose: CameraPose, prompts: Sequence[str], landmarks: Sequence[Landmark] = ()) -> PerceptionOutput:
        t = {"start": time.perf_counter()}
        detections = self.detector.detect(image, prompts)
        t["detect"] = time.perf_counter()
        masks: list[np.ndarray | None] = [None] * len(detections)
        if self.segmenter is not None and detections:
            masks = list(self.segmenter.segment(image, [d.box for d in detections]))
        t["segment"] = time.perf_counter()
        objects = []
        for det, mask in zip(detections, masks):
            loc = localise_box(self.camera, pose, det.box, det.label)
            objects.append(PerceivedObject(det.label, det.score, det.box, loc.bearing_deg, loc.elevation_deg,
                                           loc.range_m, loc.range_method, loc.north, loc.east, mask))
        caption = self.captioner.caption(image, objects)
        t["caption"] = time.perf_counter()
        geo = build_geoinstruct(pose, objects, landmarks)
        timings = {k: (t[k] - t[p]) * 1000 for p, k in (("start", "detect"), ("detect", "segment"), ("segment", "caption"))}
        return PerceptionOutput(objects, caption, geo, timings)

    async def perceive_async(self, image: np.ndarray, pose: CameraPose, prompts: Sequence[str], landmarks: Sequence[Landmark] = ()) -> PerceptionOutput:
        return await self.worker.call_async(self.perceive, image, pose, prompts, landmarks, deadline_s=self.deadline_s)

    def close(self) -> None:
        self.worker.close()


def build_pipeline(cfg, camera: CameraIntrinsics, *, ground_truth=None, vlm=None) -> PerceptionPipeline:
    """A pipeline from :class:`~onboard.inference.settings.InferenceConfig`.

    ``ground_truth`` (a :class:`~onboard.perception.oracle_detector.GroundTruthSource`)
    is required for ``detector: oracle``; ``vlm`` (a ``LlamaVisionModel``) turns
    on VLM captions.
    """
    from onboard.inference.manifest import load_manifest, model_dir
    from onboard.inference.ort_session import open_model

    manifest = load_manifest(cfg.manifest or None)
    directory = model_dir(cfg.model_dir)
    detector: Detector
    if cfg.detector == "oracle":
        from onboard.perception.oracle_detector import OracleDetector

        if ground_truth is None:
            raise ValueError("detector 'oracle' needs a ground-truth source from the simulator")
        detector = OracleDetector(ground_truth)
    elif cfg.detector == "ssdlite":
        from onboard.perception.ssdlite_detector import SsdliteDetector

        spec = manifest.get(cfg.ssdlite_model)
        detector = SsdliteDetector(open_model(spec, directory, cfg), labels=spec.labels or None, score_threshold=cfg.box_threshold)
    else:
        from onboard.inference.manifest import require_verified
        from onboard.perception.grounding_dino import BertTokenizer, GroundingDinoDetector

        spec = manifest.get(cfg.grounding_dino_model)
        vocab = directory / spec.companions["vocab"]
        if not vocab.exists():
            from onboard.inference.manifest import ModelFileError

            raise ModelFileError(f"tokeniser vocabulary {vocab} ({spec.name}) is absent: `aerie models import {spec.name} VOCAB --companion vocab`")
        require_verified(spec, directory)
        detector = GroundingDinoDetector(open_model(spec, directory, cfg), BertTokenizer(vocab),
                                         box_threshold=cfg.box_threshold, text_threshold=cfg.text_threshold)
    segmenter = None
    if cfg.segmenter == "sam":
        from onboard.perception.sam_segmenter import SamSegmenter

        segmenter = SamSegmenter(open_model(manifest.get(cfg.sam_encoder_model), directory, cfg),
                                 open_model(manifest.get(cfg.sam_decoder_model), directory, cfg))
    captioner = None
    if vlm is not None:
        from onboard.perception.captioning import VlmCaptioner

        captioner = VlmCaptioner(vlm)
    return PerceptionPipeline(detector, camera, segmenter=segmenter, captioner=captioner, deadline_s=cfg.call_deadline_s)
