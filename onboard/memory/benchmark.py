"""`aerie bench memory`: KNN latency and recall of sqlite-vec, numpy and faiss on random 384-d vectors.

Random unit vectors are the hard case for quantised prefilters (no cluster
structure, near neighbours barely closer than the rest), so recall@10 is
measured against exact numpy search for every method rather than assumed.

Per size N (default 10k and 100k), one real SQLite file holds N vectors in
the collection under test plus N/5 in two other collections, and the
methods are:

* ``exact_table``   sqlite-vec float32 KNN over the whole table (no partition key)
* ``exact``         sqlite-vec float32 KNN within one collection (partition key)
* ``int8_rescored`` sqlite-vec int8 KNN within the collection for ``k * oversample``
                    candidates, rescored exactly on float32 read from a plain table
* ``bit_rescored``  the same with binary-quantised vectors
* ``numpy``         brute-force inner product over the collection's matrix
* ``faiss``         faiss IndexFlatIP over the collection (one thread), if installed

``one_collection_<N>_*`` reports the fastest sqlite-vec method within one
collection whose recall@10 reaches the target; the others are listed too.
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


def _int8(x: Any) -> Any:
    from onboard.memory.vector_codes import int8_codes

    return int8_codes(x)


def _build(path: Path, target: Any, others: Any, log: Callable[[str], None]) -> tuple[Any, float]:
    """Create the file; return the connection and the float32 vec0 insert rate (rows/s)."""
    import numpy as np

    from onboard.memory.sqlite_vec_db import connect, find_backend

    conn = connect(path, find_backend(), timeout_s=5.0)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute(f"CREATE VIRTUAL TABLE vf USING vec0(collection text partition key, embedding float[{DIM}] "
                 "distance_metric=cosine)")
    conn.execute(f"CREATE VIRTUAL TABLE vi USING vec0(collection text partition key, embedding int8[{DIM}])")
    conn.execute(f"CREATE VIRTUAL TABLE vb USING vec0(collection text partition key, embedding bit[{DIM}])")
    conn.execute("CREATE TABLE vraw (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)")
    rows = [("target", v) for v in target] + [("other-a" if i % 2 else "other-b", v) for i, v in enumerate(others)]
    t0 = time.perf_counter()
    batch = 1000
    for start in range(0, len(rows), batch):
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO vf(rowid, collection, embedding) VALUES (?,?,?)",
                         [(start + i + 1, c, v.tobytes()) for i, (c, v) in enumerate(rows[start:start + batch])])
        conn.execute("COMMIT")
    rate = len(rows) / (time.perf_counter() - t0)
    log(f"  float32 vec0 insert: {rate:,.0f} rows/s")
    conn.execute("BEGIN")
    for start in range(0, len(rows), batch):
        chunk = rows[start:start + batch]
        q8 = _int8(np.stack([v for _, v in chunk]))
        conn.executemany("INSERT INTO vi(rowid, collection, embedding) VALUES (?,?,vec_int8(?))",
                         [(start + i + 1, c, q8[i].tobytes()) for i, (c, _) in enumerate(chunk)])
        conn.executemany("INSERT INTO vb(rowid, collection, embedding) VALUES (?,?,vec_quantize_binary(?))",
                         [(start + i + 1, c, v.tobytes()) for i, (c, v) in enumerate(chunk)])
        conn.executemany("INSERT INTO vraw(id, embedding) VALUES (?,?)",
                         [(start + i + 1, v.tobytes()) for i, (_, v) in enumerate(chunk)])
    conn.execute("COMMIT")
    return conn, rate


def _rescore(conn: Any, cand: list[int], q: Any) -> list[int]:
    import numpy as np

    if not cand:
        return []
    marks = ",".join("?" * len(cand))
    rows = conn.execute(f"SELECT id, embedding FROM vraw WHERE id IN ({marks})", cand).fetchall()
    mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), DIM)
    order = np.argsort(-(mat @ q))[:K]
    return [rows[i][0] for i in order]


def _run_interleaved(queries: Any, truths: dict[str, Any],
                     methods: dict[str, Callable[[Any], list[int]]]) -> dict[str, dict[str, float]]:
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
            recalls[name].append(len(set(ids) & set(truths[name][qi].tolist())) / K)
    return {name: {"p50_ms": round(_pct(times[name], 50), 3), "p99_ms": round(_pct(times[name], 99), 3),
                   "recall_at_10": round(float(np.mean(recalls[name])), 4)} for name in methods}


def bench_size(n: int, n_queries: int, oversample_int8: int, oversample_bit: int, seed: int,
               log: Callable[[str], None]) -> dict[str, Any]:
    import numpy as np

    rng = np.random.default_rng(seed)
    target = _unit(rng, n)
    others = _unit(rng, n // 5)
    queries = _unit(rng, n_queries)
    truth = np.argsort(-(queries @ target.T), axis=1)[:, :K] + 1  # rowids of the target collection start at 1
    truth_table = np.argsort(-(queries @ np.concatenate([target, others]).T), axis=1)[:, :K] + 1
    log(f"N = {n:,} (+{len(others):,} in other collections), {n_queries} queries")
    with tempfile.TemporaryDirectory(prefix="aerie-bench-memory-") as tmp:
        conn, insert_rate = _build(Path(tmp) / "bench.sqlite", target, others, log)
        res: dict[str, Any] = {"n": n, "insert_per_s": round(insert_rate, 1)}

        def vec_ids(sql: str, *args: Any) -> list[int]:
            return [r[0] for r in conn.execute(sql, args)]

        def numpy_knn(q: Any) -> list[int]:
            s = target @ q
            top = np.argpartition(-s, K)[:K]
            return (top[np.argsort(-s[top])] + 1).tolist()

        methods: dict[str, Callable[[Any], list[int]]] = {
            "exact_table": lambda q: vec_ids("SELECT rowid FROM vf WHERE embedding MATCH ? AND k = ?", q.tobytes(), K),
            "exact": lambda q: vec_ids(
                "SELECT rowid FROM vf WHERE embedding MATCH ? AND k = ? AND collection = 'target'", q.tobytes(), K),
            "int8_rescored": lambda q: _rescore(conn, vec_ids(
                "SELECT rowid FROM vi WHERE embedding MATCH vec_int8(?) AND k = ? AND collection = 'target'",
                _int8(q).tobytes(), K * oversample_int8), q),
            "bit_rescored": lambda q: _rescore(conn, vec_ids(
                "SELECT rowid FROM vb WHERE embedding MATCH vec_quantize_binary(?) AND k = ? "
                "AND collection = 'target'", q.tobytes(), K * oversample_bit), q),
            "numpy": numpy_knn,
        }
        try:
            import faiss
        except ImportError:
            log("  faiss not installed")
        else:
            faiss.omp_set_num_threads(1)
            index = faiss.IndexFlatIP(DIM)
            index.add(target)
            methods["faiss"] = lambda q: (index.search(q[None, :], K)[1][0] + 1).tolist()
        truths = {name: (truth_table if name == "exact_table" else truth) for name in methods}
        m = _run_interleaved(queries, truths, methods)
        m.setdefault("faiss", None)
        m["int8_rescored"]["candidates"] = K * oversample_int8
        m["bit_rescored"]["candidates"] = K * oversample_bit
        res["methods"] = m
        for name, r in m.items():
            log(f"  {name:14s} {r}")
        conn.close()
    candidates = [(name, m[name]) for name in ("int8_rescored", "bit_rescored", "exact")
                  if m[name]["recall_at_10"] >= RECALL_TARGET]
    best_name, best = min(candidates, key=lambda kv: kv[1]["p50_ms"])
    res["one_collection"] = {"method": best_name, **best}
    return res


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="aerie bench memory", description=__doc__.splitlines()[0])
    p.add_argument("--json", dest="json_path", default=None, help="write results to this JSON file")
    p.add_argument("--sizes", default="10000,100000", help="comma-separated collection sizes")
    p.add_argument("--queries", type=int, default=100, help="queries per method and size")
    p.add_argument("--oversample-int8", type=int, default=4, help="int8 candidates = 10 x this")
    p.add_argument("--oversample-bit", type=int, default=40, help="bit candidates = 10 x this")
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    import numpy as np

    from onboard.memory.sqlite_vec_db import find_backend

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    backend = find_backend()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    out: dict[str, Any] = {
        "k": K, "dim": DIM, "recall_target": RECALL_TARGET, "queries": args.queries,
        "sqlite": f"{backend.name} {'.'.join(map(str, backend.sqlite_version))}", "sqlite_vec": backend.vec_version,
        "numpy": np.__version__, "python": platform.python_version(), "machine": platform.machine(),
        "cpus": os.cpu_count(), "loadavg_at_start": list(os.getloadavg()), "sizes": {},
    }
    t0 = time.time()
    for n in sizes:
        out["sizes"][str(n)] = bench_size(n, args.queries, args.oversample_int8, args.oversample_bit, args.seed, log)
    out["loadavg_at_end"] = list(os.getloadavg())
    out["wall_s"] = round(time.time() - t0, 1)
    for n in sizes:
        r = out["sizes"][str(n)]
        tag = f"{n // 1000}k" if n % 1000 == 0 else str(n)
        out[f"one_collection_{tag}_p50_ms"] = r["one_collection"]["p50_ms"]
        out[f"one_collection_{tag}_p99_ms"] = r["one_collection"]["p99_ms"]
        out[f"one_collection_{tag}_recall_at_10"] = r["one_collection"]["recall_at_10"]
        out[f"one_collection_{tag}_method"] = r["one_collection"]["method"]
        out[f"exact_{tag}_p50_ms"] = r["methods"]["exact"]["p50_ms"]
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
