"""Three-player Kuhn poker against the parameterised family of exact equilibria of Szafron, Gibson and Sturtevant.

D. Szafron, R. Gibson and N. Sturtevant, "A Parameterized Family of Equilibrium Profiles for Three-Player Kuhn
Poker", Proc. 12th International Conference on Autonomous Agents and Multiagent Systems (AAMAS 2013), 247-254:
the family of the paper's main result, as the authors' group codes it in its reference player
``kuhn_3p_equilibrium_player`` (Computer Poker Research Group, University of Alberta, 2013: the parameters and their
domains), restated by S. Ganzfried, A. Nowak and J. Pinales, "Successful Nash Equilibrium Agent for a Three-Player
Imperfect-Information Game", Games 9(2):33, 2018.

Notation. :math:`a_{ij}, b_{ij}, c_{ij}` are the probabilities that P1, P2, P3 (OpenSpiel's players 0, 1, 2) bet
or call holding card :math:`i` (1 = J, 2 = Q, 3 = K, 4 = A: OpenSpiel's cards 0, 1, 2, 3) in situation :math:`j`;
with OpenSpiel's actions p (pass: check or fold) and b (bet: bet or call), the situations are

* P1: 1 = first to act (``""``), 2 = ``ppb``, 3 = ``pbp``, 4 = ``pbb``;
* P2: 1 = ``p``, 2 = ``b``, 3 = ``ppbp``, 4 = ``ppbb``;
* P3: 1 = ``pp``, 2 = ``pb``, 3 = ``bp``, 4 = ``bb``;

so that the information state of card :math:`i` in situation :math:`j` is ``f"{i - 1}{history}"``.

The family. P1 never bets first and calls with A; with K it calls only after ``pbp``, half the time:
:math:`a_{ij} = 0` except :math:`a_{33} = 1/2` and :math:`a_{42} = a_{43} = a_{44} = 1`. P2:
:math:`b_{31} = 0`, :math:`b_{41} = 2b_{11} + 2b_{21}`; :math:`b_{12} = b_{22} = 0`, :math:`b_{42} = 1`;
:math:`b_{13} = 0`, :math:`b_{33} = 1/2 + (b_{11} + b_{21})/2 + \\beta/2 - b_{23}(1 - b_{21})`,
:math:`b_{43} = 1`; :math:`b_{14} = b_{24} = b_{34} = 0`, :math:`b_{44} = 1`. P3: :math:`c_{21} = 1/2 - c_{11}`,
:math:`c_{31} = 0`, :math:`c_{4j} = 1`; :math:`c_{i2} = 0` and :math:`c_{13} = c_{23} = c_{14} = c_{24} = 0` for
:math:`i < 4`. Here :math:`\\beta = \\max(b_{11}, b_{21})`, and the free parameters range over

* :math:`c_{11} = 0`: :math:`0 \\le b_{11} \\le b_{21} \\le 1/4`, :math:`b_{23} = 0`;
* :math:`0 < c_{11} < 1/2`: :math:`b_{11} = b_{21} \\le 1/4`, :math:`b_{23} = 0`, and
  :math:`c_{11} \\le (2 - b_{11})/(3 + 4b_{11})` when :math:`b_{11} > 1/6`;
* :math:`c_{11} = 1/2`: :math:`b_{11} \\le 1/4`, :math:`b_{21} \\le \\min(b_{11}, 1/2 - 2b_{11})`,
  :math:`0 \\le b_{23} \\le (b_{11} - b_{21}) / (2(1 - b_{21}))`;
* always :math:`0 \\le b_{32} \\le \\kappa`, :math:`\\max(0, 1/2 - b_{32}) \\le c_{33} \\le \\kappa - b_{32}` and
  :math:`0 \\le c_{34} \\le 1`, where :math:`\\kappa = 1/2 + 3(b_{11} + b_{21})/4 + \\beta/4`.

The players' values (chips per hand) over the whole family, as this module's exact evaluation gives them at members
across its range (the paper's own statement of them was not at hand; they show the transfer its abstract
describes):

.. math:: u_1 = -\\frac{1}{48} - \\frac{\\beta}{24}, \\qquad u_2 = -\\frac{1}{48}, \\qquad
          u_3 = \\frac{1}{24} + \\frac{\\beta}{24}:

P2's value is the same for every member, and P2's choice of :math:`\\beta \\in [0, 1/4]` moves up to 1/96 a hand from
P1 to P3.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pyspiel
import pytest

from cfr_agents import make_solver
from cfr_agents.tree import CompiledTree, FloatArray, load_tree
from eval.exploitability import exploitability_of_strategy

KUHN3 = "openspiel:kuhn_poker(players=3)"
SITUATIONS = (("", "ppb", "pbp", "pbb"), ("p", "b", "ppbp", "ppbb"), ("pp", "pb", "bp", "bb"))
"""The histories of situations 1..4 of P1, P2, P3."""
FIRST = np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.5, 0.0], [0.0, 1.0, 1.0, 1.0]])
"""P1's :math:`a_{ij}`, card by card (J, Q, K, A): the same in every member."""
EXACT = 1e-9
TARGET_NASH_CONV = 1e-6
MAX_ITERATIONS = 8000


@pytest.fixture(scope="module")
def kuhn3() -> CompiledTree:
    return load_tree(KUHN3, any_players=True)


@dataclass(frozen=True)
class Member:
    """The free parameters of a profile of the family's form; the others follow from them."""

    c11: float
    b11: float
    b21: float
    b23: float
    b32: float
    c33: float
    c34: float

    @property
    def beta(self) -> float:
        return max(self.b11, self.b21)

    @property
    def kappa(self) -> float:
        """The upper end of :math:`b_{32}`'s range."""
        return 0.5 + 0.75 * (self.b11 + self.b21) + self.beta / 4

    def bets(self) -> dict[str, float]:
        """Probability of b (bet or call) at each information state."""
        b33 = 0.5 + (self.b11 + self.b21) / 2 + self.beta / 2 - self.b23 * (1 - self.b21)
        second = [
            [self.b11, 0.0, 0.0, 0.0],
            [self.b21, 0.0, self.b23, 0.0],
            [0.0, self.b32, b33, 0.0],
            [2 * (self.b11 + self.b21), 1.0, 1.0, 1.0],
        ]
        third = [
            [self.c11, 0.0, 0.0, 0.0],
            [0.5 - self.c11, 0.0, 0.0, 0.0],
            [0.0, 0.0, self.c33, self.c34],
            [1.0, 1.0, 1.0, 1.0],
        ]
        return {
            f"{card}{history}": float(table[card][j])
            for histories, table in zip(SITUATIONS, (FIRST.tolist(), second, third), strict=True)
            for card in range(4)
            for j, history in enumerate(histories)
        }

    def strategy(self, tree: CompiledTree) -> FloatArray:
        """The profile as an ``(N, A)`` strategy array: action 0 is p, action 1 is b."""
        bets = self.bets()
        strategy = np.zeros(tree.action_mask.shape)
        for i, key in enumerate(tree.infoset_keys):
            strategy[i, :2] = 1.0 - bets[key], bets[key]
        return strategy

    def in_range(self) -> bool:
        """Whether the parameters lie in the family's domain (the module docstring's list)."""
        within = 0 <= self.b11 <= 0.25 and min(self.b21, self.b23) >= 0 and 0 <= self.c34 <= 1
        if self.c11 == 0:
            family = self.b11 <= self.b21 <= 0.25 and self.b23 == 0
        elif 0 < self.c11 < 0.5:
            family = self.b11 == self.b21 and self.b23 == 0
            family = family and (self.b11 <= 1 / 6 or self.c11 <= (2 - self.b11) / (3 + 4 * self.b11))
        else:
            cap = (self.b11 - self.b21) / (2 * (1 - self.b21))
            family = self.c11 == 0.5 and self.b21 <= min(self.b11, 0.5 - 2 * self.b11) and self.b23 <= cap
        low, high = max(0.0, 0.5 - self.b32), self.kappa - self.b32
        return within and family and 0 <= self.b32 <= self.kappa and low <= self.c33 <= high

    def values(self) -> tuple[float, float, float]:
        """The paper's :math:`(u_1, u_2, u_3)`."""
        return paper_values(self.beta)


def paper_values(beta: float) -> tuple[float, float, float]:
    return -1 / 48 - beta / 24, -1 / 48, 1 / 24 + beta / 24


def spanning(c11: float, b11: float, b21: float, b23: float, b32_at: float, c33_at: float, c34: float) -> Member:
    """A member with :math:`b_{32}` and :math:`c_{33}` at fractions ``b32_at``, ``c33_at`` of their ranges."""
    kappa = Member(c11, b11, b21, b23, 0.0, 0.0, c34).kappa
    b32 = b32_at * kappa
    low, high = max(0.0, 0.5 - b32), kappa - b32
    return Member(c11, b11, b21, b23, b32, low + c33_at * (high - low), c34)


MEMBERS = {
    # c11 = 0: b11 <= b21 <= 1/4.
    "c11=0, no bluffs, b32=0": spanning(0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0),
    "c11=0, b11<b21, c33 at its top": spanning(0.0, 0.05, 0.2, 0.0, 0.4, 1.0, 1.0),
    "c11=0, b11=b21=1/4, b32 at its top": spanning(0.0, 0.25, 0.25, 0.0, 1.0, 0.0, 0.5),
    # 0 < c11 < 1/2: b11 = b21.
    "c11=1/4, b11=b21=1/10": spanning(0.25, 0.1, 0.1, 0.0, 0.6, 0.5, 0.3),
    "c11 at (2-b11)/(3+4b11), b11=1/4": spanning(1.75 / 4, 0.25, 0.25, 0.0, 0.5, 0.0, 1.0),
    "c11=0.49, b11=b21=1/6": spanning(0.49, 1 / 6, 1 / 6, 0.0, 0.2, 0.7, 0.0),
    # c11 = 1/2: b21 <= min(b11, 1/2 - 2 b11), b23 <= (b11 - b21) / (2 (1 - b21)).
    "c11=1/2, b11=1/4, b21=0, b23 at its top": spanning(0.5, 0.25, 0.0, 0.125, 1.0, 0.0, 0.75),
    "c11=1/2, b11=1/5, b21=2/25": spanning(0.5, 0.2, 0.08, 0.02, 0.3, 0.4, 0.6),
    "c11=1/2, b11=b21=1/6": spanning(0.5, 1 / 6, 1 / 6, 0.0, 0.8, 1.0, 0.2),
}

OUTSIDE = {
    # One parameter pushed 0.02 past its range, from a member of the family.
    "b21 above 1/4": replace(MEMBERS["c11=0, b11<b21, c33 at its top"], b21=0.27),
    "b11 above b21 with c11=0": replace(MEMBERS["c11=0, b11<b21, c33 at its top"], b11=0.22),
    "b21 unequal to b11 with 0<c11<1/2": replace(MEMBERS["c11=1/4, b11=b21=1/10"], b21=0.12),
    "c11 above (2-b11)/(3+4b11)": replace(MEMBERS["c11 at (2-b11)/(3+4b11), b11=1/4"], c11=1.75 / 4 + 0.02),
    "b21 above 1/2-2b11 with c11=1/2": replace(MEMBERS["c11=1/2, b11=1/5, b21=2/25"], b21=0.12),
    "b23 above its top": replace(MEMBERS["c11=1/2, b11=1/4, b21=0, b23 at its top"], b23=0.145),
    "b32 above its top": replace(MEMBERS["c11=0, b11=b21=1/4, b32 at its top"], b32=0.9575),
    "c33 below 1/2-b32": replace(
        MEMBERS["c11=1/4, b11=b21=1/10"], c33=0.5 - MEMBERS["c11=1/4, b11=b21=1/10"].b32 - 0.02
    ),
    "c33 above its top": replace(
        MEMBERS["c11=0, b11<b21, c33 at its top"], c33=MEMBERS["c11=0, b11<b21, c33 at its top"].c33 + 0.02
    ),
}


def read_member(tree: CompiledTree, strategy: FloatArray) -> Member:
    """The free parameters as a strategy plays them (in range or not)."""
    bet = {key: float(strategy[i, 1]) for i, key in enumerate(tree.infoset_keys)}
    return Member(bet["0pp"], bet["0p"], bet["1p"], bet["1ppbp"], bet["2b"], bet["2bp"], bet["2bb"])


def projections(member: Member) -> list[Member]:
    """``member``'s parameters clipped into the domain of each of the three sub-families."""
    clip = float(np.clip(member.b11, 0.0, 0.25))
    even = float(np.clip((member.b11 + member.b21) / 2, 0.0, 0.25))
    middle = min(max(member.c11, 0.0), 0.5 if even <= 1 / 6 else (2 - even) / (3 + 4 * even))
    half_b21 = float(np.clip(member.b21, 0.0, min(clip, 0.5 - 2 * clip)))
    half_b23 = float(np.clip(member.b23, 0.0, (clip - half_b21) / (2 * (1 - half_b21))))
    bluffs = [
        replace(member, c11=0.0, b11=clip, b21=float(np.clip(member.b21, clip, 0.25)), b23=0.0),
        replace(member, c11=middle, b11=even, b21=even, b23=0.0),
        replace(member, c11=0.5, b11=clip, b21=half_b21, b23=half_b23),
    ]
    clipped = []
    for projected in bluffs:
        b32 = float(np.clip(projected.b32, 0.0, projected.kappa))
        low, high = max(0.0, 0.5 - b32), projected.kappa - b32
        c33 = float(np.clip(projected.c33, low, high))
        clipped.append(replace(projected, b32=b32, c33=c33, c34=float(np.clip(projected.c34, 0.0, 1.0))))
    return clipped


def test_the_papers_situations_are_openspiels_information_states(kuhn3: CompiledTree) -> None:
    """The mapping above: every information state is one of the 48 (card, situation) pairs of its player, action 0
    is p and 1 is b, and card 3 is the A (it wins the showdown after p p p)."""
    member = MEMBERS["c11=1/4, b11=b21=1/10"]
    assert sorted(kuhn3.infoset_keys) == sorted(member.bets())
    for i, key in enumerate(kuhn3.infoset_keys):
        history = key[1:]
        player = next(p for p, histories in enumerate(SITUATIONS) if history in histories)
        assert kuhn3.infoset_player[i] == player and tuple(kuhn3.infoset_actions[i]) == (0, 1)
    game = pyspiel.load_game(KUHN3.removeprefix("openspiel:"))
    state = game.new_initial_state()
    for card in (1, 0, 3):  # deal Q, J, A
        state.apply_action(card)
    assert [state.action_to_string(0, action) for action in (0, 1)] == ["Pass", "Bet"]
    for action in (0, 0, 0):
        state.apply_action(action)
    assert state.returns() == [-1.0, -1.0, 2.0]


@pytest.mark.parametrize("name", MEMBERS)
def test_members_across_the_family_are_exact_equilibria_with_the_papers_values(kuhn3: CompiledTree, name: str) -> None:
    member = MEMBERS[name]
    assert member.in_range()
    measured = exploitability_of_strategy(kuhn3, member.strategy(kuhn3))
    assert measured.nash_conv <= EXACT
    np.testing.assert_allclose(measured.policy_values, member.values(), rtol=0, atol=EXACT)


@pytest.mark.parametrize("name", OUTSIDE)
def test_a_member_with_a_parameter_outside_its_range_is_not_an_equilibrium(kuhn3: CompiledTree, name: str) -> None:
    member = OUTSIDE[name]
    assert not member.in_range()
    assert exploitability_of_strategy(kuhn3, member.strategy(kuhn3)).nash_conv > 1e-6


@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr", "pcfr+", "pdcfr+"])
def test_solutions_to_a_nash_conv_of_1e_6_lie_by_the_family_with_the_papers_values(
    kuhn3: CompiledTree, algorithm: str
) -> None:
    """The average strategy, once its NashConv :math:`\\epsilon` is at most 1e-6 (checked every 25 iterations, at
    most 8,000), is compared with the family in two ways.

    * Values: each player's value :math:`u_i(\\bar\\sigma)` is within :math:`\\epsilon` of the paper's
      :math:`u_i` at :math:`\\hat\\beta = \\max(\\bar\\sigma(b \\mid J, p), \\bar\\sigma(b \\mid Q, p))`, P2's within
      :math:`\\epsilon` of -1/48 whatever the solution. An exact equilibrium of the family meets these with
      :math:`\\epsilon = 0`; for an approximate one the tolerance :math:`\\epsilon` is a scale, not a theorem (in a
      three-player game a small NashConv bounds no player's distance to an equilibrium value): the solutions
      measured miss by 0.02 to 0.3 :math:`\\epsilon`.
    * Strategy: the solution's parameters clipped into the closest sub-family's domain give an exact equilibrium
      (NashConv <= 1e-9) whose action probabilities are within 1e-3 of the solution's at every information state,
      those off the path of play included.
    """
    solver = make_solver(kuhn3, algorithm)
    while True:
        solver.run(25)
        strategy = solver.average_strategy()
        measured = exploitability_of_strategy(kuhn3, strategy)
        if measured.nash_conv <= TARGET_NASH_CONV or solver.iteration >= MAX_ITERATIONS:
            break
    epsilon = measured.nash_conv
    assert epsilon <= TARGET_NASH_CONV
    read = read_member(kuhn3, strategy)
    np.testing.assert_allclose(measured.policy_values, paper_values(read.beta), rtol=0, atol=epsilon)
    assert abs(measured.policy_values[1] + 1 / 48) <= epsilon
    nearest = min(projections(read), key=lambda member: float(np.abs(member.strategy(kuhn3) - strategy).max()))
    distance = float(np.abs(nearest.strategy(kuhn3) - strategy).max())
    assert nearest.in_range()
    assert exploitability_of_strategy(kuhn3, nearest.strategy(kuhn3)).nash_conv <= EXACT
    assert distance <= 1e-3
