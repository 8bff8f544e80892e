"""The onboard agent graph on the navigation benchmark: its names, its config, what it adds to a record.

The benchmark's episodes run the mission runner that flies (`onboard.mission.runner`), which
hands the agent its own `AgentObservation`s as `aerie fly` does: nothing is translated. The
agent's gazetteer is the world's landmark names (as the baselines get).

    aerie bench nav --agent geometric --perception prep
    aerie bench nav --agent llm --limit 5     # plan from SmolLM2 (llama.cpp), moves geometric
    aerie bench nav --agent vlm --limit 5     # navigate / search moves from the VLM (frame and both maps)

The `vlm` agent asks the VLM named by `inference.vlm_model` in config.yaml; with none there, the
tests' random-weight `tiny-vlm` (built if absent, `sim/tiny_vlm.py`), and the run says so: its
figures are the cost of asking a VLM at every navigate and search step, never a skill.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

from onboard.agent.agent import VARIANTS, GraphAgent, variant_config
from onboard.agent.settings import AgentConfig
from onboard.vocab.observation import AgentAction, AgentObservation

AERIE_AGENTS: tuple[str, ...] = (*VARIANTS, "llm", "vlm")
TEST_VLM = "tiny-vlm"  # what the vlm agent asks when config.yaml names no VLM: random weights, cost only
LLM_DEADLINE_S = 30.0  # a plan is asked once per episode; a busy 2-core CPU needs more than the 5 s default


class BenchAgent:
    """A `GraphAgent` on the benchmark: the mission runner drives it with its own observations (as `aerie fly`
    does), and this adds what the benchmark asks of an agent (its name, per-episode figures, maps).

    After `maps_to(folder, episode_id)` every step also writes the agent's landmark and
    semantic maps into `folder/semantic_images/` (`onboard.agent.map_render`; a few ms per step).
    """

    takes_agent_observation = True  # the runner hands it `AgentObservation`s, not the benchmark's contract

    def __init__(self, agent: GraphAgent):
        self.agent = agent
        self.name = agent.name
        self._maps: tuple[Path, str] | None = None
        self._map_knowledge = None

    def use_map(self, knowledge) -> None:
        """The onboard map (`MapKnowledge`, own frame) for the next episode; None: fly without one."""
        self._map_knowledge = knowledge

    def maps_to(self, folder: str | Path | None, episode_id: str = "") -> None:
        """Write the agent's maps at every step of the next episode into `folder` (None: stop)."""
        self._maps = None if folder is None else (Path(folder), episode_id)

    def reset(self, description: str, seed: int) -> None:
        self.agent.reset(description, seed, map_knowledge=self._map_knowledge)

    @property
    def reading(self):
        """The instruction as read: the runner says it back and refuses it as `aerie fly` does."""
        return self.agent.reading

    def record_extra(self) -> dict:
        """The episode's plan-model use, for its benchmark record: calls, their seconds, the plan version flown."""
        summary = self.agent.summary()
        reader = summary["instruction_reader"] or {}
        out = {"model_calls": summary["model_calls"], "model_s": summary["model_s"],
               "plan_version": summary["plan_version"], "reader_model_s": reader.get("model_s", 0.0),
               "llm_calls": summary["llm_calls"]}
        if "vlm_planner" in summary:
            out["vlm_planner"] = summary["vlm_planner"]
        if self.agent.reading is not None:
            from onboard.agent.understood import understand

            r = self.agent.reading
            u = understand(r)
            out["reading"] = {"reader": r.reader, "unsettled": r.unsettled, "model_errors": list(r.model_errors),
                              "understood": u.line(), "refused": u.refusal()}
        return out

    @property
    def sees_frames(self) -> bool:
        """Whether each step's camera frame should be rendered and handed in (`see_frame`): the vlm backend's."""
        return self.agent.vlm is not None

    def see_frame(self, frame) -> None:
        self.agent.see_frame(frame)

    def act(self, observation: AgentObservation) -> AgentAction:
        a = self.agent.act(observation)
        if self._maps is not None:
            from onboard.agent.map_render import write_maps

            write_maps(self.agent.state, *self._maps)
        return a


@functools.lru_cache(maxsize=1)
def _planner_model():
    """The planner model from the shipped config, loaded once per benchmark process."""
    from onboard.config import load_config
    from onboard.inference.planner_model import PlannerModel

    cfg = load_config("config.yaml").inference
    return PlannerModel.from_config(replace(cfg, call_deadline_s=max(cfg.call_deadline_s, LLM_DEADLINE_S)))


@functools.lru_cache(maxsize=1)
def vlm_asker():
    """The VLM from the shipped config (the test model when it names none), behind its asker, once per process;
    with what it is: (asker, {"model", "random_weights"})."""
    from onboard.config import load_config
    from onboard.inference.manifest import model_dir
    from onboard.inference.vlm_asker import VlmAsker

    cfg = load_config("config.yaml").inference
    if not cfg.vlm_model:
        from sim.tiny_vlm import build_tiny_vlm

        build_tiny_vlm(model_dir(cfg.model_dir))
        cfg = replace(cfg, vlm_model=TEST_VLM, vlm_mmproj="", vlm_chat_handler="MTMDChatHandler")
    asker = VlmAsker.from_config(replace(cfg, call_deadline_s=max(cfg.call_deadline_s, LLM_DEADLINE_S)))
    return asker, {"model": cfg.vlm_model, "random_weights": cfg.vlm_model == TEST_VLM}


def aerie_agent_config(name: str) -> AgentConfig:
    """The `AgentConfig` an Aerie agent name flies with (what `make_aerie_agent` builds it from)."""
    if name == "llm":
        # The benchmark waits for the plan in step 0: which step an asynchronous answer lands on depends
        # on the CPU's load, so the scores would change from run to run; the benchmark scores plans, and a
        # simulated step has no vehicle hovering while it waits.
        return replace(variant_config("geometric"), planner="llm", llm_plan_wait=True)
    if name == "vlm":  # waits for each answer, for the same reason as llm
        return replace(variant_config("geometric"), planner="vlm", vlm_plan_wait=True)
    return variant_config(name)


def make_aerie_agent(name: str, world, config: AgentConfig | None = None, experience_store=None,
                     reader: str = "combined") -> BenchAgent:
    """`name` is one of `AERIE_AGENTS`; the world gives only the landmark names (the gazetteer).

    `config` replaces the name's own (`aerie_agent_config(name)`; the ablation turns one switch of it
    off); `experience_store` is the vehicle's memory file (None: fly on empty memory, the plain benchmark).
    The plan model is loaded when the config's planner is `llm`, and for the instruction reader when `reader`
    is "combined" (the same model `aerie fly` asks where the parser cannot settle; loaded once per process).
    """
    from onboard.map.corridors import NODE_SPACING_M

    gazetteer, aliases = [lm.name for lm in world.landmarks], world.aliases()
    if reader not in ("parser", "combined"):
        raise ValueError(f"unknown reader {reader!r}; use 'combined' or 'parser'")
    cfg = replace(config or aerie_agent_config(name), reader=reader)
    model = _planner_model() if cfg.planner == "llm" else None
    generate = _planner_model().generate_json if reader == "combined" else None
    vlm = vlm_asker()[0] if cfg.planner == "vlm" else None
    return BenchAgent(GraphAgent(cfg, gazetteer, name=name, plan_model=model, experience_store=experience_store,
                                 step_spacing_m=NODE_SPACING_M, aliases=aliases, reader_generate=generate, vlm=vlm))


def geometric(world) -> BenchAgent:
    """`package.module:factory` form: `--agent sim.benchmark.aerie_agents:geometric`."""
    return make_aerie_agent("geometric", world)


def vlm_figures(records: list[dict]) -> dict | None:
    """The vlm agent's VLM use over the run: which model, calls per mission, seconds per call, answers' fate."""
    runs = [r["vlm_planner"] for r in records if "vlm_planner" in r]
    if not runs:
        return None
    total = {k: sum(v.get(k, 0) for v in runs) for k in ("asked", "answered", "adopted", "kept", "stale", "fallbacks",
                                                          "next_subtask", "busy", "no_frame")}
    seconds = sum(v.get("seconds", 0.0) for v in runs)
    what = vlm_asker()[1]
    return {**what, **total, "calls_per_episode": round(total["answered"] / len(runs), 2),
            "s_per_call": round(seconds / total["answered"], 3) if total["answered"] else None,
            "note": "random weights: these figures measure cost, not skill" if what["random_weights"] else ""}
