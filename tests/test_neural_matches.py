"""A neural model in every command: one strategy, computed once, gives one exact value in its sidecar,
``exploitability``, ``match`` and ``tournament`` (whatever torch's thread count), and every answer it plays
is a row of that strategy. A match asks an agent whose probabilities depend on its infoset alone once per
infoset, and draws the same actions from the same streams as when it asks at every decision."""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel
import pytest
from open_spiel.python.policy import UniformRandomPolicy

import cfr_agents.neural_policy
from cfr_agents import make_solver
from cfr_agents.neural_policy import NeuralPolicy
from eval.agents import Agent, InfosetMemo, as_agent
from eval.environments import MatchResult, play_openspiel_match
from eval.match import MatchSpec, play_match
from eval.opponents import load_opponent
from tests.support import game, run_cli, tree

torch = pytest.importorskip("torch")

KUHN = "openspiel:kuhn_poker"


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small SD-CFR model of Kuhn, trained by ``cfr-agents train`` (its sidecar scored at save time)."""
    out = tmp_path_factory.mktemp("model") / "sd-cfr.json"
    argv = ["train", "--game", KUHN, "--algo", "sd-cfr", "--preset", "fast", "--iterations", "4"]
    status, _, err = run_cli([*argv, "--traversals", "200", "--out", str(out)])
    assert status == 0, err
    return out


@contextlib.contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def cli_json(argv: list[str]) -> Any:
    status, printed, err = run_cli(argv)
    assert status == 0, err
    return json.loads(printed)


def test_one_exact_value_per_model_in_every_command(model_file: Path, tmp_path: Path) -> None:
    """Training scores the sidecar with torch on one thread and a tournament's worker plays on one; here
    ``exploitability`` and ``match`` run with two. Every NashConv and every exact value is the same float."""
    sidecar = json.loads(model_file.read_text())
    with torch_threads(2):
        scored = cli_json(["exploitability", str(model_file), "--json"])
        match = cli_json(["match", str(model_file), "random", "--hands", "4", "--json"])
    out = tmp_path / "tournament"
    argv = ["tournament", "--game", KUHN, str(model_file), "random", "--hands", "4", "--workers", "1"]
    status, _, err = run_cli([*argv, "--out", str(out), "--quiet"])
    assert status == 0, err
    results = json.loads((out / "results.json").read_text())
    (in_tournament,) = (score["nash_conv"] for score in results["exploitability"] if score["agent"] == str(model_file))
    (pairing,) = results["matches"]
    assert pairing["agents"] == match["agents"]
    assert sidecar["nash_conv"] == scored["nash_conv"] == in_tournament
    assert match["exact"] == pairing["exact"]
    assert match["exact_seat_values"] == pairing["exact_seat_values"]


def test_every_answer_of_a_model_is_a_row_of_its_one_strategy(model_file: Path) -> None:
    """What a model plays at an infoset -- asked alone, by key or through its OpenSpiel policy -- is, bit for
    bit, that infoset's row of the strategy it is scored by."""
    model = load_opponent(str(model_file)).agent.raw
    assert isinstance(model, NeuralPolicy)
    compiled = tree(KUHN)
    policy = model.openspiel_policy()
    states = [pyspiel.load_game("kuhn_poker").new_initial_state()]
    asked = 0
    while states:
        state = states.pop()
        if state.is_terminal():
            continue
        if not state.is_chance_node():
            row = compiled.infoset_keys.index(state.information_state_string())
            by_key = model.action_probabilities(compiled.infoset_keys[row])
            assert list(by_key.values()) == model.strategy_on(compiled)[row, : len(by_key)].tolist()
            assert policy.action_probabilities(state) == by_key
            asked += 1
        states.extend(state.child(action) for action in state.legal_actions())
    assert asked == 24  # the 12 infosets, each at its two histories


def play(agents: tuple[Any, Any], pairs: int) -> tuple[MatchResult, list[Any]]:
    """A Kuhn match on pyspiel states, and the states of its three generators afterwards."""
    rngs = (np.random.default_rng(1), np.random.default_rng(2))
    deals = np.random.default_rng(0)
    result = play_openspiel_match(KUHN, agents[0], agents[1], pairs, deals, rngs)
    return result, [rng.bit_generator.state for rng in (deals, *rngs)]


class CountingPolicy:
    """An OpenSpiel policy that counts how often it is asked at each information state."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.asked: Counter[str] = Counter()

    def action_probabilities(self, state: Any, player_id: int | None = None) -> dict[int, float]:
        self.asked[state.information_state_string()] += 1
        return dict(self.policy.action_probabilities(state, player_id))


def test_a_match_asks_infoset_only_agents_once_per_infoset_and_draws_the_same_actions(model_file: Path) -> None:
    """The same seeds give the same match, generator for generator, whether each agent is asked at every
    decision or once per infoset; the remembered agents were asked once per infoset."""
    solver = make_solver(tree(KUHN), "dcfr")
    solver.run(20)
    kinds: list[Agent] = [
        load_opponent(str(model_file)).agent,
        as_agent(solver.average_policy()),
        as_agent(UniformRandomPolicy(pyspiel.load_game("kuhn_poker"))),
    ]
    assert all(agent.infoset_only for agent in kinds)
    for first, second in ((kinds[0], kinds[2]), (kinds[1], kinds[0])):
        every_decision = play((first.openspiel_player(), second.openspiel_player()), 300)
        counted = (CountingPolicy(first.openspiel_player()), CountingPolicy(second.openspiel_player()))
        once = play((InfosetMemo(counted[0]), InfosetMemo(counted[1])), 300)
        assert once == every_decision
        assert all(isinstance(agent.match_policy(), InfosetMemo) for agent in (first, second))
        for policy in counted:
            assert policy.asked and set(policy.asked.values()) == {1}


def test_agents_that_may_keep_state_are_asked_at_every_decision() -> None:
    from rlcard.agents import RandomAgent

    from eval.opponents.openspiel_solvers import solve

    average, _ = solve("openspiel-cfr", game(KUHN), 2)
    for agent in (as_agent(average), as_agent(RandomAgent(num_actions=2))):
        assert not agent.infoset_only
    assert as_agent(average).match_policy() is average


def test_a_20000_hand_match_of_a_model_takes_seconds_and_runs_each_network_once_per_infoset(
    model_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    forward = cfr_agents.neural_policy._forward
    rows: Counter[int] = Counter()  # rows each network was evaluated on, by network

    def counting_forward(layers: Any, inputs: Any) -> Any:
        rows[id(layers)] += len(inputs)
        return forward(layers, inputs)

    answer = NeuralPolicy.action_probabilities
    asked: Counter[str] = Counter()

    def counting_answer(self: NeuralPolicy, key: str) -> Any:
        asked[key] += 1
        return answer(self, key)

    monkeypatch.setattr(cfr_agents.neural_policy, "_forward", counting_forward)
    monkeypatch.setattr(NeuralPolicy, "action_probabilities", counting_answer)
    started = time.perf_counter()
    report = play_match(MatchSpec(KUHN, (str(model_file), "random"), 20_000, 0))
    seconds = time.perf_counter() - started
    compiled = tree(KUHN)
    per_player = max(int((compiled.infoset_player == player).sum()) for player in range(2))
    assert seconds < 60
    assert report.hands == 20_000 and report.exact is not None
    assert rows and max(rows.values()) <= per_player  # each network at most once per infoset of its player
    assert asked and set(asked.values()) == {1} and len(asked) <= compiled.num_infosets
    assert abs(report.mean - report.exact) <= 4 * report.standard_error


SHIPPED = sorted((Path(__file__).resolve().parent.parent / "eval" / "opponents" / "models").glob("*-cfr_*.json"))


@pytest.mark.parametrize("sidecar", [path for path in SHIPPED if json.loads(path.read_text())["kind"] != "rlcard-cfr"])
def test_a_shipped_model_s_sidecar_records_the_value_exploitability_gives(sidecar: Path) -> None:
    """The NashConv a shipped Deep CFR or SD-CFR sidecar records is what ``exploitability`` computes now: bit for
    bit on the machine that scored it, and within float64 rounding on another CPU (NumPy's loops may sum in
    another order there)."""
    status, printed, err = run_cli(["exploitability", str(sidecar), "--json"])
    assert status == 0, err
    assert json.loads(printed)["nash_conv"] == pytest.approx(json.loads(sidecar.read_text())["nash_conv"], rel=1e-12)
