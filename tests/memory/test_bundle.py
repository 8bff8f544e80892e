"""Export / import of experiences as a msgpack bundle: idempotent, content-addressed."""

from __future__ import annotations

from pathlib import Path

import msgpack
import pytest

from contract.bundle import BundleError
from onboard.memory.bundle import export_bundle, import_bundle
from onboard.memory.experience_store import ExperienceStore
from contract.records import NAVIGATE_EXPERIENCE, NavigateExperience, StrategicPlan, TaskExperience

from .conftest import png_bytes


def _fill(s: ExperienceStore) -> None:
    plan = s.add_strategic_plan(StrategicPlan("Inspect the bridge pillars", '{"sub_goals": []}', "fly low", "{}", "success"))
    task = s.add_task_experience(TaskExperience("reach the bridge (Strategy: navigate)", "navigate", "success",
                                                "followed the river"), parent_uid=plan)
    s.add_navigate_experience(NavigateExperience("reach the bridge", "failure", "wind over water", '{"a": 1}',
                                                 "over the river near the bridge", png_bytes(3)), parent_uid=task)


def test_import_twice_is_import_once(tmp_path: Path, embedder, cfg) -> None:
    bundle = tmp_path / "lessons.msgpack"
    with ExperienceStore.open(tmp_path / "vehicle.sqlite", embedder, cfg) as src:
        _fill(src)
        assert export_bundle(src, bundle, vehicle_id="aerie-7") == 3
        uids = [e.uid for e in src.iter_experiences()]
    with ExperienceStore.open(tmp_path / "ground.sqlite", embedder, cfg) as dst:
        first = import_bundle(dst, bundle)
        second = import_bundle(dst, bundle)
        assert (first.added, first.already_present) == (3, 0)
        assert (second.added, second.already_present) == (0, 3)
        assert dst.count() == 3
        assert [e.uid for e in dst.iter_experiences()] == uids
        hit = dst.search("flying over the river by the bridge", NAVIGATE_EXPERIENCE, k=1)[0]
        assert hit.record.semantic_enhanced_image == png_bytes(3)
        assert hit.parent_uid is not None and dst.has(hit.parent_uid)
        # Round trip back to the vehicle: nothing new.
        export_bundle(dst, tmp_path / "back.msgpack")
    with ExperienceStore.open(tmp_path / "vehicle.sqlite", embedder, cfg) as src:
        assert import_bundle(src, tmp_path / "back.msgpack").added == 0


def test_tampered_or_foreign_bundles_are_refused(tmp_path: Path, embedder, cfg, store) -> None:
    bundle = tmp_path / "b.msgpack"
    _fill(store)
    export_bundle(store, bundle)
    doc = msgpack.unpackb(bundle.read_bytes(), raw=False)
    doc["experiences"][0]["fields"]["reflection_note"] = "edited without a new id"
    bundle.write_bytes(msgpack.packb(doc, use_bin_type=True))
    with ExperienceStore.open(tmp_path / "x.sqlite", embedder, cfg) as dst:
        with pytest.raises(BundleError, match="does not match its content"):
            import_bundle(dst, bundle)
        assert dst.count() == 0
        (tmp_path / "junk").write_bytes(b"\xc1\xc1 not msgpack")
        with pytest.raises(BundleError, match="junk"):
            import_bundle(dst, tmp_path / "junk")
        (tmp_path / "other").write_bytes(msgpack.packb({"format": "something-else"}))
        with pytest.raises(BundleError, match="not an aerie-memory-bundle"):
            import_bundle(dst, tmp_path / "other")
