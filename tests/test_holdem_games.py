"""Named hold'em games (``fhp``, ``hulh``, the calibration games), their limit rules as OpenSpiel states them,
and the ``universal_poker`` strings refused before OpenSpiel would crash on them or play them wrongly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyspiel
import pytest

import adapters
from adapters.games import NAMED_GAMES
from adapters.holdem.rules import LimitRules, is_limit_holdem, limit_rules
from adapters.inputs import InputError, UnknownGameError, UnsupportedGameError
from adapters.openspiel import OpenSpielGame
from cfr_agents.policy import load_policy
from cfr_agents.tree import compile_tree
from tests.support import run_cli

FHP = (
    "openspiel:universal_poker(betting=limit,numPlayers=2,numRounds=2,blind=100 50,firstPlayer=2 1,numSuits=4,"
    "numRanks=13,numHoleCards=2,numBoardCards=0 3,raiseSize=100 100,maxRaises=3 3)"
)
"""Flop Hold'em as Brown et al. (2019, Deep CFR, appendix A) define it."""
FHP_ACPC = FHP.replace("maxRaises=3 3", "maxRaises=3 4")
HOLDEM_6 = (
    "openspiel:universal_poker(betting=limit,numPlayers=2,numRounds=2,blind=100 50,firstPlayer=2 1,numSuits=2,"
    "numRanks=3,numHoleCards=2,numBoardCards=0 1,raiseSize=100 100,maxRaises=3 3)"
)
FULLGAME = "openspiel:universal_poker(betting=limit,bettingAbstraction=fullgame)"


@pytest.mark.parametrize(("name", "game_id"), [("fhp", FHP), ("fhp-acpc", FHP_ACPC), ("holdem-6", HOLDEM_6)])
def test_a_named_game_is_its_canonical_id(name: str, game_id: str) -> None:
    named, spelled = adapters.load_game(name), adapters.load_game(game_id)
    assert named.game_id == spelled.game_id == game_id
    assert named.rules_fingerprint == spelled.rules_fingerprint


def test_hulh_is_openspiels_acpc_game() -> None:
    assert adapters.load_game("hulh").game_id == "openspiel:" + pyspiel.hulh_game_string("fcpa")


@pytest.mark.parametrize(("name", "ranks", "suits"), [("holdem-6", 3, 2), ("holdem-8", 4, 2), ("holdem-12", 3, 4)])
def test_the_calibration_games_have_their_decks_and_flop_holdems_betting(name: str, ranks: int, suits: int) -> None:
    rules, fhp = limit_rules(name), limit_rules("fhp")
    assert rules is not None and fhp is not None
    assert (rules.num_ranks, rules.num_suits, rules.deck_size) == (ranks, suits, ranks * suits)
    assert (rules.num_hole_cards, rules.board_cards) == (2, (0, 1))
    betting = ("num_rounds", "blinds", "raise_size", "max_raises", "first_player")
    assert [getattr(rules, field) for field in betting] == [getattr(fhp, field) for field in betting]


def test_every_named_game_loads_and_is_described_in_one_line() -> None:
    for name, named in NAMED_GAMES.items():
        assert adapters.load_game(name).game_id == named.game_id
        assert named.description and "\n" not in named.description
        assert is_limit_holdem(name)


def test_fhp_limit_rules_read_back_the_papers_game() -> None:
    assert limit_rules("fhp") == LimitRules(
        num_ranks=13,
        num_suits=4,
        num_hole_cards=2,
        num_rounds=2,
        board_cards=(0, 3),
        blinds=(100, 50),
        raise_size=(100, 100),
        max_raises=(3, 3),
        first_player=(1, 0),
    )
    fhp = limit_rules(FHP)
    assert fhp is not None and (fhp.big_blind, fhp.deck_size) == (100, 52)
    acpc = limit_rules("fhp-acpc")
    assert acpc is not None and acpc.max_raises == (3, 4)


def test_hulh_limit_rules_are_the_acpc_rules() -> None:
    hulh = limit_rules("hulh")
    assert hulh is not None
    assert (hulh.blinds, hulh.big_blind, hulh.raise_size) == ((10, 5), 10, (10, 10, 20, 20))
    assert (hulh.max_raises, hulh.first_player, hulh.board_cards) == ((3, 4, 4, 4), (1, 0, 0, 0), (0, 3, 1, 1))


def test_limit_rules_agree_with_openspiels_play() -> None:
    """The first player of each round and the blinds, as OpenSpiel's states play them on ``holdem-6``."""
    game = OpenSpielGame(HOLDEM_6.removeprefix("openspiel:"))
    rules = limit_rules(game)
    assert rules is not None and rules == limit_rules(game.pyspiel_game)
    state = game.pyspiel_game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    assert state.current_player() == rules.first_player[0]
    folded = state.child(0)  # the small blind folds at once: the big blind wins it
    big = rules.blinds.index(rules.big_blind)
    assert folded.returns()[big] == min(rules.blinds)
    state = state.child(1).child(1)  # call, check: the board is dealt
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    assert state.current_player() == rules.first_player[1]


@pytest.mark.parametrize(
    "game_id",
    ["openspiel:leduc_poker", "rlcard:leduc-holdem", "openspiel:universal_poker", "openspiel:kuhn_poker"],
)
def test_a_game_that_is_not_two_player_limit_universal_poker_has_no_limit_rules(game_id: str) -> None:
    assert limit_rules(game_id) is None and not is_limit_holdem(game_id)
    assert limit_rules(adapters.load_game(game_id)) is None


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ("numHoleCards=3", "3 hole cards; the public-tree engine handles at most 2"),
        ("numRounds=3,numBoardCards=0 1 1,raiseSize=100 100 100,maxRaises=3 3", "maxRaises='3 3' for 3 rounds"),
        ("maxRaises=3 3,potSize=100", "potSize set, a subgame"),
    ],
)
def test_a_limit_game_the_public_tree_engine_does_not_model_is_refused(parameters: str, message: str) -> None:
    game_id = f"openspiel:universal_poker(betting=limit,numRanks=13,{parameters})"
    assert is_limit_holdem(game_id)
    with pytest.raises(UnsupportedGameError, match=message) as refused:
        limit_rules(game_id)
    assert isinstance(refused.value, InputError) and "\n" not in str(refused.value)


def test_limit_betting_under_fullgame_is_refused_in_one_line() -> None:
    with pytest.raises(UnknownGameError, match="bettingAbstraction=fullgame breaks limit betting") as refused:
        adapters.load_game(FULLGAME)
    assert "\n" not in str(refused.value)
    with pytest.raises(UnknownGameError, match="fullgame"):
        limit_rules(pyspiel.load_game(FULLGAME.removeprefix("openspiel:")))
    assert adapters.load_game("openspiel:universal_poker(bettingAbstraction=fullgame)").num_distinct_actions > 3


def test_the_command_line_refuses_fullgame_limit_betting_with_status_2() -> None:
    result = run_cli(["opponents", "--game", FULLGAME])
    assert result.status == 2 and result.out == ""
    assert result.err.startswith("cfr-agents: error: ") and len(result.err.splitlines()) == 1
    assert "bettingAbstraction=fullgame breaks limit betting in OpenSpiel 2.0.2" in result.err


def test_an_unknown_name_is_the_one_line_unknown_game_error() -> None:
    with pytest.raises(UnknownGameError, match=r"must look like 'openspiel:leduc_poker'.*named game: fhp") as refused:
        adapters.load_game("fhq")
    assert "\n" not in str(refused.value)
    result = run_cli(["opponents", "--game", "fhq"])
    assert result.status == 2 and len(result.err.splitlines()) == 1 and "'fhq'" in result.err


@pytest.mark.parametrize(("trained", "played"), [("holdem-6", HOLDEM_6), (HOLDEM_6, "holdem-6")])
def test_a_policy_trained_under_one_spelling_plays_under_the_other(tmp_path: Path, trained: str, played: str) -> None:
    out = tmp_path / "policy.json"
    argv = ["train", "--game", trained, "--algo", "cfr+", "--iterations", "2", "--quiet", "--out", str(out)]
    assert run_cli(argv).status == 0
    policy = load_policy(out)
    game = adapters.load_game(played)
    assert (policy.game_id, policy.rules_fingerprint) == (game.game_id, game.rules_fingerprint)
    policy.strategy_on(compile_tree(game))
    match = run_cli(["match", str(out), "random", "--game", played, "--hands", "4", "--json"])
    assert match.status == 0, match.err


def test_universal_poker_games_openspiel_would_crash_on_are_refused() -> None:
    """OpenSpiel's ACPC game reader prints a line, returns no game, and the process dies with a segmentation
    fault on each of these; they are tried in a child process, which must live to report every refusal."""
    cases = {
        "numRounds=5": "numRounds must be from 1 to 4, got 5",
        "numRounds=0": "numRounds must be from 1 to 4, got 0",
        "numPlayers=11": "numPlayers must be from 2 to 10, got 11",
        "numHoleCards=4,numRanks=13": "numHoleCards must be from 1 to 3, got 4",
        "numPlayers=3": "stack gives 2 values for 3 players",
        "numPlayers=3,stack=9 9 9": "blind gives 2 values for 3 players",
        "blind=100 2000": "blind 2000 of player 1 is more than its stack 1200",
        "numRounds=3,firstPlayer=1 1 1": "numBoardCards gives 2 values for 3 rounds",
        "betting=limit,numRounds=3,numBoardCards=0 1 1,maxRaises=3 3 3": "raiseSize gives 2 values for 3 rounds",
        "firstPlayer=3 1": "firstPlayer of round 1 must be from 1 to 2, got 3",
    }
    script = (
        "import sys, adapters\n"
        "for parameters in sys.argv[1:]:\n"
        "    try:\n"
        "        adapters.load_game(f'openspiel:universal_poker({parameters})')\n"
        "        print('loaded')\n"
        "    except adapters.InputError as error:\n"
        "        print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, *cases], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result
    lines = result.stdout.splitlines()
    assert len(lines) == len(cases)
    for line, message in zip(lines, cases.values(), strict=True):
        assert message in line
