"""The strategy explorer (:mod:`eval.explore`) and ``cfr-agents report``: the strategies shown are the policy file's,
the values add up to OpenSpiel's values of the same profiles, and bad input is refused in one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability as os_exploitability
from open_spiel.python.algorithms.expected_game_score import policy_value

from adapters.holdem.cards import parse_cards
from adapters.inputs import InputError, ParameterError
from cfr_agents.abstract_strategy import load_abstract_strategy
from cfr_agents.abstraction import build_abstraction, class_counts, parse_spec, save_abstraction
from cfr_agents.policy import Policy, load_policy
from cfr_agents.public_tree.strategy_file import load_strategy
from cfr_agents.solvers import make_solver
from eval.aivat import self_play_values
from eval.best_response import best_response_policy
from eval.explore import open_explorer, sequence_values
from eval.explore_holdem import open_views
from eval.holdem import ArrayHands
from tests.support import run_cli, tree

KUHN = "openspiel:kuhn_poker"
LEDUC = "openspiel:leduc_poker"
RLCARD_LEDUC = "rlcard:leduc-holdem"
MAX_REPORT_BYTES = 2 * 1024 * 1024
"""The target for a Leduc policy's report."""


@pytest.fixture(scope="module")
def leduc_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    solver = make_solver(tree(LEDUC), "dcfr")
    solver.run(100)
    path = tmp_path_factory.mktemp("explore") / "leduc.json"
    solver.average_policy().save(path)
    return path


@pytest.mark.parametrize("game_id", [LEDUC, RLCARD_LEDUC])
def test_every_strategy_shown_is_the_policy_files(
    game_id: str, leduc_file: Path, policy_files: dict[str, Path]
) -> None:
    path = leduc_file if game_id == LEDUC else policy_files[game_id]
    policy = load_policy(path)
    explorer = open_explorer([str(path)], game_id)
    compared = 0
    for node in explorer.paths(10_000):
        view = explorer.view(node)
        if view["kind"] != "decision":
            continue
        names = view["actions"]
        game = policy.game()
        ids = {game.action_name(a): a for a in range(game.num_distinct_actions)}
        for h, key in enumerate(view["keys"]):
            row = policy.action_probabilities(key)
            shown = view["policies"][0]["strategy"][h]
            assert shown == pytest.approx([row.get(ids[name], 0.0) for name in names], abs=1e-12)
            compared += 1
    assert compared == tree(game_id).num_infosets


def test_values_add_up_to_openspiel_values_against_openspiel_best_response(policy_files: dict[str, Path]) -> None:
    """On Kuhn, the player to act at the root holds each card with weight 1/3 and reaches it with probability 1, so
    :math:`\\sum_h \\frac13 \\sum_a \\sigma(h,a)\\,v(h,a)` is seat 0's value against its best response: minus
    OpenSpiel's best-response value of seat 1. The best response's values add up the same way to OpenSpiel's
    best-response value of seat 0 against that opponent."""
    policy = load_policy(policy_files[KUHN])
    explorer = open_explorer([str(policy_files[KUHN])], KUHN)
    root = explorer.view("")
    shown = root["policies"][0]
    assert root["player"] == 0 and shown["reach"] == [1.0, 1.0, 1.0] and shown["share"] == pytest.approx([1 / 3] * 3)
    value = sum(
        share * sum(p * v for p, v in zip(sigma, values, strict=True))
        for share, sigma, values in zip(shown["share"], shown["strategy"], shown["values"], strict=True)
    )
    game = pyspiel.load_game("kuhn_poker")
    theirs = os_exploitability.best_response(game, policy.openspiel_policy(), 1)["best_response_value"]
    assert value == pytest.approx(-theirs, abs=1e-12)
    assert explorer.summary()["policies"][0]["seat_values"][0] == pytest.approx(-theirs, abs=1e-12)

    opponent = best_response_policy(tree(KUHN), policy.strategy_on(tree(KUHN)), against="kuhn")
    best = sum(share * b["value"] for share, b in zip(shown["share"], shown["best_response"], strict=True))
    reference = os_exploitability.best_response(game, opponent.openspiel_policy(), 0)["best_response_value"]
    assert best == pytest.approx(reference, abs=1e-12)
    gains = [b["gain"] for b in shown["best_response"]]
    assert all(gain >= -1e-12 for gain in gains)


@pytest.mark.parametrize("game_id", [LEDUC, RLCARD_LEDUC])
def test_sequence_values_are_the_node_values_of_the_profile(game_id: str) -> None:
    r""":math:`Q(Ia) = \sum_{n \in I} \pi_c(n)\,x_{-p}(n)\,v_p(na)`, with :math:`v_p` the exact node values of the
    profile (:func:`eval.aivat.self_play_values`, a computation over the nodes rather than the sequences)."""
    compiled = tree(game_id)
    rng = np.random.default_rng(5)
    profile = rng.random(compiled.action_mask.shape) * compiled.action_mask
    profile /= profile.sum(axis=1, keepdims=True)
    x = compiled.realization_plan(profile)
    nodes = self_play_values(compiled, profile)
    expected = {p: sequence_values(compiled, x, profile, p) for p in (0, 1)}
    reach = np.zeros(compiled.num_sequences)  # pi_c(n) x_{-p}(n) down to each node: filled walking the tree
    cells = np.zeros_like(reach)

    def walk(node: int, chance: float, last: tuple[int, int]) -> None:
        start, stop = compiled.child_start[node], compiled.child_start[node + 1]
        infoset = compiled.node_infoset[node]
        for edge in range(start, stop):
            child, action = int(compiled.child_node[edge]), int(compiled.child_action[edge])
            if infoset < 0:
                walk(child, chance * compiled.child_probability[edge], last)
                continue
            player = int(compiled.infoset_player[infoset])
            cell = infoset * compiled.max_actions + compiled.infoset_actions[infoset].index(action)
            cells[cell] += chance * x[last[1 - player]] * nodes[player, child]
            walk(child, chance, (cell, last[1]) if player == 0 else (last[0], cell))

    walk(0, 1.0, (compiled.root_sequence, compiled.root_sequence))
    for player in (0, 1):
        rows = compiled.player_slice(player)
        ours = expected[player][:-1].reshape(compiled.action_mask.shape)[rows]
        theirs = cells[:-1].reshape(compiled.action_mask.shape)[rows]
        assert ours == pytest.approx(theirs, abs=1e-12)


def test_each_against_the_other_matches_openspiel_expected_values(leduc_file: Path, tmp_path: Path) -> None:
    uniform = tmp_path / "uniform.json"
    Policy.uniform(tree(LEDUC)).save(uniform)
    explorer = open_explorer([str(leduc_file), str(uniform)], LEDUC, "other")
    summary = explorer.summary()
    game = pyspiel.load_game("leduc_poker")
    first, second = (load_policy(path).openspiel_policy() for path in (leduc_file, uniform))
    seats = [
        policy_value(game.new_initial_state(), [first, second])[0],
        policy_value(game.new_initial_state(), [second, first])[1],
    ]
    assert summary["policies"][0]["seat_values"] == pytest.approx(seats, abs=1e-10)
    assert summary["policies"][1]["value"] == pytest.approx(-sum(seats) / 2, abs=1e-10)
    assert summary["policies"][0]["against"] == str(uniform)


def test_public_nodes_are_what_both_seats_see(leduc_file: Path, policy_files: dict[str, Path]) -> None:
    """OpenSpiel's Leduc: the root is seat 0's decision over its six cards; after two calls the public card is a
    public node of six cards; RLCard's Leduc starts with the small blind's seat."""
    uniform_leduc = open_explorer([str(leduc_file)], LEDUC)
    root = uniform_leduc.view("")
    assert root["kind"] == "decision" and root["hands"] == ["Js", "Jh", "Qs", "Qh", "Ks", "Kh"]
    board = uniform_leduc.view("1.1")
    assert board["kind"] == "chance" and [m["name"] for m in board["moves"]] == root["hands"]
    second_round = uniform_leduc.view("1.1.4")
    assert "Ks" not in second_round["hands"] and len(second_round["hands"]) == 5
    rlcard = open_explorer([str(policy_files[RLCARD_LEDUC])], RLCARD_LEDUC).view("")
    assert rlcard["kind"] == "chance" and [m["name"] for m in rlcard["moves"]] == ["SB seat 0", "SB seat 1"]


def test_refusals(leduc_file: Path) -> None:
    explorer = open_explorer([str(leduc_file)], LEDUC)
    for path in ("9", "1.x", "1.1.1.1.1.1.1.1.1.1"):
        with pytest.raises(ParameterError):
            explorer.view(path)
    with pytest.raises(ParameterError, match="two policies"):
        open_explorer([str(leduc_file)], LEDUC, "other")
    with pytest.raises(InputError, match="public tree"):
        open_explorer(["random"], "fhp")


def test_report_is_one_offline_page_within_two_megabytes(leduc_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = run_cli(["report", str(leduc_file), "--vs", "random", "--out", str(out)])
    assert result.status == 0, result
    page = out.read_text()
    assert len(page.encode()) <= MAX_REPORT_BYTES
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page), "the page links to the network"
    embedded = re.search(r'<script id="report-data" type="application/json">(.*?)</script>', page, re.S)
    assert embedded is not None
    data = json.loads(embedded[1])
    assert data["views"][""]["policies"][1]["name"] == "random"
    assert len(data["views"]) == len(open_explorer([str(leduc_file)], LEDUC).paths(10_000))


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "no-such-file.json", "--out", "x.html"],
        ["report", "random", "--out", "x.html"],
        ["report", "random", "--game", "fhp", "--out", "x.html"],
        ["report", "random", "--game", "openspiel:leduc_poker", "--against", "other", "--out", "x.html"],
    ],
)
def test_report_refuses_bad_input_in_one_line(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = run_cli(argv)
    assert result.status == 2 and len(result.err.splitlines()) == 1, result
    assert result.err.startswith("cfr-agents: error: ") and not (tmp_path / "x.html").exists()


# --- hold'em past the compiled tree ----------------------------------------------------------------------------

HOLDEM_16 = (
    "openspiel:universal_poker(betting=limit,numPlayers=2,numRounds=2,blind=100 50,firstPlayer=2 1,numSuits=4,"
    "numRanks=4,numHoleCards=2,numBoardCards=0 1,raiseSize=100 100,maxRaises=3 3)"
)
"""A hold'em game of 16 cards: past the compiled tree's 12, on its public tree, small enough to train in a second."""


@pytest.fixture(scope="module")
def holdem_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A public-tree strategy file and an abstraction strategy of :data:`HOLDEM_16`."""
    folder = tmp_path_factory.mktemp("holdem")
    public = folder / "public.json"
    assert (
        run_cli(
            ["train", "--game", HOLDEM_16, "--algo", "dcfr", "--iterations", "20", "--quiet", "--out", str(public)]
        )[0]
        == 0
    )
    save_abstraction(
        build_abstraction(HOLDEM_16, parse_spec("lossless,5", class_counts(HOLDEM_16)), np.random.default_rng(0)),
        folder / "abstraction",
    )
    abstract = folder / "abstract.json"
    argv = ["train", "--abstraction", str(folder / "abstraction"), "--algo", "dcfr", "--iterations", "3000"]
    assert run_cli([*argv, "--quiet", "--out", str(abstract)])[0] == 0
    return {"public": public, "abstract": abstract}


def dealt(game: pyspiel.Game, hand: list[int], other: list[int], moves: list[int]) -> pyspiel.State:
    """``universal_poker``'s state with seat 0 holding ``hand`` and seat 1 ``other`` (dealt in the game's order,
    seat 0's cards first), then ``moves``."""
    state = game.new_initial_state()
    for card in [*hand, *other, *moves]:
        state.apply_action(card)
    return state


def test_a_public_tree_strategy_per_hand_is_its_array(holdem_files: dict[str, Path]) -> None:
    """At the root, each hand's row is the strategy file's block for the root, read by its own layout
    (:class:`eval.holdem.ArrayHands`)."""
    strategy = load_strategy(holdem_files["public"])
    explorer = open_views([str(holdem_files["public"]), "random"], HOLDEM_16)
    root = explorer.view("")
    block = ArrayHands(strategy.tree, strategy.strategy).probabilities(strategy.tree, 0, 0)
    by_hand = {tuple(sorted(int(c) for c in hand)): block[:, h] for h, hand in enumerate(strategy.tree.hands)}
    assert len(root["hands"]) == len(by_hand) == 120
    for label, shown in zip(root["hands"], root["policies"][0]["strategy"], strict=True):
        cards = tuple(sorted(parse_cards(label.replace(" ", ""), 4)))
        assert shown == pytest.approx(list(by_hand[cards]), abs=1e-12)
    assert root["policies"][1]["strategy"][0] == pytest.approx([1 / 3] * 3)
    assert root["policies"][0]["values"] == [None] * 120 and root["note"]


def test_an_abstraction_strategy_per_hand_is_what_it_plays(holdem_files: dict[str, Path]) -> None:
    """After a call, a check and a board card, seat 0's rows are what the strategy answers at OpenSpiel's state."""
    strategy = load_abstract_strategy(holdem_files["abstract"])
    explorer = open_views([str(holdem_files["abstract"])], HOLDEM_16)
    assert explorer.view("1.1")["kind"] == "chance"
    view = explorer.view("1.1.9")
    assert view["player"] == 0 and view["line"][-1] == {"player": -1, "text": "4d"} and len(view["hands"]) == 105
    game = pyspiel.load_game(HOLDEM_16.removeprefix("openspiel:"))
    for label, shown in zip(view["hands"], view["policies"][0]["strategy"], strict=True):
        hand = parse_cards(label.replace(" ", ""), 4)
        other = [card for card in range(16) if card not in hand and card != 9][:2]
        state = dealt(game, hand, other, [1, 1, 9])
        answer = strategy.action_probabilities(state)
        assert shown == pytest.approx([answer[a] for a in sorted(answer)], abs=1e-12)


def test_a_big_game_is_explored_but_not_reported(holdem_files: dict[str, Path], tmp_path: Path) -> None:
    for path in ("7", "1.1.99", "1.1.9.9"):
        with pytest.raises(ParameterError):
            open_views([str(holdem_files["public"])], HOLDEM_16).view(path)
    result = run_cli(["report", str(holdem_files["public"]), "--out", str(tmp_path / "r.html")])
    assert result.status == 2 and "too many public nodes" in result.err and len(result.err.splitlines()) == 1
