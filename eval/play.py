r"""A human against an agent: the human's seat, what the human sees of a hand, and a session of hands.

The hands are played in the real environment, as matches play them (:mod:`eval.match`): RLCard's env for
``rlcard:`` games, ``pyspiel`` states for ``openspiel:`` games (the named hold'em games too). The agent plays as it
does in a match: on an ``rlcard:`` game with a compiled tree, its exact strategy sampled from its own generator
(:meth:`~eval.agents.Agent.rlcard_player`); on ``rlcard:limit-holdem``, in the env itself
(:meth:`~eval.agents.Agent.rlcard_env_player`); on an ``openspiel:`` game, as an OpenSpiel policy
(:meth:`~eval.agents.Agent.match_policy`, or :meth:`~eval.agents.Agent.openspiel_player` on a game that runs on
its public tree). The human is a player of the same kind (:class:`Human`: ``eval_step`` for RLCard's env,
``action_probabilities`` for OpenSpiel's states) that shows the hand so far (:class:`View`) and asks a
:data:`Chooser` for the move: :class:`Terminal` reads it from a text stream, by number or by name.

What the human sees (:func:`render_view`): its own cards, the public cards, the chips each player has put in the
pot, the hand's history (every action and every public card, in order) and the legal actions, each numbered by
its action id in the game (the number a hand log and a policy file use: a number means the same action in every
state of a game). Cards are named as the toolkit names them: RLCard's names (``SK``, ``HA``), OpenSpiel's
hold'em cards by rank and suit (``As``, ``Kh``: :func:`adapters.holdem.cards.card_name`), Kuhn's ``J Q K``, and
OpenSpiel Leduc's six cards by rank and suit (``Js Jh Qs Qh Ks Kh``; OpenSpiel deals rank ``card // 2``).

Seeds: ``seed`` is a :class:`numpy.random.SeedSequence` whose children drive the deals, the agent and the
human's seat as a player (its answer is one action with probability 1, so its draws decide nothing); each hand's
deal is one draw from the deal stream, so the same seed gives the same deals, and the same moves the same hands.

Scoring (:meth:`Session.score`), on games whose compiled tree holds them (Kuhn, Leduc in both toolkits, the
small hold'em games): each complete hand is mapped onto the tree as the hand log maps it
(:class:`~eval.hand_log.HandReader`) and valued with AIVAT (:class:`~eval.aivat.Aivat`) for the human's seat,
the agent's exact strategy the known one. A hand's AIVAT value is its payoff minus the change in expected value
that the cards and the agent's own draws brought (each correction has expectation zero given the hand so far),
so the mean over the hands is an unbiased estimate of the human's expected result per hand against the agent,
with the luck of the cards and of the agent's sampling removed: what the human's choices are worth. Beside it,
the agent's exploitability (:meth:`eval.match.Agents.score`): what a best response to the agent wins per hand,
averaged over both seats, the most any play can expect against it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np
import pyspiel
import rlcard

import adapters
from adapters.base import NUM_PLAYERS
from adapters.games import NAMED_GAMES
from adapters.holdem.cards import card_name
from adapters.inputs import InputError, ParameterError
from adapters.openspiel import OpenSpielGame
from adapters.rlcard import RLCardGame
from cfr_agents.tree import load_tree
from eval import holdem
from eval.aivat import Aivat
from eval.environments import Z_95, OpenSpielPolicy, RLCardAgent, draw, reset_hand
from eval.hand_log import HandReader
from eval.match import Agents, no_tree, off_tree, openspiel_seat, rlcard_seat
from eval.opponents import is_file_name, load_opponent

QUIT_WORDS = ("q", "quit")
"""What ends a session at a prompt (any case)."""
PROMPT = "your move> "
MAX_LINE = 1024
"""The most bytes (characters, from a text stream) of a line read as a move, its line break included: a longer
line is skipped to its end and asked again."""


class Quit(Exception):
    """The human ended the session: typed ``q`` or ``quit``, or the input ended."""


@dataclass(frozen=True)
class Event:
    """A step of a hand as both players see it: an action of ``player`` (0 or 1) named ``text``, or, with
    ``player`` -1, public cards dealt at once (``text`` their names, space-separated)."""

    player: int
    text: str


@dataclass(frozen=True)
class View:
    """What the human sees at a decision."""

    hand: int
    """The hand's number in the session, from 1."""
    seat: int
    agent: str
    cards: tuple[str, ...]
    """The human's private cards."""
    board: tuple[str, ...] | None
    """The public cards dealt so far, a group per deal (``("C4 D3 SJ", "S7")``); ``None`` in a game without any."""
    chips: tuple[float, float] | None
    """The chips each seat has put in the pot; ``None`` where the game does not say."""
    history: tuple[Event, ...]
    legal: tuple[tuple[int, str], ...]
    """The legal actions: ``(action id, name)``, in id order."""


Chooser = Callable[[View], int]
"""Asked at each of the human's decisions: the action id chosen among ``view.legal``; raises :class:`Quit` to end
the session."""


@dataclass(frozen=True)
class HandOutcome:
    """A complete hand."""

    number: int
    seat: int
    payoff: float
    """The human's payoff, in the game's units."""
    cards: tuple[tuple[str, ...], tuple[str, ...]]
    """Each seat's private cards."""
    board: tuple[str, ...] | None
    history: tuple[Event, ...]
    showdown: bool
    """Whether the hand ended at a showdown (no one folded)."""


def read_move(text: str, legal: Sequence[tuple[int, str]]) -> int | str:
    """The action id ``text`` names among ``legal`` -- its number, its name in any case, or a prefix of one name
    only -- or else a one-line hint that says what to type."""
    word = text.strip()
    folded = word.casefold()
    if re.fullmatch(r"[0-9]+", word):
        if int(word) in (action for action, _ in legal):
            return int(word)
        problem = f"{_shown(word)} is not the number of a legal move here"
    elif not word:
        problem = "type a move"
    else:
        exact = [action for action, name in legal if name.casefold() == folded]
        starts = [action for action, name in legal if name.casefold().startswith(folded)]
        if exact or len(starts) == 1:
            return (exact or starts)[0]
        problem = (
            f"{_shown(word)} could be {' or '.join(name for action, name in legal if action in starts)}"
            if starts
            else f"{_shown(word)} is not a legal move here"
        )
    return f"{problem}: {what_to_type(legal)}"


def what_to_type(legal: Sequence[tuple[int, str]]) -> str:
    """``type 0 or Pass, 1 or Bet (q quits)``."""
    return f"type {', '.join(f'{action} or {name}' for action, name in legal)} (q quits)"


def _shown(text: str) -> str:
    return repr(text) if len(text) <= 30 else f"{text[:20]!r}... ({len(text):,} characters)"


def render_view(view: View) -> str:
    """The hand as the human sees it at a decision, with the legal moves numbered."""
    lines = [f"Hand {view.hand}: you are player {view.seat}, the agent ({view.agent}) player {1 - view.seat}"]
    lines.append(f"  your cards  {' '.join(view.cards) or '-'}")
    if view.board is not None:
        lines.append(f"  board       {' | '.join(view.board) or '-'}")
    if view.chips is not None:
        mine, theirs = view.chips[view.seat], view.chips[1 - view.seat]
        lines.append(f"  pot         {_number(mine + theirs)} chips: you {_number(mine)}, agent {_number(theirs)}")
    lines.append(f"  history     {render_history(view.history, view.seat)}")
    lines.append("  moves       " + "  ".join(f"[{action}] {name}" for action, name in view.legal))
    return "\n".join(lines)


def render_history(history: Sequence[Event], seat: int) -> str:
    """``you: raise, agent: call | SQ | agent: check``: the actions in order, public cards between bars."""
    text = ""
    for event in history:
        if event.player < 0:
            text += f" | {event.text} |"
        else:
            who = "you" if event.player == seat else "agent"
            text += ("" if not text or text.endswith("|") else ",") + f" {who}: {event.text}"
    return text.strip().removesuffix("|").strip() or "-"


def render_outcome(outcome: HandOutcome, units: str, total: float, hands: int, big_blind: float | None) -> str:
    """The end of a hand: its whole history, both hands at a showdown, the result, and the running total."""
    seat = outcome.seat
    lines = [f"Hand {outcome.number} is over.", f"  history     {render_history(outcome.history, seat)}"]
    if outcome.showdown:
        mine, theirs = (" ".join(outcome.cards[s]) or "-" for s in (seat, 1 - seat))
        lines.append(f"  showdown    you {mine}, agent {theirs}")
    else:
        folder = next(event.player for event in reversed(outcome.history) if event.player >= 0)
        lines.append(f"  fold        {'you fold' if folder == seat else 'the agent folds'}")
    if outcome.payoff > 0:
        result = f"you win {_amount(outcome.payoff, units)}"
    elif outcome.payoff < 0:
        result = f"you lose {_amount(-outcome.payoff, units)}"
    else:
        result = "a tie: nothing changes hands"
    lines.append(f"  result      {result}")
    rate = _rate(total, hands, units, big_blind)
    lines.append(f"  total       {_signed(total)} {units} after {_count(hands, 'hand')}{rate}")
    return "\n".join(lines)


def _number(value: float) -> str:
    return f"{value:.6g}"


def _signed(value: float, digits: int = 6) -> str:
    return f"{value:+.{digits}g}"


def _amount(value: float, units: str) -> str:
    return f"{_number(value)} {'chip' if units == 'chips' and value == 1 else units}"


def _count(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _rate(total: float, hands: int, units: str, big_blind: float | None) -> str:
    """`` (+0.5 chips/hand)``, with mbb/hand for games with a big blind; one hand's total in mbb."""
    if hands < 2:
        return "" if big_blind is None or not hands else f" ({_signed(total / big_blind * 1000, 4)} mbb)"
    per_hand = total / hands
    mbb = "" if big_blind is None else f", {_signed(per_hand / big_blind * 1000, 4)} mbb/hand"
    return f" ({_signed(per_hand, 4)} {units}/hand{mbb})"


def game_name(game_id: str) -> str:
    """The short name of a named game (``holdem-6``), any other id as it is."""
    return next((name for name, named in NAMED_GAMES.items() if named.game_id == game_id), game_id)


class Terminal:
    """A human at a text stream: each decision is shown (:func:`render_view`), then lines are read from ``source``
    until one names a legal move (:func:`read_move`); a line that does not is answered with a one-line hint and
    asked again. ``q`` or ``quit``, or the end of the input, raises :class:`Quit`. Lines are read as bytes when
    the stream has them (``sys.stdin.buffer``) and decoded as UTF-8 with replacement, so no byte is an error; a
    line longer than :data:`MAX_LINE` is skipped to its end and asked again. A move read from a stream that is not
    a terminal is echoed after the prompt, so a scripted session's transcript shows it."""

    def __init__(self, source: IO[Any] | None, sink: IO[str], *, echo: bool | None = None) -> None:
        self.source = getattr(source, "buffer", source)
        self.sink = sink
        self.echo = not _is_terminal(source) if echo is None else echo
        self.cut = False
        """Whether the last line read was longer than :data:`MAX_LINE` (the rest of it skipped)."""

    def show(self, text: str) -> None:
        self.sink.write(text + "\n")
        self.sink.flush()

    def choose(self, view: View) -> int:
        self.show(render_view(view))
        while True:
            text = self.read_line(PROMPT)
            if text is None or text.strip().casefold() in QUIT_WORDS:
                raise Quit("the input ended" if text is None else "you quit")
            move = None if self.cut else read_move(text, view.legal)
            if isinstance(move, int):
                return move
            self.show(move or f"a line longer than {MAX_LINE - 1:,} characters is no move: {what_to_type(view.legal)}")

    def read_line(self, prompt: str) -> str | None:
        """One line without its line break, or ``None`` at the end of the input; a stream that cannot be read is
        an :class:`InputError`."""
        self.sink.write(prompt)
        self.sink.flush()
        if self.source is None:
            line: str | bytes = ""
        else:
            try:
                line = self.source.readline(MAX_LINE)
                self.cut = len(line) == MAX_LINE and not _ends_line(line)
                rest = line
                while rest and not _ends_line(rest):  # skip the rest of a long line
                    rest = self.source.readline(MAX_LINE)
            except (OSError, ValueError) as error:
                self.sink.write("\n")
                raise InputError(f"cannot read the moves from the standard input: {error}") from None
        if not line:
            self.sink.write("\n")
            return None
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        text = text.rstrip("\r\n")
        if self.echo:
            self.sink.write((text if text.isprintable() and len(text) <= 30 else _shown(text)) + "\n")
        return text


def _ends_line(text: str | bytes) -> bool:
    return text.endswith(b"\n") if isinstance(text, bytes) else text.endswith("\n")


def _is_terminal(stream: IO[Any] | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, OSError, ValueError):
        return False


class _Table:
    """The hand in play as the loop sees it (both seats' cards): what a :class:`View` and a :class:`HandOutcome`
    are made of."""

    def __init__(self, number: int, seat: int, agent: str, has_board: bool) -> None:
        self.number = number
        self.seat = seat
        self.agent = agent
        self.cards: tuple[list[str], list[str]] = ([], [])
        self.board: list[str] | None = [] if has_board else None
        self.chips: tuple[float, float] | None = None
        self.history: list[Event] = []

    def act(self, player: int, name: str) -> None:
        self.history.append(Event(player, name))

    def deal_public(self, names: Sequence[str]) -> None:
        """Public cards: joined to the last group when no one acted since it was dealt."""
        if not names:
            return
        if self.history and self.history[-1].player < 0:
            names = [self.history.pop().text, *names]
            if self.board:
                self.board.pop()
        text = " ".join(names)
        self.history.append(Event(-1, text))
        if self.board is not None:
            self.board.append(text)

    def view(self, legal: Sequence[tuple[int, str]]) -> View:
        return View(
            hand=self.number,
            seat=self.seat,
            agent=self.agent,
            cards=tuple(self.cards[self.seat]),
            board=None if self.board is None else tuple(self.board),
            chips=self.chips,
            history=tuple(self.history),
            legal=tuple(legal),
        )

    def outcome(self, payoff: float) -> HandOutcome:
        return HandOutcome(
            number=self.number,
            seat=self.seat,
            payoff=payoff,
            cards=(tuple(self.cards[0]), tuple(self.cards[1])),
            board=None if self.board is None else tuple(self.board),
            history=tuple(self.history),
            showdown=not _folded(self.history),
        )


def _folded(history: Sequence[Event]) -> bool:
    """Whether the hand ended with a fold: its last action is named ``fold``, or is Kuhn's ``pass`` facing a bet."""
    actions = [event.text.casefold() for event in history if event.player >= 0]
    return bool(actions) and (actions[-1] == "fold" or (actions[-1] == "pass" and "bet" in actions[:-1]))


class Human:
    """The human's seat, a player of both toolkits: RLCard's env asks it ``eval_step(state)``, OpenSpiel's states
    ``action_probabilities(state)``; either way it shows the hand so far and asks ``chooser``, and answers with
    that one action (probability 1)."""

    use_raw = False

    def __init__(self, chooser: Chooser, names: Sequence[str]) -> None:
        self.chooser = chooser
        self.names = list(names)
        self.table: _Table | None = None

    def _ask(self, legal: Sequence[int]) -> int:
        if self.table is None:
            raise RuntimeError("the human is asked outside a hand")
        ordered = sorted(int(action) for action in legal)
        choice = self.chooser(self.table.view([(action, self.names[action]) for action in ordered]))
        if choice not in ordered:
            raise InputError(f"the move {choice} is not legal here (legal: {ordered})")
        return choice

    def eval_step(self, state: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return self._ask(list(state["legal_actions"])), {}

    def step(self, state: dict[str, Any]) -> int:
        return self.eval_step(state)[0]

    def action_probabilities(self, state: Any, player_id: int | None = None) -> dict[int, float]:
        return {self._ask(state.legal_actions()): 1.0}


class _Dealer:
    """Plays one hand in a toolkit's environment."""

    has_board: bool

    def play(self, table: _Table, deal_seed: int) -> float:
        """Play the hand, the human in ``table.seat``; the human's payoff."""
        raise NotImplementedError


class _RLCardDealer(_Dealer):
    """RLCard's env, one hand as ``env.run(is_training=False)`` plays it, the engine's generator reseeded with each
    hand's deal seed (as :func:`eval.environments.play_rlcard_match` does)."""

    def __init__(self, game: RLCardGame, agent: RLCardAgent, human: Human, reader: HandReader | None) -> None:
        self.game = game
        self.agent = agent
        self.human = human
        self.reader = reader
        self.env = rlcard.make(game.spec.env_id)
        self.deals = np.random.RandomState(0)
        self.env.game.np_random = self.deals
        self.has_board = game.spec.env_id != "kuhn-poker"

    def play(self, table: _Table, deal_seed: int) -> float:
        env, seat = self.env, table.seat
        self.deals.seed(deal_seed)
        players: tuple[RLCardAgent, RLCardAgent] = (self.human, self.agent) if seat == 0 else (self.agent, self.human)
        state, player = reset_hand(env)
        self._observe(table)
        while not env.game.is_over():
            actor = players[player]
            action, _ = actor.eval_step(state)
            name = action if isinstance(action, str) else self.game.actions[int(action)]
            table.act(int(player), name)
            state, player = env.step(action, actor.use_raw)
            self._observe(table)
        if self.reader is not None:
            self.reader.rlcard_hand(env, seat)
        return float(env.get_payoffs()[seat])

    def _observe(self, table: _Table) -> None:
        """The cards, the new public cards and the chips, from the env's perfect information."""
        seen = self.env.get_perfect_information()
        for seat, cards in enumerate(seen["hand_cards"]):
            table.cards[seat][:] = [str(card) for card in ([cards] if isinstance(cards, str) else cards)]
        public = seen.get("public_card")
        public = [] if public is None else [str(public)] if isinstance(public, str) else [str(c) for c in public]
        shown = [card for group in table.board or [] for card in group.split()]
        table.deal_public(public[len(shown) :])
        chips = seen.get("chips")
        if chips is not None:
            table.chips = (float(chips[0]), float(chips[1]))
        else:  # Kuhn: an ante of 1, and 1 a bet
            table.chips = _kuhn_chips(table.history)


def _kuhn_chips(history: Sequence[Event]) -> tuple[float, float]:
    bets = [sum(1 for e in history if e.player == p and e.text.casefold() == "bet") for p in range(NUM_PLAYERS)]
    return 1.0 + bets[0], 1.0 + bets[1]


class _OpenSpielDealer(_Dealer):
    """``pyspiel`` states: chance outcomes drawn from a generator seeded with the hand's deal seed (as
    :func:`eval.environments.play_openspiel_match` does), each player's answer drawn from its own generator."""

    def __init__(
        self,
        game: OpenSpielGame,
        agent: OpenSpielPolicy,
        human: Human,
        rngs: tuple[np.random.Generator, np.random.Generator],
        reader: HandReader | None,
    ) -> None:
        self.game = game
        self.agent = agent
        self.human = human
        self.rngs = rngs
        """The agent's generator and the human's."""
        self.reader = reader
        pyspiel_game = game.pyspiel_game
        self.kind = pyspiel_game.get_type().short_name
        self.parameters = pyspiel_game.get_parameters()
        self.has_board = self.kind == "leduc_poker" or (
            self.kind == "universal_poker" and any(int(n) for n in str(self.parameters["numBoardCards"]).split())
        )
        self.root = pyspiel_game.new_initial_state()

    def play(self, table: _Table, deal_seed: int) -> float:
        seat = table.seat
        chance = np.random.default_rng(deal_seed)
        agent_rng, human_rng = self.rngs
        players: tuple[OpenSpielPolicy, OpenSpielPolicy] = (
            (self.human, self.agent) if seat == 0 else (self.agent, self.human)
        )
        rngs = (human_rng, agent_rng) if seat == 0 else (agent_rng, human_rng)
        state = self.game.pyspiel_game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcome = draw(dict(state.chance_outcomes()), chance)
                self._deal(table, state, outcome)
                state.apply_action(outcome)
            else:
                player = int(state.current_player())
                table.chips = self._chips(state, table.history)
                action = draw(players[player].action_probabilities(state), rngs[player])
                table.act(player, action_name(state.action_to_string(player, action)))
                state.apply_action(action)
        if self.reader is not None:
            self.reader.openspiel_hand(state, seat)
        return float(state.returns()[seat])

    def _deal(self, table: _Table, state: pyspiel.State, outcome: int) -> None:
        """A chance outcome is a private card of the one seat whose information state tells it from another outcome
        of the same event, and public when both seats' do (as :func:`eval.hand_log.replay_hand` tells them)."""
        seers = seen_by(state, outcome)
        name = openspiel_card(state, outcome)
        if len(seers) == 1:
            table.cards[seers[0]].append(name)
        else:
            table.deal_public([name])

    def _chips(self, state: pyspiel.State, history: Sequence[Event]) -> tuple[float, float] | None:
        """The chips each seat has put in: Kuhn's antes and bets; Leduc's antes and what left each seat's money
        since the deal; ``universal_poker``'s ``Spent`` line."""
        if self.kind == "kuhn_poker":
            return _kuhn_chips(history)
        if self.kind == "leduc_poker":
            now, start = _numbers(_LEDUC_MONEY, str(state)), _numbers(_LEDUC_MONEY, str(self.root))
            pot = _numbers(_LEDUC_POT, str(self.root))
            if now is None or start is None or pot is None:
                return None
            ante = pot[0] / NUM_PLAYERS
            return ante + start[0] - now[0], ante + start[1] - now[1]
        if self.kind == "universal_poker":
            spent = _numbers(_SPENT, str(state))
            return None if spent is None else (spent[0], spent[1])
        return None


def seen_by(state: pyspiel.State, outcome: int) -> list[int]:
    """The seats that see the chance ``outcome`` dealt at ``state``: those whose information state tells it from
    another outcome of the same event (one seat: a private card; both: a public one)."""
    other = next((o for o, _ in state.chance_outcomes() if o != outcome), outcome)
    dealt, instead = state.child(outcome), state.child(other)
    return [p for p in range(NUM_PLAYERS) if dealt.information_state_string(p) != instead.information_state_string(p)]


def openspiel_card(state: pyspiel.State, outcome: int) -> str:
    """The name of the card the chance ``outcome`` deals at ``state`` (module docstring): Kuhn's ``J Q K``, Leduc's
    ``Js``-``Kh``, hold'em cards by rank and suit; the game's own name of the outcome in other games."""
    game = state.get_game()
    kind, parameters = game.get_type().short_name, game.get_parameters()
    if kind == "kuhn_poker" and int(parameters["players"]) == NUM_PLAYERS:
        return "JQK"[outcome]
    if kind == "leduc_poker" and int(parameters["players"]) == NUM_PLAYERS:
        return "JQK"[outcome] if parameters["suit_isomorphism"] else "JQK"[outcome // 2] + "sh"[outcome % 2]
    if kind == "universal_poker":
        return card_name(outcome, int(parameters["numSuits"]))
    return action_name(state.action_to_string(pyspiel.PlayerId.CHANCE, outcome))


_LEDUC_MONEY = re.compile(r"Money \(player_0 player_1\): (-?\d+) (-?\d+)")
_LEDUC_POT = re.compile(r"Pot: (\d+)")
_SPENT = re.compile(r"Spent: \[P0: (\d+)\s+P1: (\d+)")


def _numbers(pattern: re.Pattern[str], text: str) -> tuple[float, ...] | None:
    found = pattern.search(text)
    return None if found is None else tuple(float(group) for group in found.groups())


def action_name(text: str) -> str:
    """OpenSpiel's name of an action without the ``player=N move=`` of ``universal_poker`` (``Fold``, ``Call``,
    ``Bet``)."""
    return re.sub(r"^player=-?\d+ move=", "", text)


class _Hands(HandReader):
    """Every complete hand as the adapter's history on the compiled tree (:class:`~eval.hand_log.HandReader`),
    with the human's seat, for AIVAT at the end."""

    def __init__(self, game_id: str) -> None:
        super().__init__(game_id)
        self.hands: list[tuple[int, tuple[int, ...]]] = []

    def record(self, a_seat: int, history: Sequence[int], payoffs: Sequence[float]) -> None:
        self.hands.append((a_seat, tuple(history)))

    def close(self) -> None:
        """Nothing held."""


@dataclass(frozen=True)
class PlaySpec:
    """A session as plain data."""

    game_id: str
    agent: str
    seat: int | None = None
    """The human's seat in every hand; ``None``: seats in turn, seat 0 first."""
    hands: int | None = None
    """The hands after which the session ends; ``None``: until the human quits or the input ends."""
    seed: int = 0


@dataclass(frozen=True)
class Estimate:
    """A mean per hand with its standard error (``nan`` from fewer than two hands)."""

    hands: int
    mean: float
    standard_error: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Estimate:
        samples = np.asarray(values, dtype=np.float64)
        error = float(samples.std(ddof=1)) / math.sqrt(len(samples)) if len(samples) > 1 else math.nan
        return cls(len(samples), float(samples.mean()), error)

    @property
    def ci95(self) -> tuple[float, float]:
        return self.mean - Z_95 * self.standard_error, self.mean + Z_95 * self.standard_error


@dataclass(frozen=True)
class Score:
    """The session scored (:meth:`Session.score`): AIVAT and the best-response value, or why either is missing."""

    result: Estimate | None
    """The human's plain payoff per hand."""
    aivat: Estimate | None
    aivat_note: str
    best_response: float | None
    """The agent's exploitability: what a best response wins per hand against it, over both seats."""
    best_response_note: str


@dataclass
class Session:
    """A human against an agent: :meth:`start` checks the game and the agent and seats them, :meth:`play` plays
    hands until the spec's number of hands or until the chooser quits; :attr:`outcomes` holds every complete hand
    (also when play stops on an error or an interrupt)."""

    spec: PlaySpec
    agents: Agents
    units: str
    big_blind: float | None
    dealer: _Dealer
    human: Human
    reader: _Hands | None
    deal_rng: np.random.Generator
    outcomes: list[HandOutcome] = field(default_factory=list)
    ended: str = ""
    """Why play stopped: the hands asked for were played, or the :class:`Quit`'s reason (``"you quit"``, ``"the input
    ended"``); empty while it runs."""

    @classmethod
    def start(cls, spec: PlaySpec, chooser: Chooser, agents: Agents | None = None) -> Session:
        """Load the game and the agent (an unknown one, or an agent of another game, is refused in one line) and
        seat them; the human is asked through ``chooser``."""
        if spec.seat not in (None, 0, 1):
            raise InputError(f"a seat is 0 or 1, not {spec.seat}")
        if spec.hands is not None and spec.hands < 1:
            raise InputError(f"a session plays at least 1 hand, not {spec.hands}")
        agents = agents or Agents()
        game = adapters.load_game(spec.game_id)
        opponent = agents.opponent(spec.agent, spec.game_id)
        deal_seq, agent_seq, human_seq = np.random.SeedSequence(spec.seed).spawn(3)
        agent_rng, human_rng = np.random.default_rng(agent_seq), np.random.default_rng(human_seq)
        human = Human(chooser, [game.action_name(action) for action in range(game.num_distinct_actions)])
        compiled = not no_tree(spec.game_id) and not holdem.on_public_tree(spec.game_id)
        reader = _Hands(spec.game_id) if compiled else None
        dealer: _Dealer
        if isinstance(game, RLCardGame):
            human.names = list(game.actions)
            dealer = _RLCardDealer(game, rlcard_seat(opponent.agent, game, agent_rng), human, reader)
        elif isinstance(game, OpenSpielGame):
            human.names = [action_name(name) for name in human.names]
            policy = openspiel_seat(opponent.agent, spec.game_id)
            dealer = _OpenSpielDealer(game, policy, human, (agent_rng, human_rng), reader)
        else:
            raise InputError(f"play seats a human at OpenSpiel and RLCard games, not {spec.game_id}")
        return cls(
            spec=spec,
            agents=agents,
            units=game.units,
            big_blind=holdem.big_blind(spec.game_id, game.units),
            dealer=dealer,
            human=human,
            reader=reader,
            deal_rng=np.random.default_rng(deal_seq),
        )

    @property
    def total(self) -> float:
        """The human's net result so far, in the game's units."""
        return float(sum(outcome.payoff for outcome in self.outcomes))

    def play(self, show: Callable[[str], None] = lambda _: None) -> None:
        """Play hands until the spec's number or until the chooser raises :class:`Quit` (the hand in play then
        does not count); ``show`` gets the end of each hand (:func:`render_outcome`)."""
        spec = self.spec
        while spec.hands is None or len(self.outcomes) < spec.hands:
            number = len(self.outcomes) + 1
            seat = (number - 1) % NUM_PLAYERS if spec.seat is None else spec.seat
            deal_seed = int(self.deal_rng.integers(2**31))
            table = _Table(number, seat, spec.agent, self.dealer.has_board)
            self.human.table = table
            try:
                payoff = self.dealer.play(table, deal_seed)
            except Quit as stop:
                self.ended = str(stop)
                if table.history or any(table.cards):
                    show(f"Hand {number} stopped before its end: it does not count.")
                return
            finally:
                self.human.table = None
            outcome = table.outcome(payoff)
            self.outcomes.append(outcome)
            show(render_outcome(outcome, self.units, self.total, len(self.outcomes), self.big_blind) + "\n")
        self.ended = f"{_count(len(self.outcomes), 'hand')} played, as asked"

    def score(self) -> Score:
        """The plain result per hand, the AIVAT estimate for the human (the agent's exact strategy known) and the
        agent's exploitability, on a game the compiled tree holds; elsewhere each missing one says why."""
        spec = self.spec
        payoffs = [outcome.payoff for outcome in self.outcomes]
        result = Estimate.of(payoffs) if payoffs else None
        reason = self._no_score() or ("" if payoffs else "no complete hand")
        if reason:
            return Score(result, None, reason, None, reason)
        scored = self.agents.score(spec.agent, spec.game_id)
        strategy = self.agents.strategy(spec.agent, spec.game_id)
        aivat: Estimate | None = None
        if isinstance(strategy, str):
            note = f"{spec.agent}'s exact strategy cannot be read: {strategy}"
        elif self.reader is None:
            note = "the hands were not mapped onto the compiled tree"
        else:
            known = Aivat.build(load_tree(spec.game_id), strategy)
            aivat = Estimate.of([known.history_value(history, seat, 1 - seat) for seat, history in self.reader.hands])
            note = ""
        return Score(result, aivat, note, scored.exploitability, scored.note)

    def _no_score(self) -> str:
        """Why the session cannot be scored exactly (empty when it can)."""
        missing = off_tree(self.spec.game_id)
        return (
            f"play scores on the compiled tree, and {game_name(self.spec.game_id)} is not on one ({missing})"
            if missing
            else ""
        )


def render_header(spec: PlaySpec) -> str:
    """The first lines of a session: who plays what, and how to move."""
    seats = "seats 0 and 1 in turn" if spec.seat is None else f"seat {spec.seat}"
    until = "until you type q" if spec.hands is None else f"for {_count(spec.hands, 'hand')} (q stops sooner)"
    return (
        f"You play {spec.agent} at {game_name(spec.game_id)}: you sit in {seats}, {until}; seed {spec.seed}.\n"
        "Type a move's number or its name (any case; its first letters do when no other move begins so).\n"
    )


def render_summary(session: Session, score: Score) -> str:
    """The session's summary: hands, net result, AIVAT and the agent's best-response value."""
    spec, units, big_blind = session.spec, session.units, session.big_blind
    agent = spec.agent
    hands = len(session.outcomes)
    lines = [
        f"Session over ({session.ended or 'stopped'}): {_count(hands, 'hand')} against {agent} "
        f"at {game_name(spec.game_id)}."
    ]
    if score.result is None:
        return lines[0]

    def per_hand(mean: float, error: float = math.nan) -> str:
        mbb = "" if big_blind is None else f" ({_signed(mean / big_blind * 1000, 4)} mbb/hand)"
        shown = "" if math.isnan(error) else f", standard error {error:.4g}"
        return f"{_signed(mean, 4)} {units}/hand{mbb}{shown}"

    total = session.total
    mbb_total = "" if big_blind is None else f" ({_signed(total / big_blind * 1000)} mbb)"
    result = score.result
    lines.append(
        f"  net result     {_signed(total)} {units}{mbb_total}: {per_hand(result.mean, result.standard_error)}"
    )
    if score.aivat is None:
        lines.append(f"  AIVAT          not available: {score.aivat_note}")
    else:
        lines += [
            f"  AIVAT          {per_hand(score.aivat.mean, score.aivat.standard_error)}",
            f"                 your expected result per hand against {agent}'s exact strategy, with the luck of",
            f"                 the cards and of {agent}'s own draws removed: what your choices are worth (unbiased)",
        ]
    if score.best_response is None:
        lines.append(f"  best response  not available: {score.best_response_note}")
    else:
        lines += [
            f"  best response  {per_hand(score.best_response)}",
            f"                 what a best response to {agent} wins per hand over both seats (its exploitability)",
        ]
    return "\n".join(lines)


def game_of(agent: str) -> str:
    """The game the agent file ``agent`` names (a public-tree strategy's sidecar is read alone); a name is refused."""
    if not is_file_name(agent):
        raise ParameterError("give {game}: {agent!r} is not a file that names its game", agent=agent)
    return holdem.file_game(agent) or load_opponent(agent).game_id


__all__ = [
    "PROMPT",
    "QUIT_WORDS",
    "Chooser",
    "Estimate",
    "Event",
    "HandOutcome",
    "Human",
    "PlaySpec",
    "Quit",
    "Score",
    "Session",
    "Terminal",
    "View",
    "action_name",
    "game_of",
    "openspiel_card",
    "read_move",
    "render_header",
    "render_history",
    "render_outcome",
    "render_summary",
    "render_view",
    "seen_by",
    "what_to_type",
]
