"""`aerie memory stats|search|export|import`: the memory file for people.

Heavy modules (ONNX Runtime, sqlite-vec) are imported inside the commands so
`aerie --help` stays fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

COLLECTION_ALIASES = {
    "plan": "strategic_plan_memory",
    "task": "task_experience_memory",
    "navigate": "navigate_experience_memory",
    "search": "search_and_locate_memory",
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aerie memory", description="Inspect, search, export and import experience memory")
    p.add_argument("--config", default=None, help="config file (default: built-in defaults)")
    p.add_argument("--db", default=None, help="memory file (default: data_dir/memory.path from the config)")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("stats", help="counts per collection, schema and file facts")
    s.add_argument("--json", action="store_true", help="print JSON")
    q = sub.add_parser("search", help="semantic search in one collection")
    q.add_argument("query", help="text to search for (a task instruction or a current_state)")
    q.add_argument("-c", "--collection", default="navigate",
                   help="plan | task | navigate | search, or a full collection name (default: navigate)")
    q.add_argument("-k", type=int, default=None, help="results (default: max_retrieval_results)")
    q.add_argument("--outcome", choices=["success", "failure"], default=None)
    q.add_argument("--threshold", type=float, default=None, help="minimum cosine similarity (default: config)")
    q.add_argument("--json", action="store_true")
    e = sub.add_parser("export", help="write experiences to a msgpack bundle")
    e.add_argument("bundle")
    e.add_argument("-c", "--collection", default=None)
    i = sub.add_parser("import", help="add a bundle's experiences (importing twice adds nothing)")
    i.add_argument("bundle")
    return p


def _resolve(args: argparse.Namespace):
    from onboard.config import load_config

    cfg = load_config(args.config)
    from onboard.memory.settings import memory_file_path

    path = Path(args.db).expanduser() if args.db else memory_file_path(cfg.data_dir, cfg.memory)
    return cfg, path


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    from common.typed_config import ConfigError
    from contract.bundle import BundleError
    from onboard.memory.bundle import export_bundle, import_bundle
    from onboard.memory.embedder import EmbedderError, MiniLMEmbedder
    from onboard.memory.experience_store import ExperienceStore, ExperienceStoreError
    from contract.records import RecordError
    from onboard.memory.schema import SchemaError

    try:
        cfg, path = _resolve(args)
        if args.cmd in ("stats", "search", "export") and not path.exists():
            print(f"aerie memory: {path}: no memory file", file=sys.stderr)
            return 1
        with ExperienceStore.open(path, MiniLMEmbedder.load(), cfg.memory) as store:
            if args.cmd == "stats":
                stats = store.stats()
                if args.json:
                    print(json.dumps(asdict(stats), indent=2))
                else:
                    print(f"file:      {stats.path} ({stats.file_bytes / 1e6:.2f} MB, schema v{stats.schema_version})")
                    print(f"engine:    {stats.sqlite}, sqlite-vec {stats.sqlite_vec}, {stats.embedding_model}")
                    for coll, c in stats.counts.items():
                        print(f"{coll:28s} {sum(c.values()):6d}  (success {c.get('success', 0)}, failure {c.get('failure', 0)})")
                    print(f"reflections {stats.reflections}, episodic sentences {stats.episodic_sentences}")
            elif args.cmd == "search":
                coll = COLLECTION_ALIASES.get(args.collection, args.collection)
                hits = store.search(args.query, coll, k=args.k, outcome=args.outcome, threshold=args.threshold)
                if args.json:
                    out = []
                    for h in hits:
                        rec = asdict(h.record)
                        if rec.get("semantic_enhanced_image") is not None:
                            rec["semantic_enhanced_image"] = f"<png {len(rec['semantic_enhanced_image'])} bytes>"
                        out.append({"uid": h.uid, "similarity": round(h.similarity, 4), "level": h.level, "record": rec})
                    print(json.dumps(out, indent=2, ensure_ascii=False))
                else:
                    if not hits:
                        print("no experience above the similarity threshold")
                    for h in hits:
                        rec = asdict(h.record)
                        rec.pop("semantic_enhanced_image", None)
                        print(f"{h.similarity:.3f}  {h.uid}  [{h.collection}/{h.level}]")
                        for key, value in rec.items():
                            print(f"        {key}: {value}")
            elif args.cmd == "export":
                n = export_bundle(store, args.bundle, collection=args.collection, vehicle_id=cfg.vehicle_id)
                print(f"exported {n} experiences to {args.bundle}")
            elif args.cmd == "import":
                rep = import_bundle(store, args.bundle)
                print(f"{rep.path}: {rep.total} experiences, {rep.added} added, {rep.already_present} already present")
    except (ConfigError, SchemaError, ExperienceStoreError, EmbedderError, BundleError, RecordError) as exc:
        print(f"aerie memory: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
