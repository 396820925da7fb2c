"""``cfr-agents play``: a human against an agent in a pseudo-terminal and from a pipe, the same deals from the same
seed, AIVAT against the exact value of a scripted human, and bad input refused in one line."""

from __future__ import annotations

import contextlib
import io
import os
import re
import select
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from cfr_agents import Policy
from cfr_agents.tree import load_tree
from eval.head_to_head import exact_head_to_head
from eval.play import PROMPT, Event, PlaySpec, Quit, Session, Terminal, View, read_move, render_history
from tests.support import CliRun, assert_within_standard_errors, run_cli, tree

KUHN = "openspiel:kuhn_poker"
LEDUC = "openspiel:leduc_poker"
RLCARD_LEDUC = "rlcard:leduc-holdem"
SECONDS = 60.0
"""The longest a session started here may run."""


def command(*argv: str) -> list[str]:
    return [sys.executable, "-m", "cfr_agents", "play", *argv]


def one_line_refusal(result: CliRun) -> None:
    lines = result.err.splitlines()
    assert result.status == 2 and len(lines) == 1 and lines[0].startswith("cfr-agents: error: "), result
    assert "Traceback" not in result.err


# --- the terminal ----------------------------------------------------------------------------------------------


def play_on_a_terminal(argv: list[str], answer: Callable[[str], bytes]) -> tuple[int, str]:
    """Run ``argv`` on a pseudo-terminal, typing ``answer(transcript so far)`` at every prompt; its exit status and
    its transcript (what the terminal showed: its output and the echo of what was typed)."""
    master, terminal = os.openpty()
    process = subprocess.Popen(argv, stdin=terminal, stdout=terminal, stderr=terminal, close_fds=True)
    os.close(terminal)
    transcript, answered, deadline = b"", 0, time.monotonic() + SECONDS
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # EIO: the process has closed the terminal
                    break
                if not chunk:
                    break
                transcript += chunk
            if transcript.endswith(PROMPT.encode()) and transcript.count(PROMPT.encode()) > answered:
                os.write(master, answer(transcript.decode().replace("\r\n", "\n")))
                answered += 1
        status = process.wait(timeout=SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    return status, transcript.decode().replace("\r\n", "\n")


def test_a_human_plays_kuhn_on_a_terminal() -> None:
    """Typed moves by name and number, a typo and an out-of-range number asked again, then Ctrl-D at the third
    hand's first prompt: two complete hands, the third not counted, the summary, status 0."""
    script = iter([b"bte\n", b"9\n", b"bet\n"])

    def answer(transcript: str) -> bytes:
        if "Hand 2 is over." in transcript:
            return b"\x04"  # Ctrl-D: the end of the input
        return next(script, b"1\n")

    status, transcript = play_on_a_terminal(command("random", "--game", KUHN, "--seed", "3"), answer)
    assert status == 0, transcript
    assert "Traceback" not in transcript
    assert "'bte' is not a legal move here: type 0 or Pass, 1 or Bet (q quits)" in transcript
    assert "'9' is not the number of a legal move here" in transcript
    assert f"{PROMPT}bte\n" in transcript and "bte\nbte" not in transcript  # the terminal echoes, play does not
    assert re.search(r"your cards  [JQK]\n", transcript) and "moves       [0] Pass  [1] Bet" in transcript
    assert transcript.count("Hand 1 is over.") == 1 and transcript.count("Hand 2 is over.") == 1
    assert "Hand 3 stopped before its end: it does not count." in transcript
    assert "Session over (the input ended): 2 hands against random at openspiel:kuhn_poker." in transcript
    assert "  AIVAT          " in transcript and "  best response  +0.4583 chips/hand" in transcript


# --- pipes and seeds -------------------------------------------------------------------------------------------


@contextlib.contextmanager
def piped_stdin(text: str) -> Iterator[None]:
    """``sys.stdin`` the read end of a pipe holding ``text``, then its end."""
    read, write = os.pipe()
    os.write(write, text.encode())
    os.close(write)
    with open(read, encoding="utf-8") as stream, pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "stdin", stream)
        yield


def play_piped(argv: list[str], text: str) -> CliRun:
    with piped_stdin(text):
        return run_cli(["play", *argv])


def test_piped_moves_play_an_openspiel_game_and_the_seed_fixes_the_deals() -> None:
    moves = "call\n" * 30  # Leduc's Call is legal at every decision
    argv = command("random", "--game", LEDUC, "--hands", "2", "--seed", "7")
    first, second = (subprocess.run(argv, input=moves, capture_output=True, text=True, timeout=SECONDS) for _ in "ab")
    assert first.returncode == 0 and first.stderr == "", first.stderr
    assert first.stdout == second.stdout
    out = first.stdout
    assert "Hand 1 is over." in out and "Hand 2 is over." in out and "Hand 3" not in out
    assert f"{PROMPT}call\n" in out  # a piped move is echoed after its prompt
    assert re.search(r"your cards  [JQK][sh]\n", out)
    assert "Session over (2 hands played, as asked): 2 hands against random at openspiel:leduc_poker." in out
    other = play_piped(["random", "--game", LEDUC, "--hands", "2", "--seed", "8"], moves)
    assert other.status == 0 and other.out != out


def test_piped_moves_play_rlcard_leduc_and_the_seed_fixes_the_deals() -> None:
    moves = "c\n" * 30  # call or check: never both legal in RLCard's Leduc
    argv = ["random", "--game", RLCARD_LEDUC, "--hands", "2", "--seed", "5", "--seat", "1"]
    first, second = (play_piped(argv, moves) for _ in "ab")
    assert first.status == 0 and first.err == "", first
    assert first.out == second.out
    assert first.out.count("you are player 1,") >= 2 and "you are player 0" not in first.out
    assert re.search(r"your cards  [SH][JQK]\n", first.out)
    assert "Session over (2 hands played, as asked): 2 hands against random at rlcard:leduc-holdem." in first.out
    assert re.search(r"net result     [-+][\d.]+ BB \([-+][\d.]+ mbb\)", first.out)


def test_q_ends_the_session_and_an_empty_input_plays_nothing() -> None:
    quit_ = play_piped(["random", "--game", KUHN], "1\n" * 4 + "Q\n" + "1\n" * 10)
    assert quit_.status == 0 and "Session over (you quit): " in quit_.out
    assert "Hand 1 is over." in quit_.out and "stopped before its end" in quit_.out
    nothing = play_piped(["random", "--game", KUHN, "--hands", "3"], "")
    assert nothing.status == 0 and nothing.err == ""
    assert nothing.out.rstrip().endswith(
        "Session over (the input ended): 0 hands against random at openspiel:kuhn_poker."
    )


def test_an_unreadable_input_ends_with_the_summary_and_one_line() -> None:
    class Unreadable(io.RawIOBase):
        def readline(self, size: int | None = -1) -> bytes:
            raise OSError("reading from stdin while output is captured")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "stdin", Unreadable())
        result = run_cli(["play", "random", "--game", KUHN])
    one_line_refusal(result)
    assert "cannot read the moves" in result.err and "Session over (stopped by an error)" in result.out


def test_a_long_line_and_undecodable_bytes_are_asked_again() -> None:
    read, write = os.pipe()
    os.write(write, b"\xff\xfe\n" + b"x" * 5000 + b"\n1\n")
    os.close(write)
    out = io.StringIO()
    with open(read, "rb") as source:
        terminal = Terminal(source, out)
        view = View(1, 0, "random", ("K",), None, (1.0, 1.0), (), ((0, "Pass"), (1, "Bet")))
        assert terminal.choose(view) == 1
    hints = [line for line in out.getvalue().splitlines() if "(q quits)" in line]
    assert len(hints) == 2 and hints[1].startswith("a line longer than 1,023 characters is no move: type 0 or Pass")


# --- what the human sees ---------------------------------------------------------------------------------------


def test_moves_are_read_by_number_name_or_unique_prefix() -> None:
    legal = ((0, "call"), (1, "raise"), (3, "check"))
    assert [read_move(text, legal) for text in ("3", " RAISE ", "ch", "r", "Call")] == [3, 1, 3, 1, 0]
    for text, hint in [
        ("2", "'2' is not the number of a legal move here"),
        ("c", "'c' could be call or check"),
        ("bet", "'bet' is not a legal move here"),
        ("", "type a move"),
    ]:
        answer = read_move(text, legal)
        assert isinstance(answer, str) and answer.startswith(hint) and answer.endswith("(q quits)")
        assert "0 or call, 1 or raise, 3 or check" in answer


def test_the_history_shows_actions_and_public_cards_in_order() -> None:
    history = (Event(1, "Bet"), Event(0, "Call"), Event(-1, "2c 7d Qs"), Event(0, "Call"), Event(-1, "4h"))
    assert render_history(history, 0) == "agent: Bet, you: Call | 2c 7d Qs | you: Call | 4h"
    assert render_history((), 1) == "-"


def call_or_check(view: View) -> int:
    """A calling station: call a bet, check otherwise (Kuhn's ``Bet`` facing a bet, else ``Pass``)."""
    names = {name.casefold(): action for action, name in view.legal}
    facing = bool(view.history) and view.history[-1].player >= 0 and view.history[-1].text.casefold() == "bet"
    if "pass" in names:
        return names["bet" if facing else "pass"]
    return names.get("call", names.get("check", view.legal[0][0]))


GAMES = {
    KUHN: r"[JQK]",
    "rlcard:kuhn-poker": r"[JQK]",
    LEDUC: r"[JQK][sh]",
    RLCARD_LEDUC: r"[SH][JQK]",
    "rlcard:limit-holdem": r"[SHDC][2-9TJQKA] [SHDC][2-9TJQKA]",
    "holdem-6": r"[2-4][cd] [2-4][cd]",
    "hulh": r"[2-9TJQKA][cdhs] [2-9TJQKA][cdhs]",
}
"""Every toolkit's Kuhn and Leduc, RLCard's limit hold'em, and two of OpenSpiel's limit hold'em games, with how
the human's cards are named."""


@pytest.mark.parametrize("game_id", GAMES)
def test_every_game_shows_cards_pot_and_history(game_id: str) -> None:
    seen: list[View] = []

    def chooser(view: View) -> int:
        seen.append(view)
        return call_or_check(view)

    session = Session.start(PlaySpec(game_id, "random", hands=4, seed=2), chooser)
    shown: list[str] = []
    session.play(shown.append)
    assert len(session.outcomes) == 4 and [o.seat for o in session.outcomes] == [0, 1, 0, 1]
    assert seen and all(re.fullmatch(GAMES[game_id], " ".join(view.cards)) for view in seen)
    assert all(view.chips is not None and min(view.chips) > 0 for view in seen)
    assert all(view.legal and view.legal == tuple(sorted(view.legal)) for view in seen)
    for outcome in session.outcomes:
        if outcome.showdown:
            assert re.fullmatch(GAMES[game_id], " ".join(outcome.cards[1 - outcome.seat]))
    assert sum(o.payoff for o in session.outcomes) == pytest.approx(session.total)
    assert all("result      " in text and "total       " in text for text in shown)


def test_the_agents_cards_show_only_at_a_showdown() -> None:
    session = Session.start(PlaySpec(RLCARD_LEDUC, "random", hands=30, seed=1), call_or_check)
    shown: list[str] = []
    session.play(shown.append)
    showdowns = [text for text, o in zip(shown, session.outcomes, strict=True) if o.showdown]
    folds = [text for text, o in zip(shown, session.outcomes, strict=True) if not o.showdown]
    assert showdowns and folds
    assert all("showdown    you " in text for text in showdowns)
    assert all("showdown" not in text and "the agent folds" in text for text in folds)  # the human never folds


# --- AIVAT -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("agent", ["random", "openspiel-cfr+:30"])
def test_aivat_estimates_the_exact_value_of_a_scripted_human(agent: str) -> None:
    """A calling station in both seats for 600 hands: the AIVAT mean is within 4 standard errors of the exact value
    of its strategy against the agent's (:func:`eval.head_to_head.exact_head_to_head`), with a smaller standard
    error than the plain mean's."""
    session = Session.start(PlaySpec(KUHN, agent, hands=600, seed=11), call_or_check)
    session.play()
    score = session.score()
    assert score.aivat is not None and score.result is not None and score.best_response is not None
    compiled = load_tree(KUHN)
    station = np.zeros(compiled.action_mask.shape)
    for row, key in enumerate(compiled.infoset_keys):  # Kuhn's keys: the card, then p (pass) and b (bet)
        station[row, 1 if key.endswith("b") else 0] = 1.0
    strategy = session.agents.strategy(agent, KUHN)
    assert not isinstance(strategy, str)
    exact = exact_head_to_head(compiled, station, strategy).value
    assert_within_standard_errors(score.aivat.mean, exact, score.aivat.standard_error)
    assert score.aivat.hands == 600 and score.aivat.standard_error < score.result.standard_error
    assert score.best_response >= exact


def test_no_aivat_without_a_compiled_tree() -> None:
    session = Session.start(PlaySpec("hulh", "random", hands=2, seed=0), call_or_check)
    session.play()
    score = session.score()
    assert score.aivat is None and score.best_response is None and score.result is not None
    assert score.aivat_note == "play scores on the compiled tree, and hulh is not on one (it runs on its public tree)"


def test_quitting_mid_hand_keeps_the_complete_hands() -> None:
    calls = [0]

    def quits_at_the_fifth_decision(view: View) -> int:
        calls[0] += 1
        if calls[0] == 5:
            raise Quit("you quit")
        return call_or_check(view)

    session = Session.start(PlaySpec(KUHN, "random", seed=0), quits_at_the_fifth_decision)
    session.play()
    assert session.ended == "you quit" and 1 <= len(session.outcomes) < 5


# --- bad input -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nope", "--game", KUHN], "unknown opponent 'nope'"),
        (["random", "--game", "openspiel:nope"], "unknown OpenSpiel game 'nope'"),
        (["random", "--game", "chess"], "game id 'chess' must look like"),
        (["random", "--game", KUHN, "--seat", "2"], "argument --seat: invalid choice: '2'"),
        (["random", "--game", KUHN, "--hands", "0"], "argument --hands: must be a positive integer, got 0"),
        (["random", "--game", KUHN, "--seed", "-1"], "argument --seed: must be a non-negative integer"),
        (["random"], "give --game: 'random' is not a file that names its game"),
        (["rlcard-rule-v1", "--game", LEDUC], "not available for openspiel:leduc_poker"),
    ],
)
def test_bad_input_is_one_line_and_status_2(argv: list[str], message: str) -> None:
    result = play_piped(argv, "1\n")
    one_line_refusal(result)
    assert message in result.err and result.out == ""


def test_an_agent_file_of_another_game_is_refused(tmp_path: Path) -> None:
    Policy.uniform(tree(KUHN)).save(tmp_path / "kuhn.json")
    refused = play_piped([str(tmp_path / "kuhn.json"), "--game", LEDUC], "1\n")
    one_line_refusal(refused)
    assert "not openspiel:leduc_poker" in refused.err
    played = play_piped([str(tmp_path / "kuhn.json"), "--hands", "1"], "1\n1\n")  # the file names its game
    assert played.status == 0 and "at openspiel:kuhn_poker." in played.out
