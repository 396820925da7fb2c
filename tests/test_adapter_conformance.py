"""Every adapter passes :func:`adapters.conformance.check_game`; the check catches a broken adapter,
naming what broke; unsupported games are refused in one line."""

from __future__ import annotations

import pytest

import adapters
from adapters import Game, InputError, State
from adapters.conformance import check_game
from adapters.inputs import UnsupportedGameError
from cfr_agents.tree import compile_tree
from tests.support import game


def test_every_adapter_passes_the_conformance_check(game_id: str) -> None:
    check_game(game(game_id))


def test_loading_a_game_again_gives_the_same_rules_fingerprint(game_id: str) -> None:
    assert adapters.load_game(game_id).rules_fingerprint == game(game_id).rules_fingerprint


class Wrapped(State):
    """A state of another game, every hook delegated: the base of the broken adapters below."""

    def __init__(self, inner: State) -> None:
        self.inner = inner

    def __str__(self) -> str:
        return str(self.inner)

    def _player(self) -> int:
        return self.inner.current_player()

    def _outcomes(self) -> tuple[tuple[int, float], ...]:
        return self.inner.chance_outcomes()

    def _actions(self) -> tuple[int, ...]:
        return self.inner.legal_actions()

    def _apply(self, action: int) -> State:
        return type(self)(self.inner.child(action))

    def _payoffs(self) -> tuple[float, ...]:
        return self.inner.returns()

    def _key(self, player: int) -> str:
        return self.inner.information_state_key(player)


class ChanceSumsToNineTenths(Wrapped):
    def _outcomes(self) -> tuple[tuple[int, float], ...]:
        return tuple((outcome, 0.9 * p) for outcome, p in self.inner.chance_outcomes())


class DescendingActions(Wrapped):
    def _actions(self) -> tuple[int, ...]:
        return self.inner.legal_actions()[::-1]


class NotZeroSum(Wrapped):
    def _payoffs(self) -> tuple[float, float]:
        first, second = self.inner.returns()
        return first, second + 1.0


class Forgetful(Wrapped):
    """Player 0's key is its card alone: its second decision ("0pb") looks like its first ("0")."""

    def _key(self, player: int) -> str:
        key = self.inner.information_state_key(player)
        return key[0] if player == 0 else key


class AcceptsAnyAction(Wrapped):
    """``child`` of an id that is not legal returns the state itself."""

    def child(self, action: int) -> State:
        return super().child(action) if action in self.legal_actions() else self


class ChangedByItsChildren(Wrapped):
    """Counts its children in its own ``str()``: making them changes it."""

    def __init__(self, inner: State) -> None:
        super().__init__(inner)
        self.children = 0

    def __str__(self) -> str:
        return f"{self.inner} after {self.children} children"

    def _apply(self, action: int) -> State:
        self.children += 1
        return super()._apply(action)


class BrokenKuhn(Game):
    """OpenSpiel's Kuhn poker with its states wrapped in ``broken``."""

    units = "chips"

    def __init__(self, broken: type[Wrapped], num_distinct_actions: int = 2) -> None:
        self.game_id = f"broken:{broken.__name__}"
        self.num_distinct_actions = num_distinct_actions
        self._broken = broken
        self._inner = game("openspiel:kuhn_poker")

    def new_initial_state(self) -> State:
        return self._broken(self._inner.new_initial_state())

    def action_name(self, action: int) -> str:
        return self._inner.action_name(action)

    def rules(self) -> dict[str, object]:
        return {"broken": self._broken.__name__}


BROKEN: dict[type[Wrapped], str] = {
    ChanceSumsToNineTenths: r"history \[\] \(history \[\]\): chance probabilities .* sum to 0\.(9|89)",
    DescendingActions: r"history \[0, 1\] \(history \[0, 1\]\): legal actions \(1, 0\) are not ascending",
    NotZeroSum: r"history \[0, 1, 0, 0\] .*: returns\(\) \(-1\.0, 2\.0\) are not zero-sum",
    Forgetful: r"history \[0, 1, 0, 1\] .*: key '0' follows player 0's own \(key, action\) \('0', 0\) here, "
    r"but None after history \[0, 1\]: the keys are not perfect-recall",
    AcceptsAnyAction: r"history \[\] .*: child\(-1\) did not raise IllegalActionError",
    ChangedByItsChildren: r"history \[\] .*: making its children changed the state",
}
"""Each broken state and the message that names its problem at the first state that shows it."""


@pytest.mark.parametrize("broken", BROKEN, ids=lambda broken: broken.__name__)
def test_a_broken_adapter_is_caught_with_its_game_state_and_problem(broken: type[Wrapped]) -> None:
    message = BROKEN[broken]
    with pytest.raises(AssertionError, match=message) as error:
        check_game(BrokenKuhn(broken))
    assert str(error.value).startswith(f"broken:{broken.__name__}, history ["), error.value


def test_actions_outside_the_games_range_are_caught() -> None:
    with pytest.raises(AssertionError, match=r"legal actions \(0, 1\) leave range\(num_distinct_actions=1\)"):
        check_game(BrokenKuhn(Wrapped, num_distinct_actions=1))


def test_the_compiler_refuses_keys_that_are_not_perfect_recall() -> None:
    with pytest.raises(UnsupportedGameError, match="not perfect-recall"):
        compile_tree(BrokenKuhn(Forgetful))


@pytest.mark.parametrize(
    ("game_id", "message"),
    [
        ("openspiel:kuhn_poker(players=3)", "3 players"),
        ("openspiel:matrix_rps", "SIMULTANEOUS"),
        ("openspiel:no_such_game", "unknown OpenSpiel game"),
        ("openspiel:leduc_poker(bogus=1)", "Unknown parameter"),
        ("openspiel:nfg_game", "OpenSpiel cannot load 'nfg_game'"),
        ("rlcard:no-limit-holdem", "unsupported RLCard game"),
        ("chess", "must look like"),
        ("gym:kuhn", "unknown toolkit"),
    ],
)
def test_unsupported_games_are_refused_with_one_line(game_id: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as error:
        adapters.load_game(game_id)
    assert "\n" not in str(error.value)


def test_openspiel_games_take_parameters() -> None:
    kuhn = compile_tree(adapters.load_game("openspiel:kuhn_poker()"))
    assert kuhn.num_infosets == 12
    flipped = adapters.load_game("openspiel:leduc_poker(suit_isomorphism=True)")
    assert flipped.rules_fingerprint != game("openspiel:leduc_poker").rules_fingerprint
