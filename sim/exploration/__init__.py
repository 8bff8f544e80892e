"""Exploration by two vehicles (no goal, most new ground), scored by `sim/explore_*.py`.

``frontier_explorer`` (the policy), ``exploration_view`` (own and peers' discoveries
in the common GPS frame), ``discovery_wire`` (the `contract.exploration_discovery`
messages), ``discovery_share`` (ZeroMQ PUB/SUB link between vehicles). Only the
simulator's exploration benchmarks fly it, so it lives here rather than in the
vehicle's `onboard/agent/`.
"""
