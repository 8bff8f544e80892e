"""`aerie bench memory` runs end to end on a small size and writes the documented keys."""

from __future__ import annotations

import json
from pathlib import Path

from sim import memory_bench as benchmark


def test_benchmark_small_run_writes_json(tmp_path: Path, capsys) -> None:
    out = tmp_path / "bench.json"
    assert benchmark.main(["--sizes", "2000", "--queries", "5", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    for key in ("one_collection_2k_p50_ms", "one_collection_2k_recall_at_10", "exact_2k_p50_ms",
                "numpy_2k_p50_ms", "faiss_2k_p50_ms", "insert_per_s"):
        assert key in data
    methods = data["sizes"]["2000"]["methods"]
    assert methods["exact"]["recall_at_10"] == 1.0 and methods["numpy"]["recall_at_10"] == 1.0
    # The headline figure is the store's own search path, not a side computation.
    assert data["one_collection_2k_method"] == "store"
    assert data["one_collection_2k_recall_at_10"] == methods["store"]["recall_at_10"]
    assert data["cache_load_2k_s"] > 0
    assert data["one_collection_2k_recall_at_10"] >= 0.95
