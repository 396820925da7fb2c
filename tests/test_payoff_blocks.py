"""The sequence-form payoff matrix in public blocks (:mod:`cfr_agents.solvers.payoff_blocks`): its products
equal the terminal-by-terminal sums on every game, and poker's and Liar's Dice's blocks are all ranked."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from cfr_agents.solvers import payoff_blocks as blocks_module
from cfr_agents.solvers.payoff_blocks import MISSING, PayoffBlocks
from cfr_agents.solvers.payoff_blocks import _strengths as strengths
from cfr_agents.tree import CompiledTree
from tests.support import tree

LEDUC13 = (
    "openspiel:universal_poker(betting=limit,numPlayers=2,numRounds=2,blind=1 1,raiseSize=2 4,firstPlayer=1 1,"
    "maxRaises=2 2,numSuits=2,numRanks=13,numHoleCards=1,numBoardCards=0 1)"
)
GAMES = [
    "openspiel:kuhn_poker",
    "openspiel:leduc_poker",
    "rlcard:leduc-holdem",
    "rlcard:kuhn-poker",
    "openspiel:leduc_poker(suit_isomorphism=True)",
    "openspiel:liars_dice(dice_sides=3)",
    "openspiel:liars_dice",
    pytest.param(LEDUC13, marks=pytest.mark.slow),
]


def terminal_by_terminal(compiled: CompiledTree, player: int, x: np.ndarray) -> np.ndarray:
    """:math:`q(\\sigma_i(z)) \\mathrel{+}= c(z) u_i(z) x(\\sigma_{-i}(z))`, one terminal at a time."""
    q = np.zeros(compiled.num_sequences)
    own, other = compiled.terminal_sequence[player], compiled.terminal_sequence[1 - player]
    np.add.at(q, own, compiled.terminal_chance * compiled.terminal_utility[player] * x[other])
    return q


@pytest.fixture(params=[False, True], ids=["by-cost", "every-ranked-block"])
def lay_out(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Callable[[CompiledTree], PayoffBlocks]:
    """Blocks as the solver lays them out (where they are cheaper), or every ranked group as a block."""
    if request.param:
        monkeypatch.setattr(blocks_module, "BLOCK_STEP", 0)
        monkeypatch.setattr(blocks_module, "BLOCK_OVERHEAD", -1)
    return blocks_module._lay_out


@pytest.mark.parametrize("game_id", GAMES)
def test_products_equal_the_terminal_sums(game_id: str, lay_out: Callable[[CompiledTree], PayoffBlocks]) -> None:
    """For realization plans of random strategies, and for random non-negative vectors, both players."""
    compiled = tree(game_id)
    blocks = lay_out(compiled)
    rng = np.random.default_rng(0)
    strategy = rng.random(compiled.action_mask.shape) * compiled.action_mask
    strategy /= strategy.sum(axis=1, keepdims=True)
    for x in (compiled.realization_plan(strategy), rng.random(compiled.num_sequences)):
        for player in range(2):
            expected = terminal_by_terminal(compiled, player, x)
            np.testing.assert_allclose(blocks.product(player, x), expected, rtol=0, atol=1e-14 * np.abs(x).max())


@pytest.mark.parametrize(
    "game_id",
    [
        "openspiel:leduc_poker",
        "rlcard:leduc-holdem",
        "openspiel:liars_dice(dice_sides=3)",
        pytest.param(LEDUC13, marks=pytest.mark.slow),
    ],
)
def test_almost_every_terminal_is_in_a_ranked_block(game_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With every ranked group a block, what is left one by one is corrections for pairs no terminal has (hands
    sharing a card), and the few groups of one row or one column (a fold before the other player acts)."""
    monkeypatch.setattr(blocks_module, "BLOCK_STEP", 0)
    monkeypatch.setattr(blocks_module, "BLOCK_OVERHEAD", -1)
    compiled = tree(game_id)
    blocks = blocks_module._lay_out(compiled)
    assert (np.diff(blocks.block_bounds, axis=1) > 0).all()
    terminal_pairs = set(zip(*compiled.terminal_sequence.tolist(), strict=True))
    for player in range(2):
        start, stop = blocks.entry_bounds[player]
        rows, columns = blocks.entry_row[start:stop].tolist(), blocks.entry_column[start:stop].tolist()
        as_played = {(r, c) if player == 0 else (c, r) for r, c in zip(rows, columns, strict=True)}
        assert len(terminal_pairs & as_played) <= 0.01 * len(terminal_pairs)


def test_blocks_are_kept_where_they_are_cheaper() -> None:
    """Liar's Dice's 6 x 6 blocks are cheaper than their 36 terminals; Leduc's 5 x 5, with its 6 cards, are not."""
    dice, leduc = (
        blocks_module._lay_out(tree("openspiel:liars_dice")),
        blocks_module._lay_out(tree("openspiel:leduc_poker")),
    )
    assert (dice.entry_bounds == 0).all() and (np.diff(dice.block_bounds, axis=1) > 0).all()
    assert (leduc.block_bounds == 0).all()


def test_strengths_fit_a_showdown_and_refuse_a_cycle() -> None:
    showdown = np.array([[0, -1, -1], [1, 0, -1], [1, 1, MISSING]], dtype=np.int8)  # rows and columns J < Q < K
    found = strengths(showdown)
    assert found is not None
    rows, columns = found
    present = showdown != MISSING
    np.testing.assert_array_equal(np.sign(rows[:, None] - columns[None, :])[present], showdown[present])
    cycle = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], dtype=np.int8)  # rock, paper, scissors
    assert strengths(cycle) is None


BLOCK_CORRUPTIONS: dict[str, Callable[[dict[str, np.ndarray]], None]] = {
    "player 1's blocks overlapping player 0's": lambda a: a["block_bounds"].__setitem__((1, 0), 0),
    "player 0's entries starting before the first": lambda a: a["entry_bounds"].__setitem__((0, 0), -1),
    "an entry value that is not a number": lambda a: a["entry_value"].__setitem__(0, np.nan),
    "a block's scale that is infinite": lambda a: a["scale"].__setitem__(0, np.inf),
    "row sequences in two dimensions": lambda a: a.__setitem__("row_sequence", a["row_sequence"].reshape(1, -1)),
}


@pytest.mark.parametrize("corruption", BLOCK_CORRUPTIONS)
def test_stored_blocks_that_the_kernel_would_misread_are_refused(
    corruption: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stored entry is decoded only if the kernel, which does not check bounds, would read each player's own
    blocks and entries, and finite numbers."""
    monkeypatch.setattr(blocks_module, "BLOCK_STEP", 0)  # every ranked group a block
    monkeypatch.setattr(blocks_module, "BLOCK_OVERHEAD", -1)
    compiled = tree("rlcard:leduc-holdem")
    arrays = blocks_module._to_arrays(blocks_module._lay_out(compiled))
    laid_out = blocks_module._from_arrays(compiled, arrays)  # as laid out: accepted
    assert (np.diff(laid_out.block_bounds, axis=1) > 0).all() and (np.diff(laid_out.entry_bounds, axis=1) > 0).all()
    stored = {name: array.copy() for name, array in arrays.items()}
    BLOCK_CORRUPTIONS[corruption](stored)
    with pytest.raises(ValueError, match="payoff blocks"):
        blocks_module._from_arrays(compiled, stored)
