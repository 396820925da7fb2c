"""Our agents as PettingZoo policies: PettingZoo's API test passes on the environments they play, they play full
games there legally in both seats, and what they win there is their exact value -- played by a PettingZoo policy,
or by a match of ``pettingzoo:leduc_holdem_v4`` in PettingZoo's env."""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import adapters
import cfr_agents
from adapters.inputs import InputError
from cfr_agents.tree import load_tree
from eval.match import Agents, MatchSpec, play_match
from tests.support import assert_within_standard_errors

pytest.importorskip("pettingzoo")
pyspiel = pytest.importorskip("pyspiel")
from pettingzoo.classic import leduc_holdem_v4, texas_holdem_v4  # noqa: E402
from pettingzoo.test import api_test  # noqa: E402
from shimmy import OpenSpielCompatibilityV0  # noqa: E402

from eval.pettingzoo import PettingZooPolicy, pettingzoo_game  # noqa: E402

PETTINGZOO_LEDUC = "pettingzoo:leduc_holdem_v4"

ENVIRONMENTS: dict[str, Callable[[], Any]] = {
    "leduc_holdem_v4": leduc_holdem_v4.env,
    "texas_holdem_v4": texas_holdem_v4.env,
    "shimmy-leduc_poker": lambda: OpenSpielCompatibilityV0(env=pyspiel.load_game("leduc_poker")),
}


def play(env: Any, policy: PettingZooPolicy, games: int, seed: int) -> list[float]:
    """``games`` full games of ``env``, ``policy`` in seat ``g % 2`` of game ``g`` and a uniform choice among the
    masked actions in the other; ``policy``'s reward in each."""
    rng = np.random.default_rng(seed)
    rewards = []
    for game in range(games):
        env.reset(seed=seed + game)
        seat = env.possible_agents[game % 2]
        for name in env.agent_iter():
            observation, reward, termination, truncation, info = env.last()
            if termination or truncation:
                if name == seat:
                    rewards.append(float(reward))
                env.step(None)
                continue
            if name == seat:
                env.step(policy(observation, name, info))
            else:
                mask = (observation if isinstance(observation, dict) else info)["action_mask"]
                env.step(int(rng.choice(np.flatnonzero(mask))))
    return rewards


def test_shimmy_cuts_openspiel_poker_short_and_pays_player_1_twice() -> None:
    """Shimmy 2.0.1's ``OpenSpielCompatibilityV0`` on OpenSpiel's Leduc, in random play: it truncates a game once
    its count of steps, the three chance events included, reaches the game's ``max_game_length()`` (8, which counts
    actions only), so a game still going after 5 actions ends there, unfinished, and pays nothing; and after a
    finished game, ``player_0``'s dead step adds the final rewards again to ``player_1``, whose ``env.last()`` then
    reports twice its return. What an agent wins there is not its value in the game (docs/pettingzoo.md). If this
    fails, Shimmy has changed: the value test below can play Shimmy's Leduc again."""
    env = ENVIRONMENTS["shimmy-leduc_poker"]()
    rng = np.random.default_rng(0)
    cut = finished = 0
    for game in range(100):
        env.reset(seed=game)
        last = {}
        for name in env.agent_iter():
            _, reward, termination, truncation, info = env.last()
            if termination or truncation:
                last[name] = float(reward)
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if not env.game_state.is_terminal():
            cut += 1
            assert len(env.game_state.history()) - 3 == 5 and last == {"player_0": 0.0, "player_1": 0.0}
            continue
        finished += 1
        first, second = env.game_state.returns()
        assert last == {"player_0": first, "player_1": 2 * second}
    assert cut > 5 and finished > 50


@pytest.mark.filterwarnings("ignore:Agent's m")  # Shimmy's observation tensors are unbounded
@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_pettingzoos_api_test_passes_on_every_environment_we_play(environment: str) -> None:
    api_test(ENVIRONMENTS[environment](), num_cycles=200)


@pytest.mark.parametrize(
    ("environment", "agent"),
    [
        ("leduc_holdem_v4", "rlcard-rule-v1"),
        ("leduc_holdem_v4", "rlcard-pretrained-cfr"),
        ("texas_holdem_v4", "rlcard-limit-rule-v1"),
        ("texas_holdem_v4", "always-raise"),
        pytest.param(
            "texas_holdem_v4",
            "rlcard-dqn",
            marks=pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the shipped DQN needs torch"),
        ),
        ("shimmy-leduc_poker", "openspiel-cfr+:20"),
    ],
)
def test_an_agent_plays_full_games_in_both_seats(environment: str, agent: str) -> None:
    """Every answer is a legal action (the policy checks it against the state and the mask), every game ends, and
    the policy's rewards are the game's (a game a policy ended with an illegal move would pay it -1 with the other
    seat 0; a zero-sum game pays them opposite amounts)."""
    env = ENVIRONMENTS[environment]()
    policy = PettingZooPolicy(agent, env, np.random.default_rng(0))
    rewards = play(env, policy, 60, seed=1)
    assert len(rewards) == 60
    assert all(math.isfinite(reward) for reward in rewards)


def dcfr_against_random(game_id: str, tmp_path: Path) -> tuple[Path, float]:
    """A DCFR policy of ``game_id`` after 100 iterations, saved in ``tmp_path``, and its exact value against uniform
    play over the legal actions (``random``), over both seats."""
    solver = cfr_agents.make_solver(load_tree(game_id), "dcfr")
    solver.run(100)
    path = tmp_path / "dcfr.json"
    solver.average_policy().save(path)
    exact = Agents().exact((str(path), "random"), game_id)
    assert not isinstance(exact, str), exact
    return path, exact.value


def test_what_an_agent_wins_in_pettingzoo_is_its_exact_value(tmp_path: Path) -> None:
    """A DCFR policy against uniform play over the mask in ``leduc_holdem_v4``: the mean of 3,000 games, seats
    alternating, lies within 4 standard errors of the exact value over both seats. (Not under Shimmy, whose
    payoffs are not the game's: :func:`test_shimmy_cuts_openspiel_poker_short_and_pays_player_1_twice`.)"""
    path, exact = dcfr_against_random("rlcard:leduc-holdem", tmp_path)
    env = ENVIRONMENTS["leduc_holdem_v4"]()
    assert pettingzoo_game(env) == "rlcard:leduc-holdem"
    rewards = np.array(play(env, PettingZooPolicy(str(path), env, np.random.default_rng(2)), 3_000, seed=3))
    error = rewards.std(ddof=1) / math.sqrt(rewards.size)
    assert abs(rewards.mean() - exact) <= 4 * error, (rewards.mean(), exact, error)


def test_a_match_of_the_pettingzoo_game_is_played_in_its_environment_at_its_exact_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pettingzoo:leduc_holdem_v4``: a match of a DCFR policy of that game against ``random`` plays its 3,000 hands
    in PettingZoo's env (every step is the env's), and its mean lies within 4 standard errors of the exact value on
    the game's compiled tree."""
    path, exact = dcfr_against_random(PETTINGZOO_LEDUC, tmp_path)
    steps = 0
    step = leduc_holdem_v4.raw_env.step

    def counted(env: Any, action: int | None) -> None:
        nonlocal steps
        steps += 1
        step(env, action)

    monkeypatch.setattr(leduc_holdem_v4.raw_env, "step", counted)
    report = play_match(MatchSpec(PETTINGZOO_LEDUC, (str(path), "random"), 3_000, seed=3))
    assert steps > 3 * 3_000  # at least one action and two dead steps a hand
    assert report.exact == pytest.approx(exact, abs=1e-12)
    assert_within_standard_errors(report.mean, exact, report.standard_error)


def test_an_agent_of_another_game_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "kuhn.json"
    cfr_agents.Policy.uniform(cfr_agents.compile_tree(adapters.load_game("rlcard:kuhn-poker"))).save(path)
    with pytest.raises(InputError) as refused:
        PettingZooPolicy(str(path), leduc_holdem_v4.env(), np.random.default_rng(0))
    assert "\n" not in str(refused.value) and "rlcard:leduc-holdem" in str(refused.value)


def test_an_environment_we_do_not_play_is_refused_in_one_line() -> None:
    from pettingzoo.classic import tictactoe_v3

    with pytest.raises(InputError, match="PettingZoo policies play leduc_holdem_v4, texas_holdem_v4"):
        PettingZooPolicy("random", tictactoe_v3.env(), np.random.default_rng(0))
