"""Information-state tensors: fixed length, and distinct for distinct infosets, on every game."""

from __future__ import annotations

import numpy as np
import pytest

from adapters.inputs import InputError
from adapters.tensors import LEDUC_HISTORY, encoder
from tests.support import GAME_IDS, game, tree

GAMES = [*GAME_IDS, "openspiel:leduc_poker(suit_isomorphism=True)", "openspiel:liars_dice"]


@pytest.mark.parametrize("game_id", GAMES)
def test_distinct_infosets_get_distinct_tensors(game_id: str) -> None:
    compiled = tree(game_id)
    coder = encoder(game(game_id))
    tensors = coder.of_keys(compiled.infoset_keys)
    assert tensors.shape == (compiled.num_infosets, coder.size) and tensors.dtype == np.float32
    assert len(np.unique(tensors, axis=0)) == compiled.num_infosets
    assert coder.layout


def test_rlcard_leduc_histories_fit_the_slots() -> None:
    keys = tree("rlcard:leduc-holdem").infoset_keys
    assert max(len(key.split("|")[4].split("-")) for key in keys) == LEDUC_HISTORY - 1


def test_rlcard_kuhn_tensors_are_openspiel_kuhn_tensors() -> None:
    ours = tree("rlcard:kuhn-poker").infoset_keys
    assert ours == tree("openspiel:kuhn_poker").infoset_keys
    np.testing.assert_array_equal(
        encoder(game("rlcard:kuhn-poker")).of_keys(ours), encoder(game("openspiel:kuhn_poker")).of_keys(ours)
    )


def test_openspiel_tensor_of_a_state_is_that_of_its_key() -> None:
    import pyspiel

    from adapters.tensors import OpenSpielEncoder

    state = pyspiel.load_game("leduc_poker").new_initial_state()
    for action in (0, 3, 1, 2):  # deal, deal, call, raise
        state.apply_action(action)
    key = state.information_state_string(state.current_player())
    coder = encoder(game("openspiel:leduc_poker"))
    np.testing.assert_array_equal(OpenSpielEncoder.of_state(state, state.current_player()), coder.of_keys([key])[0])


@pytest.mark.parametrize(
    ("game_id", "key"),
    [
        ("rlcard:leduc-holdem", "0|SX|-|SB|"),
        ("rlcard:leduc-holdem", "0|SJ|-|XB|"),
        ("rlcard:leduc-holdem", "0|SJ|-|SB|bet"),
        ("rlcard:leduc-holdem", "2|SJ|-|SB|"),
        ("rlcard:leduc-holdem", "nonsense"),
        ("openspiel:kuhn_poker", "9pb"),
    ],
)
def test_a_key_of_no_infoset_is_refused(game_id: str, key: str) -> None:
    with pytest.raises(InputError, match="information"):
        encoder(game(game_id)).of_keys([key])
