"""The onboard agent graph (issue #6): perceive -> plan -> navigate/search/locate -> finalize -> continue?

Nothing is imported here so that importing a submodule stays cheap; use::

    from onboard.agent.agent import GraphAgent, variant_config
    from onboard.vocab.observation import AgentObservation, NeighbourMove, LandmarkSighting, PoiSighting

    agent = GraphAgent(variant_config("geometric"), gazetteer=landmark_names)
    agent.reset("Café Engel is about 300 m north-east of Kiasma.")
    action = agent.act(AgentObservation(step=0, steps_left=60, moves=(...), landmarks=(...), pois=(...)))
    agent.state.dynamic.trajectory_history      # one FrameLog per step
    agent.write_results("results/run_t001")     # trajectory.json + episode_summary.json

Modules (its input/output types are `onboard.vocab.observation`): ``settings``
(`AgentConfig`), ``agent_state`` (static / dynamic / final state),
``graph`` (nodes, routers, one step's walk), ``experts`` (navigate, search,
locate), ``geometric_planner`` (plan + move choice), ``llm_planner`` (plan
from the planner model, geometric fallback), ``working_memory`` (PReP
target-estimate fusion), ``goal_description`` (description -> relations),
``street_map`` (own corridor map, frontier routes),
``map_knowledge`` (what an onboard map says, in the own frame), ``corridor_map``
(routes on the map's corridors, moves snapped to its waypoints), ``strategy_control``
(effect classification, error-threshold controller, loop detection),
``place_memory`` (feeding `onboard.memory.anchor_graph`), ``current_state``
(the `current_state` string), ``frame_log`` (`FrameLog`), ``geometry``.

Exploration by two vehicles, which only the simulator's benchmarks fly, is in
`sim/exploration/`.
"""
