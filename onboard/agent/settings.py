"""Typed settings of the agent graph and its deterministic `geometric` planner backend.

The reflection window and the episodic prompt length are memory settings
(`memory.reflection_window`, `memory.episodic_prompt_sentences`); the agent
takes them from `MemoryConfig` rather than repeating them here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class AgentConfig:
    # Planner backend: "geometric" (deterministic, no model), "llm" (the long-term plan from
    # the planner model in `inference`, geometric plan on garbage / timeout; moves stay geometric) or "vlm"
    # (the navigate and search moves from the VLM in `inference.vlm_model`, asked with the camera frame and the
    # agent's two maps, never waited for; geometric meanwhile and on garbage: onboard/agent/vlm_planner.py).
    planner: Literal["geometric", "llm", "vlm"] = "geometric"
    # vlm backend: wait inside the step for the VLM's answer and take it in that step (reproducible runs:
    # `aerie bench nav --agent vlm`). false: fly the geometric move, take the answer in when it arrives.
    vlm_plan_wait: bool = False
    # vlm backend: the VLM's movement (forward, turn_left, ...) names the move on offer nearest the bearing it
    # points to from its frame's heading, if within this many degrees; else the geometric move is flown.
    # Streets meet at about right angles, so 60 takes the street that way and never the one beside it.
    vlm_move_tolerance_deg: float = 60.0
    # With a VLM (inference.vlm_model), a camera "no" to the goal read from afar holds the arrival for at most this
    # many steps while the drone gets closer and the VLM looks again (onboard/agent/goal_confidence.py).
    vlm_doubt_steps: int = 3
    # llm backend: wait inside the step for the model's plan (reproducible runs: `aerie bench nav --agent llm`).
    # false: fly the geometric plan at once and adopt the model's plan at the first step after it arrives.
    llm_plan_wait: bool = False
    # Deadline of the model's plan call when no step waits for it (llm_plan_wait false), seconds; the
    # vehicle flies the geometric plan meanwhile, so it may exceed inference.call_deadline_s (the larger is used).
    llm_plan_deadline_s: float = 20.0
    # llm backend: every prompt carries the seeds' context (last reflections, retrieved experiences, what is
    # known so far, the Navigation Context, recent moves; onboard/agent/prompt_context.py). false: task,
    # geo-instruction, retrieved plan notes and reflections only (the prompt before).
    use_prompt_context: bool = True
    # The prompt's experiences come from adaptive retrieval (skip / single / hierarchical by the task's
    # complexity, memory.simple_task_max_words / medium_task_max_words). false: flat search of past plans.
    use_adaptive_retrieval: bool = True
    # Re-plan on the triggers (a sub-goal ended, a reflection fired, a described landmark fixed, a trigger
    # another node appended, every retrieval_interval steps); one model call in flight at a time. false: one plan.
    use_replan: bool = True
    # The model answers the Place-Anchor planner's contract (goal_flag, angle, discovered context); its intent
    # biases exploring and names the navigate sub-goal (onboard/agent/llm_planner.py). false: it writes sub-goals.
    use_place_anchor_plan: bool = True
    # Re-plan (and retrieve again) at least every this many steps since the last plan request (0: never by count).
    retrieval_interval: int = 20
    # Past experiences the plan prompt carries at most (the seeds' max_key_experiences): hits of one
    # retrieval, adaptive or flat (onboard/agent/prompt_context.py).
    max_key_experiences: int = 3
    # Sub-goal timeouts (search_timeout, navigate_timeout): false: a sub-goal lasts until it is done.
    use_search_timeout: bool = True
    # The seeds' search_timeout: a search that has gone on this many steps without locating the goal ends and the
    # plan moves on to the next alternative estimate, or back to navigate (0: never). The shortest that cost
    # nothing on the ordinary dev split (docs/BENCHMARKS.md, "Why the defaults").
    search_timeout: int = 20
    # The seeds' navigate timeout (Maps_timeout): navigate that has gone this many steps without getting closer to
    # its aim than before fails its branch (0: never). Counted from the last progress, not from the sub-goal's
    # start, because a long way is no failure; the shortest stall that cost nothing on the ordinary dev split
    # (docs/BENCHMARKS.md, "Why the defaults").
    navigate_timeout: int = 10
    # Token budget of the plan prompt (system, task and context; the model's window is inference.n_ctx):
    # the context is cut from its lowest priority up (oldest moves first) to fit. Prompt decoding dominates the
    # call, and on the ordinary dev tasks this budget flew the same flights as a larger one in less time a call
    # (docs/BENCHMARKS.md, "Why the defaults").
    llm_prompt_tokens: int = 640
    # Instruction reader: "parser" (deterministic only) or "combined" (the parser first; where it cannot
    # settle the relations, the planner model in `inference` reads them under a schema built from the text,
    # validated against it; the parser's reading is kept where the model's fails). The model is loaded
    # only when a description needs it. See onboard/agent/instruction_reader.py.
    reader: Literal["parser", "combined"] = "combined"
    # Long-term plan (navigate -> search -> locate); false: one navigate sub-goal for the whole task.
    use_plan: bool = True
    # The plan's search sub-goal (sweep the described region not yet looked at, then round the estimate);
    # false: navigate hands straight over to locate. Kept because the public set falls without it
    # (the ablation in docs/BENCHMARKS.md).
    use_search_subgoal: bool = True
    # Strategy-tree reflections (error-threshold controller, loop breaking) steer the moves.
    use_reflection: bool = True
    # Reflections are kept in the memory file, and a mission starts with the ones earlier flights wrote for
    # similar tasks (cosine of the instructions >= memory.similarity_threshold); false: every flight starts empty.
    use_persistent_reflections: bool = True
    # When the mission ends the planner model (if loaded) analyses it: the outcome, the step whose decision
    # decided it, why, and the plan for next time (AnalysisOutput), on a thread after the mission; it goes into
    # the reflections and the memory file. false, no model, or a failed answer: the rule-based one sentence.
    use_mission_analysis: bool = True
    # Seconds the end of a flight (after landing) waits for the model's mission analysis before the
    # rule-based one stands.
    mission_analysis_deadline_s: float = 30.0
    # Place-anchor memory (visited places, ABABA/STUCK hints) steers the moves.
    use_anchors: bool = True
    # Run perception every N steps (1 = every step; the design's perception interval).
    perceive_every_steps: int = 1
    # Declare arrival when the goal's name is read this close (metres).
    arrive_within_m: float = 45.0
    # Switch from navigate to search when the target estimate is this close (metres).
    search_radius_m: float = 60.0
    # A goal estimate that moves further than this from where the search started sends
    # the plan back to navigate (metres): the working memory re-evaluated the target.
    replan_jump_m: float = 150.0
    # Without a distance ("east of X"), a ray's point is assumed this far out (metres).
    ray_default_m: float = 150.0
    # A lone ray's point ("west of X", no distance) moves out by ray_default_m each time the search has looked
    # at most of the ground round it without reading the goal (ray_extend_unseen_share), up to this far from
    # its landmark (metres; ray_default_m: never). People say "west of X" of places a few hundred metres away.
    ray_max_m: float = 600.0
    # A lone ray's point moves out once no more than this share of the ground round it is left unlooked at
    # (0: only when all of it was; the last of it often lies mid-block, a long way round by the streets). Chosen
    # on the ordinary dev split (docs/BENCHMARKS.md, "Why the defaults").
    ray_extend_unseen_share: float = 0.25
    # Landmark fixes kept per landmark for the robust position (most recent).
    fixes_per_landmark: int = 40
    # A fix further than this many robust spreads (MAD) from the median is an outlier.
    outlier_mads: float = 3.0
    # Floor of the outlier gate (metres): fixes this close to the median are always kept.
    outlier_floor_m: float = 60.0
    # With no target estimate yet, explore towards the centroid of all landmarks seen
    # (prominent landmarks cluster), else this far along the current heading (metres).
    explore_reach_m: float = 500.0
    # Cost (metres) added per earlier visit of a waypoint.
    revisit_penalty_m: float = 60.0
    # Cost (metres) per degree between a move's bearing and the bearing to the target.
    bearing_weight_m_per_deg: float = 0.3
    # Search weights closeness to the estimate this much more than the route length.
    search_closeness_weight: float = 2.0
    # Error-threshold controller: this many FAILURE/INEFFECTIVE moves in a row trigger a reflection.
    max_consecutive_failures: int = 4
    # A move must bring the target this much closer (metres) to count as SUCCESS.
    min_progress_m: float = 10.0
    # Steps a reflection's avoid list stays in force.
    reflection_ttl_steps: int = 8
    # Cost (metres) of moving to a waypoint a reflection or an ABABA hint says to avoid.
    avoid_penalty_m: float = 400.0
    # A retrieved past plan whose task instruction is at least this similar (cosine) and which read
    # the goal's name seeds the goal position as a prior (high-confidence experience reuse).
    experience_reuse_similarity: float = 0.9
    # Live landmark fixes that put the goal further than this from the prior drop it (metres).
    prior_conflict_m: float = 250.0
    # In a fleet: the least spread given to a landmark another vehicle placed (metres); its position went
    # through that vehicle's odometry and home as well as its sightings. Not tuned: a city block's half.
    fleet_spread_floor_m: float = 25.0
    # Look over the roofs: where the vehicle offers it (the observation names a ceiling), climb at the
    # waypoint, turn a full circle and fly on up there, sighting landmarks over the blocks, while no landmark of
    # the description has been placed; come back down to cruise to read names (`come_down_within_m`). false:
    # never (ablation `geometric-no-look-up`). `aerie fly` offers it up to the safety envelope's altitude
    # ceiling less 2 m and flies it (climb, turn, the moves up there, the come-down).
    use_look_up: bool = True
    # Look-up altitude (metres above take-off); never above the ceiling the observation names. Higher sees
    # more landmarks over the blocks but pays more vertical path; climbing on the way made the vertical legs
    # cheaper and moved the best altitude up. Chosen on the dev and dev2 splits with the public set as the
    # floor (docs/BENCHMARKS.md, "Why the defaults").
    look_up_alt_m: float = 100.0
    # Climb for a look-up on the way to the waypoint navigation would fly to next (one sloped leg, the turn
    # there) instead of straight up here and then the move; the view from up there is then the next
    # waypoint's, one move later. false: straight up here. (The come-down is always flown on the way where the
    # expert moves on: `looks.come_down`.)
    look_up_on_the_way: bool = True
    # Fly a look-up's climb, and its come-down, over this many moves on the way (equal parts of the height):
    # two sloped legs of half the height are shorter than one of the whole; the climb goes on while a described
    # landmark is unplaced, the rest of the come-down is the next step's. 1: one leg each. Chosen on the dev
    # and dev2 splits (docs/BENCHMARKS.md, "Why the defaults").
    vertical_legs: int = 2
    # Look up only after this many steps without a sighting of the description's landmarks (0: at take-off).
    # With the drone flying on up there one climb serves the whole exploration, so it climbs at take-off; later
    # triggers cost the public set's SPL (docs/BENCHMARKS.md, "Why the defaults").
    look_up_after_steps: int = 0
    # Flying over the roofs, come back down to cruise once a landmark of the description is placed and the goal
    # estimate is within this distance (metres; looks.come_down_due). 0 would come down at once on the first
    # fix, which from far off is noisy: staying up re-sights the landmark on the way (docs/BENCHMARKS.md,
    # "Why the defaults").
    come_down_within_m: float = 250.0
    # At most this many look-ups per mission (refused ones count too).
    max_look_ups: int = 3
    # Never look up within this distance (metres) of a place looked from over the roofs (a look-up's, or any
    # waypoint flown up there since): the view would be the same. The
    # landmarks seen from the streets round a look-up this close showed none of the description's: their
    # centroid is then no longer a place to explore towards (exploring.centroid_spent).
    look_up_spacing_m: float = 250.0
    # After this many look-ups that did not show the description's landmarks, explore towards the landmark
    # seen farthest from every place looked over (0: never; until then towards the landmarks seen from the
    # streets, then outward). After one look-up the public set's centre-clustered landmarks were lost; chosen
    # on the ordinary dev split with the public set as the floor (docs/BENCHMARKS.md, "Why the defaults").
    explore_frontier_after_look_ups: int = 2
    # Look low: where the vehicle offers it (the observation names a floor: it reads names with its camera),
    # descend at the waypoint to this altitude (metres above take-off; never below the floor), turn a full
    # circle reading the shop fronts and come back to cruise, while searching for a goal not read yet (0:
    # never). From cruise a camera resolves few shop signs; from low down far more goals' signs are within
    # reach (`aerie bench reading --goals`; figures in docs/BENCHMARKS.md).
    look_low_alt_m: float = 12.0
    # Never look low within this distance (metres) of an earlier look-low: about one waypoint's spacing.
    look_low_spacing_m: float = 40.0
    # At most this many look-lows per mission (refused ones count too).
    max_look_lows: int = 12
    # Onboard map (`GraphAgent.reset(..., map_knowledge=...)`): its landmark positions seed the working memory
    # and its corridors are routed on. false: a given map is ignored (the agent flies as without one).
    use_map: bool = True
    # A map landmark whose live fixes (their robust position) lie further than this from the map's position
    # is overruled: the map entry is dropped and the live fixes used (metres). Stale maps in the benchmark
    # displace landmarks by 100-300 m; perception under `prep` puts one fix tens of metres off.
    map_overrule_m: float = 100.0
    # Live fixes a map landmark needs before they can overrule it (one fix may be a false detection).
    map_overrule_min_fixes: int = 3
    # The overrule gate grows where the live fixes scatter: at least this many standard errors of their
    # median (from their own robust spread), so a few noisy distant fixes do not overrule a good map while
    # consistent ones overrule a wrong one at once.
    map_overrule_spreads: float = 2.0
    # A map landmark never seen although the drone looked from this close to its map position (at cruise)
    # is taken as gone and dropped (metres; from the Helsinki world's corridors every landmark within 50 m
    # of a waypoint is in line of sight).
    map_absent_within_m: float = 50.0
    # A move on offer is matched to the map waypoint nearest its end point only within this distance
    # (metres; under half the 40 m minimum corridor spacing, so never to the waypoint next to it).
    map_snap_m: float = 15.0
    # With a map the described region is known before take-off: the route heads for the unflown waypoints
    # that can read names in the part of it not looked at yet, each costed by its route plus this weight x its
    # distance to the estimate (0: nearest lookout first, a sweep from the region's near edge; 2: its middle first).
    map_sweep_closeness: float = 0.5
    # With a map, where the description gives no region ("between"), the search sweeps the ground within this
    # distance of the estimate, nearest the estimate first (metres).
    map_search_disc_m: float = 200.0
