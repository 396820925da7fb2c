"""The compiled tree: sizes, build time reporting, the Kuhn isomorphism across toolkits and moving policies."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability as openspiel_exploitability

import adapters
from adapters import Game, InputError, load_game
from cfr_agents import Policy, make_solver
from cfr_agents.tree import KIND_DECISION, CompiledTree, check_same_strategic_form, compile_tree, lifted_rows
from eval import exploitability
from tests.support import GAME_IDS, assert_same_tree, tree


@pytest.mark.parametrize(
    ("game_id", "infosets", "decision_nodes", "terminals"),
    [
        ("openspiel:kuhn_poker", 12, 24, 30),
        ("rlcard:kuhn-poker", 12, 24, 30),
        ("openspiel:leduc_poker", 936, 3780, 5520),
    ],
)
def test_sizes(game_id: str, infosets: int, decision_nodes: int, terminals: int) -> None:
    t = tree(game_id)
    assert (t.num_infosets, t.num_decision_nodes, t.num_terminals) == (infosets, decision_nodes, terminals)
    assert t.build_seconds > 0
    assert f"{infosets:,} infosets" in t.summary()


@pytest.mark.parametrize("game_id", [*GAME_IDS, "openspiel:leduc_poker(suit_isomorphism=True)"])
def test_the_adapters_own_walks_give_the_tree_of_the_state_by_state_walk(
    game_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenSpiel's and RLCard's :meth:`~adapters.Game.tree_ops` (toolkit calls, one betting plan per
    seat assignment) build exactly the tree that the checked public :class:`~adapters.State` methods do."""
    fast = compile_tree(adapters.load_game(game_id), cache=False)
    game = adapters.load_game(game_id)
    monkeypatch.setattr(game, "tree_ops", functools.partial(Game.tree_ops, game))
    assert_same_tree(fast, compile_tree(game, cache=False))


def test_arrays_are_consistent(game_id: str) -> None:
    t = tree(game_id)
    assert np.all(t.terminal_chance > 0) and np.all(t.terminal_chance <= 1)
    assert t.child_start[-1] == len(t.child_node) == len(t.node_kind) - 1
    # Every infoset's parent sequence is the empty sequence or a legal cell of an earlier level of its player.
    for player in (0, 1):
        for start, stop in t.levels[player]:
            parents = t.parent_sequence[start:stop]
            inner = parents[parents != t.root_sequence]
            rows, columns = np.divmod(inner, t.max_actions)
            assert np.all(t.infoset_player[rows] == player)
            assert np.all(rows < start)
            assert np.all(t.action_mask[rows, columns])
    # Decision nodes point to infosets whose legal actions match their out-edges.
    for node in np.flatnonzero(t.node_kind == KIND_DECISION)[:500]:
        infoset = t.node_infoset[node]
        edges = t.child_action[t.child_start[node] : t.child_start[node + 1]]
        assert tuple(edges) == t.infoset_actions[infoset]


def test_terminal_reach_sums_to_one_per_deal() -> None:
    """Chance reach of all terminals, weighted by a pure strategy's reach, sums to 1."""
    t = tree("openspiel:leduc_poker")
    first = np.zeros(t.action_mask.shape)
    first[:, 0] = 1.0
    x = t.realization_plan(first)
    reach = t.terminal_chance * x[t.terminal_sequence[0]] * x[t.terminal_sequence[1]]
    assert reach.sum() == pytest.approx(1.0, abs=1e-12)


def test_rlcard_and_openspiel_kuhn_trees_are_isomorphic() -> None:
    ours, theirs = tree("rlcard:kuhn-poker"), tree("openspiel:kuhn_poker")
    assert ours.infoset_keys == theirs.infoset_keys
    assert ours.infoset_actions == theirs.infoset_actions
    assert np.array_equal(ours.infoset_player, theirs.infoset_player)
    assert np.array_equal(ours.parent_sequence, theirs.parent_sequence)

    def leaves(t: CompiledTree) -> set[tuple[int, int, float, float]]:
        columns = (t.terminal_sequence[0], t.terminal_sequence[1], t.terminal_chance, t.terminal_utility[0])
        return {(int(s0), int(s1), round(float(c), 12), float(u)) for s0, s1, c, u in zip(*columns, strict=True)}

    assert leaves(ours) == leaves(theirs)


def test_a_kuhn_policy_moves_between_the_toolkits() -> None:
    """``for_game`` moves a policy to the other toolkit's Kuhn; OpenSpiel's own nash_conv agrees on both."""
    solver = make_solver(tree("openspiel:kuhn_poker"), "cfr+")
    solver.run(30)
    openspiel_policy = solver.average_policy()
    moved = openspiel_policy.for_game("rlcard:kuhn-poker")
    assert moved.game_id == "rlcard:kuhn-poker"
    assert moved.rules_fingerprint == tree("rlcard:kuhn-poker").rules_fingerprint
    theirs = openspiel_exploitability.nash_conv(pyspiel.load_game("kuhn_poker"), openspiel_policy.openspiel_policy())
    theirs_bridged = openspiel_exploitability.nash_conv(
        pyspiel.load_game("python_rlcard_kuhn_poker"), moved.openspiel_policy()
    )
    assert theirs > 1e-3 and theirs_bridged == pytest.approx(theirs, abs=1e-12)
    assert exploitability(moved, tree("rlcard:kuhn-poker")).nash_conv == pytest.approx(theirs, abs=1e-12)
    assert moved.for_game("openspiel:kuhn_poker") == openspiel_policy
    moved.rlcard_agent(seed=0)  # an RLCard agent now


def test_a_leduc_policy_lifts_from_its_suit_isomorphic_reduction() -> None:
    """The reduction is lossless: a lifted policy is worth on the full game what it is worth on the reduced
    one (ours and OpenSpiel's NashConv), and solving either game gives the same iterates up to rounding."""
    full, reduced = tree("openspiel:leduc_poker"), tree("openspiel:leduc_poker(suit_isomorphism=True)")
    reduction = load_game(full.game_id).reduction()
    assert reduction is not None and reduction.game_id == reduced.game_id
    assert load_game(reduced.game_id).reduction() is None and load_game("openspiel:kuhn_poker").reduction() is None
    rows = lifted_rows(full, reduced, reduction)
    assert reduced.num_infosets == 288 and set(rows.tolist()) == set(range(reduced.num_infosets))
    ours, theirs = make_solver(full, "cfr+"), make_solver(reduced, "cfr+")
    ours.run(40)
    theirs.run(40)
    np.testing.assert_allclose(theirs.average_strategy()[rows], ours.average_strategy(), rtol=0, atol=1e-9)
    policy = theirs.average_policy()
    lifted = policy.for_game(full.game_id)
    assert (lifted.game_id, lifted.rules_fingerprint, lifted.iterations) == (full.game_id, full.rules_fingerprint, 40)
    value = exploitability(policy, reduced).nash_conv
    assert value > 1e-3
    assert exploitability(lifted, full).nash_conv == pytest.approx(value, abs=1e-12)
    theirs_full = openspiel_exploitability.nash_conv(pyspiel.load_game("leduc_poker"), lifted.openspiel_policy())
    assert theirs_full == pytest.approx(value, abs=1e-12)
    with pytest.raises(InputError, match="not the same game"):
        lifted.for_game(reduced.game_id)  # no way down: the full game's table may differ within a class


@pytest.mark.parametrize(
    ("source", "target", "difference"),
    [
        ("openspiel:leduc_poker", "rlcard:leduc-holdem", "units"),
        ("openspiel:kuhn_poker", "openspiel:leduc_poker", "infoset keys"),
    ],
)
def test_a_policy_does_not_move_to_another_game(source: str, target: str, difference: str) -> None:
    with pytest.raises(InputError, match=f"not the same game: their {difference} differ"):
        Policy.uniform(tree(source)).for_game(target)


def test_the_same_game_check_compares_payoffs_not_layout() -> None:
    kuhn = tree("openspiel:kuhn_poker")
    order = np.random.default_rng(0).permutation(kuhn.num_terminals)
    shuffled = dataclasses.replace(
        kuhn,
        terminal_sequence=kuhn.terminal_sequence[:, order],
        terminal_chance=kuhn.terminal_chance[order],
        terminal_utility=kuhn.terminal_utility[:, order],
    )
    check_same_strategic_form(kuhn, shuffled)
    doubled = dataclasses.replace(kuhn, terminal_utility=kuhn.terminal_utility * 2)
    with pytest.raises(InputError, match="sequence-form payoffs differ"):
        check_same_strategic_form(kuhn, doubled)
