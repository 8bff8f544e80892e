"""Typed settings of model loading and inference workers."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InferenceConfig:
    # Where model files live; the manifest names files relative to it.
    model_dir: str = "~/.cache/aerie/models"
    # Every model call has a deadline; a call past it surfaces as an error.
    call_deadline_s: float = 5.0
