"""Retrieval on real MiniLM embeddings in a real sqlite-vec file."""

from __future__ import annotations

import pytest

from onboard.memory.experience_store import ExperienceStore, ExperienceStoreError
from contract.records import (
    NAVIGATE_EXPERIENCE,
    SEARCH_AND_LOCATE,
    NavigateExperience,
    RecordError,
    SearchLocateExperience,
    StrategicPlan,
)

from .conftest import png_bytes


def state(observation: str, task: str, goal: str, strategy: str = "navigate") -> str:
    """The agent's current_state format (ReflectionNav)."""
    return (f"Current aerial perspective observation: {observation}. Task: {task}. "
            f"Current Goal: {goal} (Strategy: {strategy})")


# (stored observation, lesson, paraphrased observation the vehicle sees later)
SITUATIONS = [
    ("a tall glass skyscraper blocks the straight path north",
     "climb above the tower or detour east before it fills the view",
     "a high-rise office tower stands directly in the way to the north"),
    ("strong gusts over the harbour push the drone sideways toward the water",
     "fly downwind along the pier and keep altitude margin over water",
     "windy conditions above the port are drifting the aircraft over the sea"),
    ("battery at 25 percent and the target is still 800 metres away",
     "turn back early; the return leg needs a reserve",
     "the battery level is low and the goal remains far off"),
    ("a flock of seagulls circles around the lighthouse",
     "hold position and wait for the birds to disperse",
     "many birds are flying near the coastal tower"),
    ("dense fog reduces visibility to a few metres",
     "descend slowly and rely on the landmark map",
     "thick fog, the camera can only see a few metres"),
    ("power lines cross the street at rooftop height",
     "climb above the cables before crossing the road",
     "electrical wires span the avenue at the height of the roofs"),
    ("the red-roofed church is visible to the left",
     "turn left toward the church steeple and approach from the square",
     "a church with a red roof appears on the left side"),
    ("a large park with trees and a pond lies ahead",
     "the park is a good open corridor to fly over at low altitude",
     "in front there is a green park with a small lake and trees"),
    ("a railway station with many platforms and trains below",
     "follow the tracks north to reach the stadium",
     "below are train tracks and a busy rail station"),
    ("a construction crane swings over the building site",
     "keep 50 metres from the crane jib and pass on the south side",
     "a tower crane is rotating above a construction area"),
    ("the GPS signal is degraded between tall buildings",
     "rise above the street canyon to recover satellite lock",
     "positioning is unreliable in the narrow street between high buildings"),
    ("heavy rain is falling and the lens has water drops",
     "land under shelter and wait for the shower to pass",
     "it is pouring and raindrops cover the camera"),
    ("a parked white van matching the target description on the street",
     "descend to confirm the licence plate before locking the target",
     "a white delivery vehicle that looks like the target is parked by the road"),
    ("a crowd of people gathered in the market square",
     "never fly over the crowd; go around the square's edge",
     "many pedestrians are assembled in the central plaza"),
    ("a helicopter is approaching from the east at low altitude",
     "descend and yield immediately to manned aircraft",
     "a manned rotorcraft is coming in low from the east"),
    ("the drone has been circling the same roundabout three times",
     "stop circling and pick the exit that leads toward the goal",
     "the vehicle keeps looping around the traffic circle"),
    ("a bridge spans the river with boats passing underneath",
     "cross the river at the bridge, not over open water",
     "there is a bridge over the river and ships below it"),
    ("the target rooftop has a blue water tank on it",
     "the blue tank marks the destination roof; hover above it",
     "a roof with a blue cistern is visible, which is the destination"),
    ("snow covers the streets and the rooftops look identical",
     "navigate by tall landmarks, not by roof colours",
     "everything is white with snow, roofs are hard to tell apart"),
    ("the sun is low and glare washes out the camera image",
     "turn so the sun is behind the drone before searching",
     "bright sunlight shines straight into the lens causing glare"),
    ("an airport runway and restricted airspace ahead",
     "geofence: never enter the airport zone, route around it",
     "the aerodrome with its landing strip lies in front"),
    ("a stadium with a large oval roof is visible to the south",
     "use the stadium as a waypoint, then head west",
     "to the south there is a big sports arena with an elliptical roof"),
]

TASK = "Fly to the delivery point in the city centre"


@pytest.fixture
def loaded(store: ExperienceStore) -> ExperienceStore:
    exps = [
        NavigateExperience(navigation_goal=f"goal {i}", is_success="success" if i % 2 else "failure",
                           reflect_reason=lesson, refined_action='{"action": "forward"}',
                           current_state=state(obs, TASK, "reach the delivery point"))
        for i, (obs, lesson, _) in enumerate(SITUATIONS)
    ]
    store.add_many(exps)
    return store


def test_at_least_twenty_situations() -> None:
    assert len(SITUATIONS) >= 20


def test_paraphrased_situation_retrieves_its_own_lesson(loaded: ExperienceStore) -> None:
    wrong = []
    for obs, lesson, paraphrase in SITUATIONS:
        hits = loaded.search(state(paraphrase, TASK, "reach the delivery point"), NAVIGATE_EXPERIENCE, k=1)
        if not hits or hits[0].record.reflect_reason != lesson:
            wrong.append((paraphrase, hits[0].record.reflect_reason if hits else None))
    assert wrong == []


def test_results_best_first_and_capped_by_config(loaded: ExperienceStore) -> None:
    hits = loaded.search(state(SITUATIONS[0][2], TASK, "reach the delivery point"), NAVIGATE_EXPERIENCE)
    assert len(hits) == loaded.cfg.max_retrieval_results
    sims = [h.similarity for h in hits]
    assert sims == sorted(sims, reverse=True)


def test_similarity_threshold_drops_unrelated(loaded: ExperienceStore) -> None:
    assert loaded.search("chocolate cake recipe with vanilla frosting", NAVIGATE_EXPERIENCE, threshold=0.5) == []


def test_filtered_query_returns_exactly_k(store: ExperienceStore, embedder) -> None:
    # 60 successes all nearly identical to the query crowd out the 12 failures:
    # a filter applied after the KNN would come back short.
    near = [NavigateExperience(f"g{i}", "success", f"lesson {i}", "{}", f"hover over the bridge, attempt {i}")
            for i in range(60)]
    far = [NavigateExperience(f"f{i}", "failure", f"failure lesson {i}", "{}", f"{obs} (failure {i})")
           for i, (obs, _, _) in enumerate(SITUATIONS[:12])]
    store.add_many(near + far)
    for k in (1, 5, 12):
        hits = store.search("hover over the bridge", NAVIGATE_EXPERIENCE, k=k, outcome="failure")
        hits_all = store.search("hover over the bridge", NAVIGATE_EXPERIENCE, k=k, outcome="failure", threshold=-1.0)
        assert len(hits_all) == k
        assert all(h.record.is_success == "failure" for h in hits_all)
        assert len(hits) <= k
    # More than exist: all of them and no more.
    assert len(store.search("bridge", NAVIGATE_EXPERIENCE, k=50, outcome="failure", threshold=-1.0)) == 12
    # Collections are partitions: search-and-locate sees none of the navigation rows.
    store.add(SearchLocateExperience("find the van", "success", "look at plates", "{}", "hover over the bridge"))
    only = store.search("hover over the bridge", SEARCH_AND_LOCATE, k=10, threshold=-1.0)
    assert [h.collection for h in only] == [SEARCH_AND_LOCATE]


def test_plan_retrieval_by_task_instruction(store: ExperienceStore) -> None:
    store.add_strategic_plan(StrategicPlan("Deliver the parcel to the hospital roof", '{"sub_goals": []}',
                                           "the roof helipad is the landing point", '{"sub_goals": [1]}', "success"))
    store.add_strategic_plan(StrategicPlan("Search the forest for a missing hiker", '{}', "use thermal sweeps",
                                           '{}', "failure"))
    hits = store.retrieve_plans("Bring the package to the roof of the hospital", k=1)
    assert hits[0].record.reflection_note == "the roof helipad is the landing point"
    assert hits[0].level == "strategy"


def test_png_stored_as_blob_or_file_reference(tmp_path, embedder, cfg) -> None:
    img = png_bytes(7)
    exp = NavigateExperience("g", "success", "r", "{}", "a bright yellow crane over the docks", img)
    with ExperienceStore.open(tmp_path / "a.sqlite", embedder, cfg) as s:
        s.add(exp)
        assert s.search("yellow crane at the docks", NAVIGATE_EXPERIENCE)[0].record.semantic_enhanced_image == img
        (blob, ref) = s.conn.execute("SELECT image, image_ref FROM experiences").fetchone()
        assert blob == img and ref is None
    with ExperienceStore.open(tmp_path / "b.sqlite", embedder, cfg, image_dir=tmp_path / "img") as s:
        s.add(exp)
        (blob, ref) = s.conn.execute("SELECT image, image_ref FROM experiences").fetchone()
        assert blob is None and (tmp_path / "img" / ref).read_bytes() == img
        assert s.search("yellow crane at the docks", NAVIGATE_EXPERIENCE)[0].record.semantic_enhanced_image == img


def test_bad_records_are_refused(store: ExperienceStore) -> None:
    import base64

    with pytest.raises(RecordError, match="PNG"):
        store.add(NavigateExperience("g", "success", "r", "{}", "s", base64.b64encode(png_bytes())))
    with pytest.raises(RecordError, match="success"):
        store.add(NavigateExperience("g", "ok", "r", "{}", "s"))
    with pytest.raises(ExperienceStoreError, match="collection"):
        store.search("x", "nope")
    with pytest.raises(ExperienceStoreError, match="k must"):
        store.search("x", NAVIGATE_EXPERIENCE, k=5000)


def test_same_content_is_stored_once(store: ExperienceStore) -> None:
    exp = NavigateExperience("g", "success", "r", "{}", "over the lake")
    assert store.add(exp) == store.add(exp)
    assert store.count(NAVIGATE_EXPERIENCE) == 1
    assert store.delete(store.add(exp)) and store.count() == 0


def test_search_agrees_with_exact_sqlite_vec_knn(tmp_path, embedder) -> None:
    from onboard.memory.settings import MemoryConfig

    exps = [NavigateExperience(f"g{i}", "success" if i % 3 else "failure", lesson, "{}",
                               state(obs, TASK, "reach the delivery point"))
            for i, (obs, lesson, _) in enumerate(SITUATIONS)]
    exact_cfg = MemoryConfig(writer_timeout_s=0.5)
    pre_cfg = MemoryConfig(writer_timeout_s=0.5, exact_search_max_rows=0, prefilter_oversample=2)
    path = tmp_path / "m.sqlite"
    with ExperienceStore.open(path, embedder, exact_cfg) as s:
        s.add_many(exps)
    with ExperienceStore.open(path, embedder, exact_cfg) as exact, ExperienceStore.open(path, embedder, pre_cfg) as pre:
        for _, _, paraphrase in SITUATIONS:
            q = state(paraphrase, TASK, "reach the delivery point")
            for outcome in (None, "failure"):
                a = [h.uid for h in exact.search_exact(q, NAVIGATE_EXPERIENCE, k=5, outcome=outcome, threshold=-1)]
                b = [h.uid for h in pre.search(q, NAVIGATE_EXPERIENCE, k=5, outcome=outcome, threshold=-1)]
                assert a == b
        assert len(pre.search("x", NAVIGATE_EXPERIENCE, k=7, outcome="failure", threshold=-1)) == 7
