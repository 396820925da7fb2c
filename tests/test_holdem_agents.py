"""Public-tree strategies as agents: exact scores on the public tree equal to the compiled tree's, the batched agent
interface, exact head-to-head values, best responses that earn their value in OpenSpiel's universal_poker, and the
commands' routing and refusals on games that run on their public tree."""

from __future__ import annotations

import json
import time
from functools import cache
from pathlib import Path

import numpy as np
import pyspiel
import pytest
from open_spiel.python.policy import UniformRandomPolicy

from adapters import load_game
from adapters.games import canonical_game_id
from adapters.openspiel import PREFIX
from cfr_agents.policy import Policy
from cfr_agents.public_tree.engine import canonical_random_strategy, uniform_strategy
from cfr_agents.public_tree.strategy_file import PublicStrategy, load_strategy, save_strategy
from cfr_agents.public_tree.tree import PublicTree, build_public_tree
from cfr_agents.tree import CompiledTree, compile_tree
from eval import holdem
from eval.agents import as_agent
from eval.environments import play_openspiel_match
from eval.exploitability import exploitability_of_strategy, public_exploitability
from eval.head_to_head import exact_head_to_head
from tests.support import run_cli

FOURTEEN = (
    "openspiel:universal_poker(betting=limit,numPlayers=2,numRounds=2,blind=100 50,firstPlayer=2 1,numSuits=2,"
    "numRanks=7,numHoleCards=2,numBoardCards=0 1,raiseSize=100 100,maxRaises=3 3)"
)
"""A hold'em game of 14 cards: past the compiled tree's 12, so the commands run it on its public tree, and small
enough to do so in a second."""
ONE_RAISE = (
    "openspiel:universal_poker(betting=limit,numPlayers=2,numRounds=2,blind=100 50,firstPlayer=2 1,numSuits=2,"
    "numRanks=3,numHoleCards=2,numBoardCards=0 1,raiseSize=100 100,maxRaises=1 1)"
)
"""holdem-6 with at most one raise a round: OpenSpiel's Python NashConv walks its histories in a few seconds, a fifth
of the time holdem-6's three raises a round take it."""


@cache
def compiled(name: str) -> CompiledTree:
    return compile_tree(load_game(name))


@cache
def every_board(name: str) -> PublicTree:
    return build_public_tree(canonical_game_id(name).removeprefix(PREFIX), canonical=False)


def random_file(directory: Path, name: str, seed: int) -> Path:
    """A seeded random suit-canonical strategy of ``name`` saved as a strategy file; its ``.json`` path."""
    tree = holdem.game_tree(name)
    path = directory / f"{name.replace(':', '_')[:40]}-{seed}.json"
    strategy = canonical_random_strategy(tree, np.random.default_rng(seed))
    save_strategy(path, tree, strategy, algorithm="random", parameters={"seed": seed}, iterations=0)
    return path


def one_line_refusal(argv: list[str], message: str) -> None:
    run = run_cli(argv)
    assert (run.status, run.out) == (2, ""), run
    assert len(run.err.splitlines()) == 1 and run.err.startswith("cfr-agents: error: "), run.err
    assert message in run.err, run.err


def test_a_strategy_files_exploitability_on_the_compiled_tree_equals_the_public_trees(tmp_path: Path) -> None:
    """``exploitability FILE`` on holdem-8 scores the file on the compiled tree (each infoset found by its
    information-state string); the public tree's passes, on canonical boards and on every board, give the same."""
    path = random_file(tmp_path, "holdem-8", seed=1)
    run = run_cli(["exploitability", str(path), "--json"])
    assert run.status == 0, run.err
    report = json.loads(run.out)
    strategy = load_strategy(path)
    hands = holdem.hand_strategy(strategy)
    canonical = holdem.exploitability(strategy.tree, hands)
    every = holdem.exploitability(every_board("holdem-8"), hands)
    assert report["game"] == canonical_game_id("holdem-8") and report["units"] == "chips"
    assert report["nash_conv"] == pytest.approx(canonical.nash_conv, abs=1e-9)
    assert every.nash_conv == pytest.approx(canonical.nash_conv, abs=1e-9)
    assert report["best_response_values"] == pytest.approx(canonical.best_response_values, abs=1e-9)
    assert report["nash_conv_mbb"] == pytest.approx(report["nash_conv"] / 100 * 1000)  # big blind 100 chips
    assert report["exploitability"] == pytest.approx(report["nash_conv"] / 2)


def test_cross_check_scores_the_file_through_its_openspiel_policy(tmp_path: Path) -> None:
    path = random_file(tmp_path, ONE_RAISE, seed=2)
    run = run_cli(["exploitability", str(path), "--cross-check", "--json"])
    assert run.status == 0, run.err
    report = json.loads(run.out)
    assert report["agree"] is True and abs(report["difference"]) <= 1e-9
    assert report["openspiel_game_source"] == "native"


def test_the_state_by_state_adapter_equals_the_compiled_tree_on_every_board() -> None:
    """An OpenSpiel policy that is not suit-canonical (a random table of the compiled tree), asked at one
    ``pyspiel`` state of every information state, scored on a tree with every board: the compiled tree's NashConv
    and values against ``random``."""
    reference = compiled(canonical_game_id("holdem-6"))
    rng = np.random.default_rng(4)
    table = rng.random(reference.action_mask.shape) * reference.action_mask
    table /= table.sum(axis=1, keepdims=True)
    policy = Policy.from_strategy(reference, table, algorithm="random", parameters={}, iterations=0)
    tree = every_board("holdem-6")
    agent = holdem.hand_strategy(policy)
    assert isinstance(agent, holdem.StateHands) and not holdem.is_batched(agent)
    placed = holdem.strategy_array(tree, agent)
    scored = public_exploitability(tree, placed.strategy, placed.placement)
    assert scored.nash_conv == pytest.approx(exploitability_of_strategy(reference, table).nash_conv, abs=1e-9)
    uniform = holdem.strategy_array(tree, holdem.hand_strategy(UniformRandomPolicy(_pyspiel(tree))))
    ours = holdem.exact_head_to_head(tree, placed, uniform)
    theirs = exact_head_to_head(reference, table, reference.uniform_strategy())
    assert ours.seat_values == pytest.approx(theirs.seat_values, abs=1e-9)


def _pyspiel(tree: PublicTree) -> pyspiel.Game:
    return pyspiel.load_game(tree.game_string)


def test_random_and_a_strategy_file_answer_batched_as_they_answer_state_by_state(tmp_path: Path) -> None:
    """``random`` and a strategy file, batched, give the arrays that asking them state by state gives (on the
    hands the board leaves), on canonical boards and on every board."""
    strategy = load_strategy(random_file(tmp_path, "holdem-6", seed=5))
    uniform = UniformRandomPolicy(_pyspiel(strategy.tree))
    for tree in (strategy.tree, every_board("holdem-6")):
        for batched, per_state in (
            (holdem.hand_strategy(uniform), holdem.StateHands(uniform, "uniform")),
            (holdem.hand_strategy(strategy), holdem.StateHands(strategy.openspiel_policy(), "file")),
        ):
            assert holdem.is_batched(batched)
            for segment in range(0, tree.segments.count, 3):
                valid = (tree.masks & tree.segments.board_mask[segment]) == 0
                start, stop = tree.betting.ranges[tree.segments.range_index[segment]]
                for node in range(int(start), int(stop)):
                    if tree.node_offset[node] >= 0:
                        expected = per_state.probabilities(tree, segment, node)[:, valid]
                        assert np.allclose(batched.probabilities(tree, segment, node)[:, valid], expected, atol=1e-12)
    assert np.array_equal(
        holdem.strategy_array(strategy.tree, holdem.hand_strategy(uniform)).strategy, uniform_strategy(strategy.tree)
    )


def test_exact_head_to_head_equals_the_compiled_trees(tmp_path: Path) -> None:
    name = canonical_game_id("holdem-8")
    first, second = (load_strategy(random_file(tmp_path, "holdem-8", seed)) for seed in (6, 7))
    tree = first.tree
    ours = holdem.exact_head_to_head(
        tree,
        holdem.strategy_array(tree, holdem.hand_strategy(first)),
        holdem.strategy_array(tree, holdem.hand_strategy(second)),
    )
    reference = compiled(name)
    theirs = exact_head_to_head(reference, as_agent(first).strategy(reference), as_agent(second).strategy(reference))
    assert ours.seat_values == pytest.approx(theirs.seat_values, abs=1e-9)
    assert ours.value == pytest.approx(theirs.value, abs=1e-9) and abs(ours.value) > 1


def best_response_match(strategy: PublicStrategy, pairs: int, seed: int) -> tuple[float, float, float, float]:
    """The best response to ``strategy`` played against it in OpenSpiel's universal_poker, ``pairs`` duplicate
    pairs (both seats): (its exact value, the sampled mean, its standard error, seconds of play)."""
    response = holdem.best_response(strategy.tree, holdem.hand_strategy(strategy), against="agent")
    exact = holdem.exact_head_to_head(
        strategy.tree,
        holdem.strategy_array(strategy.tree, holdem.hand_strategy(response.strategy)),
        holdem.strategy_array(strategy.tree, holdem.hand_strategy(strategy)),
    )
    assert exact.seat_values == pytest.approx(response.values, rel=1e-9)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3)]
    started = time.perf_counter()
    played = play_openspiel_match(
        strategy.game_id,
        response.strategy.openspiel_policy(),
        strategy.openspiel_policy(),
        pairs,
        rngs[0],
        (rngs[1], rngs[2]),
    )
    return response.value, played.mean, played.standard_error, time.perf_counter() - started


def test_the_best_response_earns_its_exact_value_in_universal_poker(tmp_path: Path) -> None:
    strategy = load_strategy(random_file(tmp_path, "holdem-12", seed=8))
    exact, mean, error, _ = best_response_match(strategy, pairs=1500, seed=9)
    assert abs(mean - exact) <= 4 * error
    assert exact > 8 * error  # the test has the power to see a response that earns nothing


@pytest.mark.slow
def test_the_best_response_earns_its_exact_value_on_flop_holdem() -> None:
    """Flop Hold'em: the best response to a seeded random suit-canonical strategy, played in universal_poker."""
    tree = holdem.game_tree("fhp")
    strategy = PublicStrategy(
        game_id=tree.game_id,
        tree=tree,
        strategy=canonical_random_strategy(tree, np.random.default_rng(10)),
        algorithm="random",
        parameters={"seed": 10},
        iterations=0,
        header={},
    )
    pairs = 20_000
    exact, mean, error, seconds = best_response_match(strategy, pairs=pairs, seed=11)
    print(f"fhp: {2 * pairs:,} hands in {seconds:.1f} s; exact {exact:+.2f}, sampled {mean:+.2f} ± {error:.2f} chips")
    assert abs(mean - exact) <= 4 * error
    assert exact > 8 * error


def test_commands_on_a_game_past_twelve_cards_run_on_the_public_tree(tmp_path: Path) -> None:
    """A 14-card hold'em game: exploitability, exploit --p 1 (the best response, saved as a strategy file) and a
    match of that response against its agent, all exact on the public tree; mbb/hand divides by the big blind."""
    path = random_file(tmp_path, FOURTEEN, seed=12)
    strategy = load_strategy(path)
    scored = holdem.exploitability(strategy.tree, holdem.hand_strategy(strategy))
    run = run_cli(["exploitability", str(path), "--json"])
    assert run.status == 0, run.err
    report = json.loads(run.out)
    assert report["nash_conv"] == pytest.approx(scored.nash_conv, abs=1e-9)
    assert report["exploitability_mbb"] == pytest.approx(scored.exploitability / 100 * 1000)
    response = tmp_path / "response.npz"
    run = run_cli(["exploit", str(path), "--p", "1", "--out", str(response), "--json"])
    assert run.status == 0, run.err
    exploited = json.loads(run.out)
    assert exploited["seat_values"] == pytest.approx(scored.best_response_values, abs=1e-9)
    run = run_cli(["match", str(response), str(path), "--hands", "2000", "--seed", "3", "--json"])
    assert run.status == 0, run.err
    match = json.loads(run.out)
    assert match["exact"] == pytest.approx(sum(scored.best_response_values) / 2, abs=1e-9)
    assert match["exact_seat_values"] == pytest.approx(scored.best_response_values, abs=1e-9)
    assert match["mbb_per_hand"] == pytest.approx(match["mean"] / 100 * 1000)
    assert abs(match["mean"] - match["exact"]) <= 4 * match["standard_error"]


def test_a_tournament_on_a_game_past_twelve_cards_has_its_exact_column(tmp_path: Path) -> None:
    path = random_file(tmp_path, FOURTEEN, seed=13)
    out = tmp_path / "t"
    argv = ["tournament", str(path), "random", "--game", FOURTEEN, "--hands", "200", "--out", str(out)]
    run = run_cli([*argv, "--workers", "1", "--quiet"])
    assert run.status == 0, run.err
    results = json.loads((out / "results.json").read_text())
    strategy = load_strategy(path)
    tree = strategy.tree
    expected = holdem.exact_head_to_head(
        tree,
        holdem.strategy_array(tree, holdem.hand_strategy(strategy)),
        holdem.strategy_array(tree, holdem.UniformHands()),
    )
    (match,) = results["matches"]
    assert match["exact"] == pytest.approx(expected.value, abs=1e-9)
    assert match["mbb_per_hand"] == pytest.approx(match["mean"] / 100 * 1000)
    scores = {score["agent"]: score["exploitability"] for score in results["exploitability"]}
    uniform = holdem.exploitability(tree, holdem.UniformHands()).exploitability
    assert scores["random"] == pytest.approx(uniform, abs=1e-9)
    assert "a big blind is 100 chips" in (out / "results.md").read_text()


def test_a_match_on_a_small_holdem_game_reports_mbb_per_hand_of_the_big_blind(tmp_path: Path) -> None:
    path = random_file(tmp_path, "holdem-6", seed=14)
    run = run_cli(["match", str(path), "random", "--hands", "200", "--json"])
    assert run.status == 0, run.err
    report = json.loads(run.out)
    assert report["units"] == "chips" and report["mbb_per_hand"] == pytest.approx(report["mean"] * 10)
    text = run_cli(["match", str(path), "random", "--hands", "200"]).out
    assert f"{report['mean'] * 10:+.1f} mbb/hand" in text


def test_bad_inputs_are_refused_in_one_line(tmp_path: Path) -> None:
    path = random_file(tmp_path, "holdem-6", seed=15)
    one_line_refusal(["exploitability", str(path), "--game", "holdem-8"], "not " + canonical_game_id("holdem-8"))
    alone = tmp_path / "alone.npz"
    path.with_suffix(".npz").rename(alone)
    one_line_refusal(["exploitability", str(alone)], "alone.json")
    one_line_refusal(["exploitability", "random", "--game", "fhp", "--cross-check"], "OpenSpiel cannot score")
    one_line_refusal(["match", "rlcard-rule-v1", "random", "--game", "fhp", "--hands", "4"], "rlcard-rule-v1")
    one_line_refusal(["exploitability", "openspiel-cfr:10", "--game", "fhp"], "cannot be queried for every hand")
    one_line_refusal(
        ["match", "random", "random", "--game", "fhp", "--hands", "4", "--log", str(tmp_path / "h.jsonl")],
        "hand logs",
    )
    one_line_refusal(["exploit", "random", "--game", "fhp", "--p", "0.5", "--out", "x.npz"], "--p 1")
    one_line_refusal(["exploitability", "random", "--game", "hulh"], "more than the 10,000,000 one machine holds")


def test_the_opponents_of_flop_holdem_are_those_that_answer_for_every_hand() -> None:
    listed = run_cli(["opponents", "--game", "fhp", "--json"])
    assert listed.status == 0
    assert [entry["name"] for entry in json.loads(listed.out)["opponents"]] == ["random"]
    assert "public-tree strategy file" in run_cli(["opponents", "--game", "fhp"]).out
