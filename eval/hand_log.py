r"""The hand log: every hand of a match as one JSON line (JSONL), appended as it is played.

A line is one object (``docs/formats.md`` documents it field by field)::

    {"format": "cfr-agents-hands", "version": 1, "game": "rlcard:leduc-holdem",
     "rules_fingerprint": "sha256:...", "units": "BB", "seats": ["random", "rlcard-rule-v1"],
     "private_cards": [["SK"], ["HK"]], "public_cards": ["SQ"],
     "actions": [[1, 0, "call"], [0, 1, "raise"], [1, 1, "raise"], [0, 0, "call"], [1, 2, "fold"]],
     "history": [4, 5, 1, 0, 1, 1, 0, 2, 2], "private_events": [[0], [1]], "payoffs": [3.0, -3.0]}

``seats[i]`` is the agent in seat ``i`` (the player ``i`` of the game), ``actions`` are
``[seat, action id, action name]`` in order, ``history`` is every id applied to the game's initial
state, chance outcomes included (:func:`adapters.base.replay` rebuilds the hand from it), and
``private_events[i]`` the positions in ``history`` of the chance events only seat ``i`` sees: its
private cards. Card names are RLCard's (``SJ``: the jack of spades; Kuhn ``J``, ``Q``, ``K``) and,
on OpenSpiel games, OpenSpiel's chance outcome ids.

Each line is written with one ``os.write`` to a file opened with ``O_APPEND``: a line is appended
whole, after the lines already there, also when several matches write one log at once, and a match
that stops leaves only complete lines. A log whose last line lacks its line break (a file not written
so) is refused before a hand is played: a hand appended to it would join that line.

:func:`read_hand_log` reads a log back for one game, line by line (each at most
:data:`~adapters.inputs.MAX_LOG_LINE_BYTES`), checking every line against the game itself: its history
must be legal on the game and end at a terminal that pays the logged payoffs, and the cards, private
events and actions it records must be the ones the game deals and names along that history
(:func:`replay_hand`).
"""

from __future__ import annotations

import json
import math
import os
import stat
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import pyspiel

import adapters
from adapters import Game
from adapters.base import NUM_PLAYERS
from adapters.inputs import MAX_LOG_LINE_BYTES, InputError, kind_of, open_regular, parse_json, size_text
from adapters.openspiel import OpenSpielGame
from adapters.rlcard import RLCardGame
from cfr_agents.files import check_writable
from cfr_agents.tree import KIND_CHANCE, KIND_TERMINAL, CompiledTree, load_tree

T = TypeVar("T")

FORMAT = "cfr-agents-hands"
VERSION = 1
PAYOFF_TOLERANCE = 1e-9
"""How far a logged payoff may be from the one the tree pays at the hand's terminal."""


@dataclass(frozen=True)
class Hand:
    """One line of a hand log (the fields the module docstring lists)."""

    game: str
    rules_fingerprint: str
    units: str
    seats: tuple[str, str]
    private_cards: tuple[tuple[str, ...], tuple[str, ...]]
    public_cards: tuple[str, ...]
    actions: tuple[tuple[int, int, str], ...]
    history: tuple[int, ...]
    private_events: tuple[tuple[int, ...], tuple[int, ...]]
    payoffs: tuple[float, float]

    def line(self) -> str:
        """The hand as one line of JSON, ``\\n`` included."""
        fields = {
            "format": FORMAT,
            "version": VERSION,
            "game": self.game,
            "rules_fingerprint": self.rules_fingerprint,
            "units": self.units,
            "seats": list(self.seats),
            "private_cards": [list(cards) for cards in self.private_cards],
            "public_cards": list(self.public_cards),
            "actions": [list(action) for action in self.actions],
            "history": list(self.history),
            "private_events": [list(events) for events in self.private_events],
            "payoffs": list(self.payoffs),
        }
        return json.dumps(fields, separators=(",", ":")) + "\n"


class TreePaths:
    """The compiled tree as Python lookups, to follow a history down it: ``children[n][id]`` is the
    child of node ``n`` by action or chance outcome ``id``."""

    def __init__(self, tree: CompiledTree) -> None:
        self.tree = tree
        starts = tree.child_start.tolist()
        nodes, ids = tree.child_node.tolist(), tree.child_action.tolist()
        self.children: list[dict[int, int]] = [
            dict(zip(ids[starts[n] : starts[n + 1]], nodes[starts[n] : starts[n + 1]], strict=True))
            for n in range(len(starts) - 1)
        ]
        self.kind: list[int] = tree.node_kind.tolist()
        players = tree.infoset_player.tolist()
        self.player: list[int] = [players[i] if i >= 0 else -1 for i in tree.node_infoset.tolist()]
        """The player to act at each node; -1 at chance nodes and terminals."""
        self.terminal: list[int] = tree.node_terminal.tolist()

    def follow(self, history: Sequence[int]) -> list[int]:
        """The nodes the ids of ``history`` lead through, the root first; one id that is not a child
        (an illegal action or outcome) is an :class:`InputError` naming its position."""
        node, nodes = 0, [0]
        for position, action in enumerate(history):
            child = self.children[node].get(action)
            if child is None:
                what = "chance outcome" if self.kind[node] == KIND_CHANCE else "action"
                raise InputError(f"history[{position}] = {action} is not a legal {what} there")
            node = child
            nodes.append(node)
        return nodes

    def complete(self, chance: Sequence[int | None], actions: Sequence[tuple[int, int]]) -> list[int] | None:
        """The history that deals the chance outcomes ``chance`` in order (``None``: any outcome that
        the rest fits) and plays ``actions`` (``(player, id)``) in order, to a terminal; ``None`` if
        there is none."""

        def search(node: int, dealt: int, played: int, history: list[int]) -> list[int] | None:
            kind = self.kind[node]
            if kind == KIND_TERMINAL:
                return history if dealt == len(chance) and played == len(actions) else None
            if kind == KIND_CHANCE:
                if dealt == len(chance):
                    return None
                wanted = chance[dealt]
                options = self.children[node] if wanted is None else [wanted]
                for outcome in options:
                    child = self.children[node].get(outcome)
                    if child is not None:
                        found = search(child, dealt + 1, played, [*history, outcome])
                        if found is not None:
                            return found
                return None
            if played == len(actions) or actions[played][0] != self.player[node]:
                return None
            child = self.children[node].get(actions[played][1])
            return None if child is None else search(child, dealt, played + 1, [*history, actions[played][1]])

        return search(0, 0, 0, [])

    def terminals_like(self, history: Sequence[int], hidden: Collection[int]) -> list[int]:
        """The terminals of every history that is ``history`` but at the positions ``hidden`` (chance
        events), where it may deal any outcome that the rest of ``history`` fits: the hands an observer
        who does not see those events cannot tell from this one."""
        nodes = [0]
        for position, action in enumerate(history):
            if position in hidden:
                nodes = [child for node in nodes for child in self.children[node].values()]
            else:
                nodes = [child for node in nodes if (child := self.children[node].get(action)) is not None]
        return [self.terminal[node] for node in nodes if self.terminal[node] >= 0]


@dataclass(frozen=True)
class Replayed:
    """What the game itself says a history is: the fields of its hand but the seats and payoffs."""

    private_cards: tuple[tuple[str, ...], tuple[str, ...]]
    public_cards: tuple[str, ...]
    actions: tuple[tuple[int, int, str], ...]
    private_events: tuple[tuple[int, ...], tuple[int, ...]]


def replay_hand(game: Game, paths: TreePaths, history: Sequence[int]) -> Replayed:
    """Replay ``history`` (legal on ``paths``' tree, see :meth:`TreePaths.follow`) on ``game``: each action
    as ``[seat, id, the game's name for it]``, and the cards its chance events deal.

    * RLCard (:class:`adapters.rlcard.RLCardGame`): the history deals the game's deal first, in its order
      (each player's card, then the other events, Leduc's small-blind seat); seat ``i`` holds the ``i``-th
      card, a private event; every chance event after the deal deals a public card. Cards are named as the
      game's deck names them.
    * OpenSpiel: on the ``pyspiel`` state, each chance event's outcome is set beside another outcome of the
      same event: the event is private to a seat when only that seat's ``information_state_string`` tells
      the two apart (a dealt card), and public when both seats' do (Leduc's public card). Cards are named by
      their outcome ids.
    """
    names = [game.action_name(action) for action in range(game.num_distinct_actions)]
    private: list[list[int]] = [[] for _ in range(NUM_PLAYERS)]
    private_cards: list[list[str]] = [[] for _ in range(NUM_PLAYERS)]
    public: list[str] = []
    actions: list[tuple[int, int, str]] = []
    if isinstance(game, RLCardGame):
        nodes = paths.follow(history)
        chance = [position for position, node in enumerate(nodes[:-1]) if paths.kind[node] == KIND_CHANCE]
        card_events = [position for position, event in zip(chance, game.spec.deal, strict=False) if event == "card"]
        for seat, position in enumerate(card_events):
            private[seat].append(position)
            private_cards[seat].append(game.deck[history[position]])
        public = [game.deck[history[position]] for position in chance[len(game.spec.deal) :]]
        actions = [
            (paths.player[node], a, names[a])
            for node, a in zip(nodes, history, strict=False)
            if paths.player[node] >= 0
        ]
    elif isinstance(game, OpenSpielGame):
        state = game.pyspiel_game.new_initial_state()
        for position, action in enumerate(history):
            if state.is_chance_node():
                other = next((outcome for outcome, _ in state.chance_outcomes() if outcome != action), action)
                dealt, instead = state.child(action), state.child(other)
                seen_by = [
                    p
                    for p in range(NUM_PLAYERS)
                    if dealt.information_state_string(p) != instead.information_state_string(p)
                ]
                if len(seen_by) == 1:
                    private[seen_by[0]].append(position)
                    private_cards[seen_by[0]].append(str(action))
                else:
                    public.append(str(action))
                state = dealt
            else:
                actions.append((int(state.current_player()), action, names[action]))
                state.apply_action(action)
    else:
        raise InputError(f"hand logs record OpenSpiel and RLCard games, not {game.game_id}")
    return Replayed(
        private_cards=(tuple(private_cards[0]), tuple(private_cards[1])),
        public_cards=tuple(public),
        actions=tuple(actions),
        private_events=(tuple(private[0]), tuple(private[1])),
    )


class HandReader(ABC):
    """Reads each hand a match has just finished -- from RLCard's ``env`` (:meth:`rlcard_hand`) or a terminal
    ``pyspiel`` state (:meth:`openspiel_hand`) -- as the adapter's history of applied ids, and hands it to
    :meth:`record` with ``A``'s seat and the payoffs: the hand log writes it (:class:`HandLog`), AIVAT scores it
    (:class:`eval.aivat.AivatRecorder`)."""

    def __init__(self, game_id: str) -> None:
        self.game_id = game_id
        self.game = adapters.load_game(game_id)
        self._paths: TreePaths | None = None

    @abstractmethod
    def record(self, a_seat: int, history: Sequence[int], payoffs: Sequence[float]) -> None:
        """Take one finished hand: ``A`` sat in ``a_seat``; ``history`` replays it on the adapter."""

    def __enter__(self) -> HandReader:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @abstractmethod
    def close(self) -> None:
        """Release what the reader holds."""

    def rlcard_hand(self, env: Any, a_seat: int) -> None:
        """Read the hand RLCard's ``env`` has just finished.

        The cards come from ``env.get_perfect_information()``, the actions from ``env.action_recorder``.
        The adapter's history deals its chance events in its order (:class:`adapters.rlcard.RLCardGame`:
        each player's card, then the other events of the deal, then the public cards); an event that
        deals no card (Leduc's small-blind seat) is the outcome under which the recorded players acted.
        """
        game = self.game
        assert isinstance(game, RLCardGame)
        seen = env.get_perfect_information()
        hands = [str(card) for card in seen["hand_cards"]]
        public = [] if seen.get("public_card") is None else [str(seen["public_card"])]
        cards = iter(hands)
        deal = [game.deck_index[next(cards)] if event == "card" else None for event in game.spec.deal]
        played = [(int(player), game.actions.index(name)) for player, name in env.action_recorder]
        history = self.paths().complete([*deal, *(game.deck_index[card] for card in public)], played)
        if history is None:
            raise RuntimeError(f"{game.game_id}: the hand {seen} {played} does not replay on the adapter")
        self.record(a_seat, history, tuple(float(u) for u in env.get_payoffs()))

    def openspiel_hand(self, state: pyspiel.State, a_seat: int) -> None:
        """Read the terminal ``pyspiel`` state of a hand just played: its history is ``state.history()``."""
        self.record(a_seat, [int(action) for action in state.history()], tuple(float(u) for u in state.returns()))

    def paths(self) -> TreePaths:
        """The game's paths on its compiled tree, built at the first hand."""
        if self._paths is None:
            self._paths = TreePaths(load_tree(self.game_id))
        return self._paths


class HandLog(HandReader):
    """A hand log open for appending, for one game and the two agents ``A`` and ``B`` of a match: each hand read
    (:class:`HandReader`) is appended as its line. The log must be a regular file (it is created if missing) that
    is empty or ends with a line break."""

    def __init__(self, path: str | os.PathLike[str], game_id: str, agents: tuple[str, str]) -> None:
        self.agents = agents
        self.path = os.fspath(path)
        check_writable(path)  # a FIFO, a device, a directory: refused before it is opened
        super().__init__(game_id)
        try:
            self._descriptor = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
        except OSError as error:
            raise InputError(f"cannot write {self.path!r}: {error.strerror}") from None
        try:
            self._check_ends_a_line()
        except BaseException:
            self.close()
            raise

    def _check_ends_a_line(self) -> None:
        """Refuse a log that is not a regular file (swapped in since it was checked) or whose last line
        lacks its line break."""
        info = os.fstat(self._descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"cannot write {self.path!r}: it is {kind_of(info.st_mode)}")
        if info.st_size and os.pread(self._descriptor, 1, info.st_size - 1) != b"\n":
            raise InputError(
                f"hand log {self.path!r} does not end with a line break: its last line is incomplete, and "
                "a hand appended to it would join that line"
            )

    def close(self) -> None:
        os.close(self._descriptor)

    def write(self, hand: Hand) -> None:
        """Append ``hand``'s line with one ``os.write`` (see the module docstring)."""
        data = hand.line().encode()
        try:
            written = os.write(self._descriptor, data)
        except OSError as error:
            raise InputError(f"cannot write {self.path!r}: {error.strerror}") from None
        if written != len(data):  # only on a full disk or at a file size limit: say so, do not go on
            raise InputError(f"cannot write {self.path!r}: wrote {written} of the {len(data)} bytes of a hand")

    def record(self, a_seat: int, history: Sequence[int], payoffs: Sequence[float]) -> None:
        a, b = self.agents
        game = self.game
        replayed = replay_hand(game, self.paths(), history)
        self.write(
            Hand(
                game=game.game_id,
                rules_fingerprint=game.rules_fingerprint,
                units=game.units,
                seats=(a, b) if a_seat == 0 else (b, a),
                private_cards=replayed.private_cards,
                public_cards=replayed.public_cards,
                actions=replayed.actions,
                history=tuple(history),
                private_events=replayed.private_events,
                payoffs=(payoffs[0], payoffs[1]),
            )
        )


@dataclass(frozen=True)
class LoggedHand:
    """A hand read back from a log."""

    number: int
    """Its line number in the log, from 1."""
    hand: Hand
    terminal: int
    """The terminal of the compiled tree its history ends at."""


def read_hand_log(
    path: str | os.PathLike[str], tree: CompiledTree, *, hands: int | None = None
) -> Iterator[LoggedHand]:
    """The hands of the log at ``path`` (the first ``hands`` of them, with ``hands``), each checked
    against ``tree`` and its game: a line of another game or other rules, or one that is not a hand that
    replays on the game to its logged cards, actions and payoffs (:func:`replay_hand`), is refused with a
    one-line :class:`InputError` that names the line. The log must be a regular file; it is read a line
    at a time, each line at most :data:`~adapters.inputs.MAX_LOG_LINE_BYTES`."""
    shown = os.fspath(path)
    game = adapters.load_game(tree.game_id)
    paths = TreePaths(tree)
    with open_regular(path, "hand log", None) as handle:
        number = 0
        while hands is None or number < hands:
            try:
                line = handle.readline(MAX_LOG_LINE_BYTES + 1)
            except OSError as error:
                raise InputError(f"cannot read hand log {shown!r}: {error.strerror}") from None
            if not line:
                return
            number += 1
            where = f"{shown} line {number}"
            if len(line) > MAX_LOG_LINE_BYTES:
                raise InputError(f"{where}: longer than the {size_text(MAX_LOG_LINE_BYTES)} a line may be")
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(f"{where}: not UTF-8 text") from None
            yield _checked(game, paths, text.rstrip("\n"), number, where)


def _checked(game: Game, paths: TreePaths, text: str, number: int, where: str) -> LoggedHand:
    tree = paths.tree
    fields = parse_json(text, where)
    if not isinstance(fields, dict):
        raise InputError(f"{where}: not a JSON object")
    if fields.get("format") != FORMAT or type(fields.get("version")) is not int or fields["version"] != VERSION:
        raise InputError(f"{where}: not a hand of the {FORMAT!r} format, version {VERSION}")
    try:
        hand = Hand(
            game=_text(fields, "game"),
            rules_fingerprint=_text(fields, "rules_fingerprint"),
            units=_text(fields, "units"),
            seats=_pair(fields, "seats", lambda seat: isinstance(seat, str) and bool(seat), lambda seat: seat),
            private_cards=_pair(fields, "private_cards", _texts, tuple),
            public_cards=_list(fields, "public_cards", _texts, tuple),
            actions=_list(fields, "actions", _actions, lambda actions: tuple(tuple(a) for a in actions)),
            history=_list(fields, "history", _ints, tuple),
            private_events=_pair(fields, "private_events", _ints, tuple),
            payoffs=_pair(fields, "payoffs", _number, float),
        )
    except _FieldError as error:
        raise InputError(f"{where}: {error}") from None
    if hand.game != tree.game_id:
        raise InputError(f"{where}: a hand of {hand.game}, not of {tree.game_id}")
    if hand.rules_fingerprint != tree.rules_fingerprint:
        raise InputError(
            f"{where}: a hand of {hand.game} under other rules (fingerprint {hand.rules_fingerprint}, "
            f"these rules have {tree.rules_fingerprint})"
        )
    try:
        nodes = paths.follow(hand.history)
    except InputError as error:
        raise InputError(f"{where}: {error}") from None
    terminal = paths.terminal[nodes[-1]]
    if terminal < 0:
        raise InputError(f"{where}: the history stops before the hand ends")
    replayed = replay_hand(game, paths, hand.history)
    if [action[:2] for action in hand.actions] != [action[:2] for action in replayed.actions]:
        raise InputError(f"{where}: the actions are not the history's actions")
    for (seat, action, name), (_, _, named) in zip(hand.actions, replayed.actions, strict=True):
        if name != named:
            raise InputError(f"{where}: seat {seat}'s action {action} is {named!r} in {tree.game_id}, not {name!r}")
    for field, what in (("private_events", "private events"), ("private_cards", "private cards")):
        if getattr(hand, field) != getattr(replayed, field):
            logged, dealt = _lists(getattr(hand, field)), _lists(getattr(replayed, field))
            raise InputError(f"{where}: the {what} {logged} are not the {dealt} the history deals each seat")
    if hand.public_cards != replayed.public_cards:
        raise InputError(
            f"{where}: the public cards {list(hand.public_cards)} are not the {list(replayed.public_cards)} "
            "the history deals"
        )
    utility = tree.terminal_utility[:, terminal]
    if any(
        not math.isclose(u, v, rel_tol=0, abs_tol=PAYOFF_TOLERANCE) for u, v in zip(hand.payoffs, utility, strict=True)
    ):
        raise InputError(f"{where}: the payoffs {list(hand.payoffs)} are not the {utility.tolist()} the hand pays")
    return LoggedHand(number, hand, terminal)


def _lists(pair: tuple[tuple[object, ...], ...]) -> list[list[object]]:
    return [list(items) for items in pair]


class _FieldError(Exception):
    pass


def _text(fields: dict[str, Any], name: str) -> str:
    value = fields.get(name)
    if not isinstance(value, str):
        raise _FieldError(f"field {name!r} must be a string")
    return value


def _list(fields: dict[str, Any], name: str, check: Callable[[Any], bool], convert: Callable[[Any], T]) -> T:
    value = fields.get(name)
    if not (isinstance(value, list) and check(value)):
        raise _FieldError(f"field {name!r} is missing or malformed")
    return convert(value)


def _pair(fields: dict[str, Any], name: str, check: Callable[[Any], bool], convert: Callable[[Any], T]) -> tuple[T, T]:
    value = fields.get(name)
    if not (isinstance(value, list) and len(value) == NUM_PLAYERS and all(check(item) for item in value)):
        raise _FieldError(f"field {name!r} must hold one entry per seat")
    return convert(value[0]), convert(value[1])


def _texts(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _ints(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, int) and not isinstance(item, bool) for item in value)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _actions(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(action, list)
        and len(action) == 3
        and _ints(action[:2])
        and isinstance(action[2], str)
        and action[0] in range(NUM_PLAYERS)
        for action in value
    )
