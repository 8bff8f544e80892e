"""`aerie bench memory`: KNN latency and recall of the experience store's search path, sqlite-vec, numpy and faiss.

Random unit vectors are the hard case for quantised prefilters (no cluster
structure, near neighbours barely closer than the rest), so recall@10 is
measured against exact numpy search for every method rather than assumed.

Methods are timed round-robin, query by query, so a load spike from other
processes hits all of them alike. Per size N (default 10k and 100k), a real memory file is filled through
``ExperienceStore.add_many`` with N experiences in the collection under test
(a third of them failures) plus N/5 in another collection, then reopened, and
the methods are:

* ``store``         ``ExperienceStore.search`` -- the path the agent uses (in-memory
                    vectors, PQ prefilter + exact float32 rescoring above
                    ``exact_search_max_rows``), including reading the k records back
* ``exact``         ``ExperienceStore.search_exact``: sqlite-vec float32 KNN within the
                    collection (partition key), records read back the same way
* ``exact_table``   sqlite-vec float32 KNN over the whole vec0 table (no partition key)
* ``faiss``         faiss IndexFlatIP over the collection (one thread), if installed
* ``numpy``         brute-force inner product over the collection's matrix (numpy's BLAS
                    threads), timed in a pass of its own after the others: OpenBLAS workers
                    spin on a core after each product and slowed whichever method came next

``one_collection_<N>_*`` reports ``store``; ``cache_load_<N>_s`` is
``ExperienceStore.warm`` after opening (reading the collection from SQLite and
training PQ, which an unwarmed store's first search pays),
``insert_per_s`` the ``add_many`` rate (1000 records a transaction).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

DIM = 384
K = 10
RECALL_TARGET = 0.95


def _pct(times_ms: list[float], q: float) -> float:
    import numpy as np

    return float(np.percentile(np.asarray(times_ms), q))


def _unit(rng: Any, n: int) -> Any:
    import numpy as np

    x = rng.standard_normal((n, DIM)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


class _GivenVectors:
    """Stands in for the embedding model: the benchmark hands the store its vectors directly."""

    model_id = "bench-random-unit"
    dim = DIM

    def embed(self, texts: Any) -> Any:
        raise RuntimeError("the memory benchmark passes vectors, it never embeds text")


def _fill(path: Path, target: Any, others: Any, cfg: Any, log: Callable[[str], None]) -> tuple[list[str], float]:
    """Write the file through the store; return the target collection's uids in vector order and the rate."""
    import numpy as np

    from onboard.memory.experience_store import ExperienceStore
    from contract.records import NavigateExperience, SearchLocateExperience

    batch = 1000
    uids: list[str] = []
    t0 = time.perf_counter()
    with ExperienceStore.open(path, _GivenVectors(), cfg) as store:  # type: ignore[arg-type]
        for start in range(0, len(target), batch):
            recs = [NavigateExperience("bench", "failure" if i % 3 == 0 else "success", "r", "{}", f"state {i}")
                    for i in range(start, min(start + batch, len(target)))]
            uids += store.add_many(recs, embeddings=target[start:start + batch])
        for start in range(0, len(others), batch):
            recs = [SearchLocateExperience("bench", "success", "r", "{}", f"other {i}")
                    for i in range(start, min(start + batch, len(others)))]
            store.add_many(recs, embeddings=np.ascontiguousarray(others[start:start + batch]))
    rate = (len(target) + len(others)) / (time.perf_counter() - t0)
    log(f"  ExperienceStore.add_many: {rate:,.0f} rows/s")
    return uids, rate


def _run_interleaved(queries: Any, truths: dict[str, Any],
                     methods: dict[str, Callable[[Any], list[Any]]]) -> dict[str, dict[str, float]]:
    """Time every method on every query, round-robin, so a load spike from the
    other processes on the machine hits all methods alike instead of one."""
    import numpy as np

    for fn in methods.values():
        fn(queries[0])  # warm caches once
    times: dict[str, list[float]] = {name: [] for name in methods}
    recalls: dict[str, list[float]] = {name: [] for name in methods}
    for qi, q in enumerate(queries):
        for name, fn in methods.items():
            t0 = time.perf_counter()
            ids = fn(q)
            times[name].append((time.perf_counter() - t0) * 1000.0)
            recalls[name].append(len(set(ids) & set(truths[name][qi])) / K)
    return {name: {"p50_ms": round(_pct(times[name], 50), 3), "p99_ms": round(_pct(times[name], 99), 3),
                   "recall_at_10": round(float(np.mean(recalls[name])), 4)} for name in methods}


def bench_size(n: int, n_queries: int, oversample: int, seed: int, log: Callable[[str], None]) -> dict[str, Any]:
    import numpy as np

    from onboard.memory.experience_store import ExperienceStore
    from contract.records import NAVIGATE_EXPERIENCE
    from onboard.memory.settings import MemoryConfig

    rng = np.random.default_rng(seed)
    target = _unit(rng, n)
    others = _unit(rng, n // 5)
    queries = _unit(rng, n_queries)
    truth = np.argsort(-(queries @ target.T), axis=1)[:, :K]
    all_vecs = np.concatenate([target, others])
    truth_table = np.argsort(-(queries @ all_vecs.T), axis=1)[:, :K] + 1  # rowids in insertion order
    cfg = MemoryConfig(full_integrity_check_on_open=False, prefilter_oversample=oversample)
    log(f"N = {n:,} (+{len(others):,} in another collection), {n_queries} queries, "
        f"{K * oversample} PQ candidates above {cfg.exact_search_max_rows} rows")
    with tempfile.TemporaryDirectory(prefix="aerie-bench-memory-") as tmp:
        path = Path(tmp) / "bench.sqlite"
        uids, insert_rate = _fill(path, target, others, cfg, log)
        truth_uids = [[uids[i] for i in row] for row in truth]
        res: dict[str, Any] = {"n": n, "insert_per_s": round(insert_rate, 1), "candidates": K * oversample}
        with ExperienceStore.open(path, _GivenVectors(), cfg) as store:  # type: ignore[arg-type]
            t0 = time.perf_counter()
            store.warm([NAVIGATE_EXPERIENCE])
            res["cache_load_s"] = round(time.perf_counter() - t0, 3)
            log(f"  ExperienceStore.warm after open (read from SQLite + PQ training): {res['cache_load_s']} s")

            def numpy_knn(q: Any) -> list[str]:
                s = target @ q
                top = np.argpartition(-s, K)[:K]
                return [uids[i] for i in top[np.argsort(-s[top])]]

            methods: dict[str, Callable[[Any], list[Any]]] = {
                "store": lambda q: [h.uid for h in store.search(q, NAVIGATE_EXPERIENCE, k=K, threshold=-1.0)],
                "exact": lambda q: [h.uid for h in store.search_exact(q, NAVIGATE_EXPERIENCE, k=K, threshold=-1.0)],
                "exact_table": lambda q: [r[0] for r in store.conn.execute(
                    "SELECT rowid FROM experience_vec WHERE embedding MATCH ? AND k = ?", (q.tobytes(), K))],
            }
            try:
                import faiss
            except ImportError:
                log("  faiss not installed")
            else:
                faiss.omp_set_num_threads(1)
                index = faiss.IndexFlatIP(DIM)
                index.add(target)
                methods["faiss"] = lambda q: [uids[i] for i in index.search(q[None, :], K)[1][0]]
            truths = {name: (truth_table.tolist() if name == "exact_table" else truth_uids) for name in methods}
            m: dict[str, Any] = _run_interleaved(queries, truths, methods)
            # numpy runs alone, after the others: its BLAS worker threads keep spinning on a core
            # after each product, which doubled the next method's latency on a 2-core machine.
            m["numpy"] = _run_interleaved(queries, {"numpy": truth_uids}, {"numpy": numpy_knn})["numpy"]
        m.setdefault("faiss", None)
        res["methods"] = m
        for name, r in m.items():
            log(f"  {name:12s} {r}")
    res["one_collection"] = {"method": "store", **m["store"]}
    return res


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="aerie bench memory", description=__doc__.splitlines()[0])
    p.add_argument("--json", dest="json_path", default=None, help="write results to this JSON file")
    p.add_argument("--sizes", default="10000,100000", help="comma-separated collection sizes")
    p.add_argument("--queries", type=int, default=100, help="queries per method and size")
    p.add_argument("--oversample", type=int, default=None,
                   help="PQ candidates = 10 x this (default: memory.prefilter_oversample's default)")
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    import numpy as np

    from onboard.memory.partition_vectors import load_faiss
    from onboard.memory.sqlite_vec_db import find_backend

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    backend = find_backend()
    from onboard.memory.settings import MemoryConfig

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    oversample = MemoryConfig().prefilter_oversample if args.oversample is None else args.oversample
    out: dict[str, Any] = {
        "k": K, "dim": DIM, "recall_target": RECALL_TARGET, "queries": args.queries,
        "sqlite": f"{backend.name} {'.'.join(map(str, backend.sqlite_version))}", "sqlite_vec": backend.vec_version,
        "numpy": np.__version__, "faiss": getattr(load_faiss(), "__version__", None),
        "store_prefilter": ("faiss PQ<dim/2>x4fs + exact float32 rescoring" if load_faiss()
                            else "none (exact numpy scan)"),
        "python": platform.python_version(), "machine": platform.machine(),
        "cpus": os.cpu_count(), "loadavg_at_start": list(os.getloadavg()), "sizes": {},
    }
    t0 = time.time()
    for n in sizes:
        out["sizes"][str(n)] = bench_size(n, args.queries, oversample, args.seed, log)
    out["loadavg_at_end"] = list(os.getloadavg())
    out["wall_s"] = round(time.time() - t0, 1)
    for n in sizes:
        r = out["sizes"][str(n)]
        tag = f"{n // 1000}k" if n % 1000 == 0 else str(n)
        out[f"one_collection_{tag}_p50_ms"] = r["one_collection"]["p50_ms"]
        out[f"one_collection_{tag}_p99_ms"] = r["one_collection"]["p99_ms"]
        out[f"one_collection_{tag}_recall_at_10"] = r["one_collection"]["recall_at_10"]
        out[f"one_collection_{tag}_method"] = r["one_collection"]["method"]
        out[f"cache_load_{tag}_s"] = r["cache_load_s"]
        out[f"exact_{tag}_p50_ms"] = r["methods"]["exact"]["p50_ms"]
        out[f"exact_{tag}_p99_ms"] = r["methods"]["exact"]["p99_ms"]
        out[f"exact_table_{tag}_p50_ms"] = r["methods"]["exact_table"]["p50_ms"]
        out[f"numpy_{tag}_p50_ms"] = r["methods"]["numpy"]["p50_ms"]
        out[f"faiss_{tag}_p50_ms"] = r["methods"]["faiss"]["p50_ms"] if r["methods"]["faiss"] else None
    out["insert_per_s"] = out["sizes"][str(sizes[-1])]["insert_per_s"]
    text = json.dumps(out, indent=2)
    if args.json_path:
        Path(args.json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_path).write_text(text + "\n")
        log(f"wrote {args.json_path}")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
