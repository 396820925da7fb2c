"""The exact strategy of any agent: RLCard's state dicts, OpenSpiel policies, refusals, RLCard's CFR
on NumPy 2, the exported pretrained model, and the best response as a playable policy."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel
import pytest
import rlcard
from open_spiel.python.algorithms import expected_game_score
from rlcard.agents import RandomAgent
from rlcard.agents.cfr_agent import CFRAgent
from rlcard.utils.utils import remove_illegal

import cfr_agents
from adapters.inputs import InputError
from adapters.rlcard import RLCardGame, RLCardState
from cfr_agents.policy import Policy, load_policy
from eval import (
    AgentQueryError,
    best_response_policy,
    exact_head_to_head,
    exploitability_of_strategy,
    strategy_of,
)
from eval.agents import infoset_states, rlcard_env_state
from eval.opponents import rlcard_builtin
from eval.opponents.provenance import Provenance, library_versions, provenance_of
from eval.opponents.table import distinct_observations
from tests.support import tree

LEDUC = "rlcard:leduc-holdem"


@functools.cache
def pretrained() -> rlcard_builtin.NumPy2CFRAgent:
    return rlcard_builtin.pretrained_cfr()


def env_states(game_id: str) -> list[tuple[RLCardState, dict[str, Any]]]:
    """Each infoset's adapter state and the state dict built for it."""
    states = infoset_states(tree(game_id))
    assert isinstance(states.game, RLCardGame)
    env = rlcard.make(states.game.spec.env_id)
    return [(s, rlcard_env_state(env, s)) for s in states.states if isinstance(s, RLCardState)]


class Recorder:
    """Plays uniformly at random with its own generator and keeps every state RLCard's env hands it."""

    use_raw = False

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.seen: list[dict[str, Any]] = []

    def step(self, state: dict[str, Any]) -> int:
        self.seen.append({**state, "action_record": list(state["action_record"])})
        return int(self.rng.choice(list(state["legal_actions"])))

    def eval_step(self, state: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return self.step(state), {}


@pytest.mark.parametrize("game_id", [LEDUC, "rlcard:kuhn-poker"])
def test_state_dicts_are_the_ones_rlcards_env_hands_an_agent(game_id: str) -> None:
    game = infoset_states(tree(game_id)).game
    assert isinstance(game, RLCardGame)
    ours = {game.key_from_env_state(state): state for _, state in env_states(game_id)}
    env = rlcard.make(game.spec.env_id, config={"seed": 5})
    recorder = Recorder(6)
    env.set_agents([recorder, recorder])
    for _ in range(300):
        env.run(is_training=False)
    assert len(recorder.seen) > 300
    for seen in recorder.seen:
        built = ours[game.key_from_env_state(seen)]
        assert np.array_equal(built["obs"], seen["obs"])
        assert list(built["legal_actions"]) == list(seen["legal_actions"])
        assert built["raw_obs"] == seen["raw_obs"]
        assert built["raw_legal_actions"] == seen["raw_legal_actions"]
        assert built["action_record"] == seen["action_record"]


def test_rlcard_random_agent_is_uniform_and_global_rng_is_untouched() -> None:
    np.random.seed(3)
    expected_next = np.random.random()
    np.random.seed(3)
    strategy = strategy_of(RandomAgent(num_actions=4), tree(LEDUC))
    assert np.random.random() == expected_next
    assert np.array_equal(strategy, tree(LEDUC).uniform_strategy())


@pytest.mark.parametrize(
    ("game_id", "face"),
    [
        ("openspiel:leduc_poker", "openspiel"),
        ("rlcard:kuhn-poker", "openspiel"),
        ("rlcard:kuhn-poker", "rlcard"),
        ("rlcard:leduc-holdem", "rlcard"),
    ],
)
def test_policies_round_trip_through_rlcard_and_openspiel_faces(game_id: str, face: str) -> None:
    compiled = tree(game_id)
    solver = cfr_agents.make_solver(compiled, "cfr+")
    solver.run(20)
    policy = solver.average_policy()
    agent = policy.openspiel_policy() if face == "openspiel" else policy.rlcard_agent(seed=0)
    assert np.allclose(strategy_of(agent, compiled), policy.strategy_on(compiled), atol=1e-12)


def test_openspiel_solver_policy_has_openspiels_nash_conv() -> None:
    game = pyspiel.load_game("leduc_poker")
    solver = pyspiel.ExternalSamplingMCCFRSolver(game, seed=4)
    for _ in range(2000):
        solver.run_iteration()
    average = solver.average_policy()
    compiled = tree("openspiel:leduc_poker")
    ours = exploitability_of_strategy(compiled, strategy_of(average, compiled))
    assert ours.nash_conv == pytest.approx(pyspiel.nash_conv(game, average, True), abs=1e-9)


class Counter:
    """Stateful: its answer depends on how often it was asked."""

    use_raw = False

    def __init__(self) -> None:
        self.calls = 0

    def eval_step(self, state: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.calls += 1
        legal = list(state["legal_actions"])
        return legal[self.calls % len(legal)], {}

    def step(self, state: dict[str, Any]) -> int:
        return self.eval_step(state)[0]


class SilentRandom(Counter):
    """Samples without reporting probabilities."""

    def eval_step(self, state: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return int(np.random.choice(list(state["legal_actions"]))), {}


@pytest.mark.parametrize("agent", [Counter(), SilentRandom()], ids=["stateful", "random-without-probs"])
def test_an_agent_that_answers_differently_is_refused(agent: Any) -> None:
    with pytest.raises(AgentQueryError, match="differently when asked again"):
        strategy_of(agent, tree(LEDUC))


def test_an_agent_for_another_toolkit_or_of_no_known_kind_is_refused() -> None:
    with pytest.raises(InputError, match="plays rlcard: games"):
        strategy_of(RandomAgent(num_actions=3), tree("openspiel:leduc_poker"))
    with pytest.raises(InputError, match="cannot query"):
        strategy_of(object(), tree(LEDUC))


def test_rlcards_cfr_agent_fails_on_numpy_2_and_ours_reads_the_same_table() -> None:
    original = CFRAgent(rlcard.make("leduc-holdem"), model_path=rlcard_builtin.PRETRAINED_CFR)
    original.load()
    _, state = env_states(LEDUC)[0]
    with pytest.raises(AttributeError, match="tostring"):
        original.eval_step(state)
    fixed = pretrained()
    for _, state in env_states(LEDUC):
        legal = list(state["legal_actions"])
        expected = remove_illegal(original.average_policy[state["obs"].tobytes()], legal)
        _, info = fixed.eval_step(state)
        assert info["probs"] == {state["raw_legal_actions"][i]: float(expected[a]) for i, a in enumerate(legal)}


def test_lossy_observations_merge_infosets_and_agents_play_one_row_per_observation() -> None:
    compiled = tree(LEDUC)
    assert distinct_observations(compiled) == len(pretrained().average_policy) == 84
    strategy = strategy_of(pretrained(), compiled)
    rows: dict[bytes, np.ndarray[Any, Any]] = {}
    for state, built in env_states(LEDUC):
        row = strategy[compiled.index[state.information_state_key(state.current_player())]]
        previous = rows.setdefault(built["obs"].tobytes() + bytes(list(built["legal_actions"])), row)
        assert np.array_equal(previous, row)


def test_exported_pretrained_strategy_plays_like_the_original_at_every_infoset(tmp_path: Path) -> None:
    compiled = tree(LEDUC)
    exported = Policy.from_strategy(
        compiled, strategy_of(pretrained(), compiled), algorithm="rlcard-pretrained-cfr", parameters={}, iterations=0
    )
    exported.save(tmp_path / "pretrained.json")
    agent = load_policy(tmp_path / "pretrained.json").rlcard_agent(seed=0)
    for _, state in env_states(LEDUC):
        theirs = pretrained().eval_step(state)[1]["probs"]
        ours = agent.eval_step(state)[1]["probs"]
        assert ours.keys() == theirs.keys()
        assert all(abs(ours[a] - theirs[a]) <= 1e-12 for a in theirs)


def test_rlcard_cfr_trains_on_numpy_2_and_its_json_table_restores_bit_for_bit(tmp_path: Path) -> None:
    game = infoset_states(tree(LEDUC)).game
    assert isinstance(game, RLCardGame)
    trained = rlcard_builtin.train_cfr(game, 3, np.random.default_rng(1), "rlcard", lambda done, agent: False)
    again = rlcard_builtin.train_cfr(game, 3, np.random.default_rng(1), "rlcard", lambda done, agent: False).agent
    agent, settings, seconds = trained.agent, trained.hyperparameters, 1.0
    assert all(isinstance(key, bytes) and len(key) == 36 * 8 for key in agent.average_policy)
    assert agent.tables_json() == again.tables_json()
    measured = exploitability_of_strategy(tree(LEDUC), strategy_of(agent, tree(LEDUC)))
    provenance = Provenance(
        "rlcard-cfr",
        game.game_id,
        game.rules_fingerprint,
        game.units,
        None,
        3,
        1,
        settings,
        seconds,
        library_versions(),
        measured.nash_conv,
        measured.exploitability,
    )
    rlcard_builtin.save_cfr(tmp_path / "cfr.json", agent, provenance)
    import json

    data = json.loads((tmp_path / "cfr.json").read_text())
    read = provenance_of(data, str(tmp_path / "cfr.json"))
    assert read == provenance
    restored = rlcard_builtin.load_cfr(tmp_path / "cfr.json", data, read, game)
    for name in ("policy", "average_policy", "regrets"):
        table, back = getattr(agent, name), getattr(restored, name)
        assert table.keys() == back.keys()
        assert all(np.array_equal(table[k], back[k]) for k in table)
    assert np.array_equal(strategy_of(restored, tree(LEDUC)), strategy_of(agent, tree(LEDUC)))


@pytest.mark.parametrize(
    ("game_id", "make"),
    [
        (LEDUC, lambda: rlcard_builtin.RULE_AGENTS["rlcard-rule-v1"]()),
        (LEDUC, pretrained),
        ("openspiel:kuhn_poker", lambda: None),
        ("rlcard:kuhn-poker", lambda: RandomAgent(num_actions=2)),
        ("openspiel:leduc_poker", lambda: None),
    ],
    ids=["rule-v1", "pretrained-cfr", "kuhn-cfr", "rlcard-kuhn-random", "leduc-cfr"],
)
def test_best_response_is_pure_and_earns_the_best_response_value(game_id: str, make: Any) -> None:
    compiled = tree(game_id)
    agent = make()
    if agent is None:
        solver = cfr_agents.make_solver(compiled, "cfr")
        solver.run(30)
        agent = solver.average_policy()
    strategy = strategy_of(agent, compiled)
    response = best_response_policy(compiled, strategy, against="agent")
    pure = response.strategy_on(compiled)
    assert set(np.unique(pure)) <= {0.0, 1.0} and np.all(pure.sum(axis=1) == 1)
    best = exploitability_of_strategy(compiled, strategy).best_response_values
    assert exact_head_to_head(compiled, pure, strategy).seat_values == pytest.approx(best, abs=1e-12)
    if game_id == LEDUC:
        return  # OpenSpiel's policy_value on bridged RLCard Leduc takes ~10 s; matches check it in RLCard's env
    # OpenSpiel's policy_value of the two policies agrees.
    theirs = Policy.from_strategy(compiled, strategy, algorithm="agent", parameters={}, iterations=0).openspiel_policy()
    mine = response.openspiel_policy()
    root = mine.game.new_initial_state()
    assert expected_game_score.policy_value(root, [mine, theirs])[0] == pytest.approx(best[0], abs=1e-9)
    assert expected_game_score.policy_value(root, [theirs, mine])[1] == pytest.approx(best[1], abs=1e-9)
