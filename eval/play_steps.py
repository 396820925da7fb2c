"""A session of :mod:`eval.play` driven a move at a time, as a browser drives it: the session's own loop runs in a
thread of its own and stops at each of the human's decisions until :meth:`SteppedSession.move` brings the move.

The hands are the session's (:class:`eval.play.Session`: the same deals, agent and scoring as the terminal's), shown
with the terminal's words (:func:`eval.play.render_view`, :func:`~eval.play.render_outcome`,
:func:`~eval.play.render_summary`): each :class:`Step` carries the decision in play, the hands that ended since the
last step, and at the end the session's summary. A session left waiting longer than ``idle_seconds`` ends as if the
human had quit."""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass

from adapters.inputs import InputError
from eval.match import Agents
from eval.play import PlaySpec, Quit, Session, View, render_summary, render_view

IDLE_SECONDS = 3600.0
"""How long a session waits for a move before it ends."""
STEP_SECONDS = 120.0
"""How long a caller waits for the agent's moves and the next decision before giving up."""


@dataclass(frozen=True)
class Step:
    """What the human sees after a move: the next decision (``None`` once the session is over), the hands that
    ended since the last step, and, at the end, why and the summary."""

    view: View | None
    text: str
    """The decision as the terminal shows it (:func:`eval.play.render_view`)."""
    outcomes: tuple[str, ...]
    """Each hand that ended, as the terminal shows it (:func:`eval.play.render_outcome`)."""
    ended: str = ""
    summary: str = ""


class SteppedSession:
    """A :class:`~eval.play.Session` whose human answers through :meth:`move`: constructing it loads the game and
    the agent (a bad one refused in one line), :meth:`first` plays to the first decision."""

    def __init__(self, spec: PlaySpec, agents: Agents | None = None, *, idle_seconds: float = IDLE_SECONDS) -> None:
        self._moves: queue.Queue[int | None] = queue.Queue()
        self._events: queue.Queue[tuple[str, object]] = queue.Queue()
        self._idle = idle_seconds
        self.session = Session.start(spec, self._choose, agents)
        self.view: View | None = None
        self.over = False
        self._thread = threading.Thread(target=self._run, name="play-session", daemon=True)

    def first(self) -> Step:
        """Start the session's loop; the first decision."""
        self._thread.start()
        return self._next()

    def move(self, action: int) -> Step:
        """Play ``action`` (an id among the decision's legal moves, else an :class:`InputError`); the next step."""
        if self.over or self.view is None:
            raise InputError("the session is over: start another")
        legal = [move for move, _ in self.view.legal]
        if action not in legal:
            raise InputError(f"the move {action} is not legal here (legal: {legal})")
        self.view = None
        self._moves.put(action)
        return self._next()

    def quit(self) -> Step:
        """End the session (the hand in play does not count); the summary."""
        if self.over:
            raise InputError("the session is over: start another")
        self.view = None
        self._moves.put(None)
        return self._next()

    def _choose(self, view: View) -> int:
        self._events.put(("view", view))
        try:
            move = self._moves.get(timeout=self._idle)
        except queue.Empty:
            raise Quit("the session was left idle") from None
        if move is None:
            raise Quit("you quit")
        return move

    def _run(self) -> None:
        try:
            self.session.play(lambda text: self._events.put(("text", text)))
            self._events.put(("end", render_summary(self.session, self.session.score())))
        except Exception as error:  # the session's thread ends; the caller is told in one line
            self._events.put(("error", f"the session stopped: {error}"))

    def _next(self) -> Step:
        outcomes: list[str] = []
        while True:
            try:
                kind, payload = self._events.get(timeout=STEP_SECONDS)
            except queue.Empty:
                raise InputError(f"no move came from the session in {STEP_SECONDS:g} s") from None
            if kind == "text":
                outcomes.append(str(payload))
            elif kind == "view" and isinstance(payload, View):
                self.view = payload
                return Step(payload, render_view(payload), tuple(outcomes))
            else:
                self.over = True
                ended = self.session.ended or "stopped"
                if kind == "error":
                    raise InputError(str(payload))
                return Step(None, "", tuple(outcomes), ended, str(payload))


__all__ = ["IDLE_SECONDS", "Step", "SteppedSession"]
