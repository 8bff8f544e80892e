"""`aerie fleet --vehicles N`: N simulated vehicles, N supervisors and one ground station, flying at once.

Each vehicle flies its own Helsinki task with fleet separation on and the fleet channel
between the supervisors (see sim/fleet_rig.py for what runs). The supervisors' lines
are echoed as they come, prefixed with the member; a table at the end says what each
flight came to, what each member heard of the others, the separation events each
bridge announced and the telemetry the ground received. `aerie bench fleet` runs the
same rig and writes the figures as JSON. Exit status 1 when any mission did not end
with arrival and landing.

The ground station serves its dashboard while the fleet flies (on loopback, a free
port) and its URL is printed once it listens; the flight log
stays in --out, so `aerie ground dashboard --config OUT/ground.yaml` shows it again later.
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    from sim.fleet_bench import default_out, parser, run_fleet, summary_table

    p = parser("aerie fleet", __doc__.splitlines()[0])
    p.add_argument("--no-dashboard", action="store_true", help="do not serve the ground station's dashboard")
    args = p.parse_args(argv)
    out = (args.out or default_out(args.vehicles)).resolve()
    print(f"Aerie fleet of {args.vehicles}: results in {out}", flush=True)
    r = run_fleet(args.vehicles, out, step_limit=args.step_limit, say=lambda line: print(line, flush=True),
                  timeout_s=args.timeout, tasks=tuple(args.tasks.split(",")), dashboard=not args.no_dashboard)
    print()
    print(summary_table(r))
    (out / "fleet.json").write_text(json.dumps(r, indent=1) + "\n")
    print(f"figures: {out / 'fleet.json'}", file=sys.stderr)
    if not args.no_dashboard:
        print(f"the flights again: aerie ground dashboard --config {out / 'ground.yaml'}", file=sys.stderr)
    return 0 if r["missions_completed"] == r["vehicles"] else 1
