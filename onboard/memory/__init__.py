"""The vehicle's long-term memory: experiences in one SQLite + sqlite-vec file, and this flight's map.

Nothing is imported here so that importing a submodule stays cheap; use the
modules directly::

    from onboard.memory.embedder import MiniLMEmbedder
    from onboard.memory.experience_store import ExperienceStore
    from contract.records import NAVIGATE_EXPERIENCE, NavigateExperience
    from onboard.memory.anchor_graph import AnchorGraph

    with ExperienceStore.open(path, MiniLMEmbedder.load(), cfg.memory) as store:
        store.add_navigate_experience(NavigateExperience(
            navigation_goal="reach the church", is_success="failure",
            reflect_reason="flew into the wind over the river", refined_action='{"move": "left"}',
            current_state=current_state, semantic_enhanced_image=png_bytes))
        lessons = store.search(current_state, NAVIGATE_EXPERIENCE)  # list[Retrieved]

    graph = AnchorGraph(cfg.memory.anchors)
    graph.step("forward", scene_type="Hallway" if graph.should_observe_place() else None)
    graph.record_discovered_context(goal_flag=False, goal_scene_type="kitchen", why="cups live there")
    prompt_part = render_navigation_context(graph)  # onboard.memory.navigation_context

Modules: ``experience_store`` (collections, KNN, writer lock), ``records``
(ReflectionNav collection records, content-hash ids), ``adaptive_retrieval``
(simple / medium / complex), ``reflection_memory`` (reflection window,
episodic sentences, semantic summary), ``anchor_graph`` +
``discovered_context`` + ``navigation_context`` (Place–Anchor memory),
``store_lock`` (the one-writer lock and transactions), ``flight_notes`` (reflections, episodic sentences, summaries), ``schema`` (versions, migrations, integrity), ``bundle`` (msgpack sync),
``embedder`` (MiniLM on ONNX Runtime), ``sqlite_vec_db`` (loading sqlite-vec),
``vector_cache`` + ``partition_vectors`` (the in-memory vectors and PQ prefilter search runs on),
``cli`` (the `aerie memory` command; `aerie bench memory` is `sim/memory_bench.py`).
"""
