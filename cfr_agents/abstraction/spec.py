"""What an abstraction does in each round: a method and a number of buckets (:class:`RoundSpec`), from the text
``cfr-agents abstraction build --buckets`` takes (:func:`parse_spec`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from adapters.inputs import ParameterError

METHODS: Final = ("lossless", "ehs2", "emd")
"""``lossless``: one bucket per suit-isomorphism class (:mod:`~cfr_agents.abstraction.lossless`); ``ehs2``:
percentiles of E[HS^2] (:mod:`~cfr_agents.abstraction.percentile`), of HS at the last round; ``emd``: k-means of
equity histograms under the earth mover's distance (:mod:`~cfr_agents.abstraction.kmeans_emd`)."""
DEFAULT_BUCKETS: Final = 200
"""Buckets of each round after the first by default (a round with no more classes is kept lossless)."""
DEFAULT_BINS: Final = 50
"""Bins of an equity histogram by default."""
MAX_BINS: Final = 1000
"""The most bins an equity histogram may have."""


@dataclass(frozen=True)
class RoundSpec:
    """One round of an abstraction."""

    method: str
    """One of :data:`METHODS`."""
    buckets: int
    """Buckets of the round; for ``lossless``, its classes."""
    bins: int = 0
    """Bins of the equity histograms (``emd``), else 0."""


def parse_spec(
    text: str | None, classes: Sequence[int], method: str = "ehs2", bins: int = DEFAULT_BINS
) -> tuple[RoundSpec, ...]:
    """The rounds of an abstraction of a game whose rounds have ``classes`` lossless classes. ``text`` has one
    entry a round, comma-separated: a number of buckets or ``lossless``; ``None`` is the default, lossless in the
    first round and :data:`DEFAULT_BUCKETS` in the others (lossless in a round with no more classes than that).
    Numbered rounds use ``method`` (``ehs2`` or ``emd``, with histograms of ``bins`` bins); the last round uses
    ``ehs2`` either way, its histograms being points. Bad text, a count that is not positive or is more than the
    round's classes, is refused in one line (a :class:`~adapters.inputs.ParameterError` naming ``buckets``)."""
    if method not in METHODS[1:]:
        raise ParameterError("{method} must be ehs2 or emd, not {got!r}", got=method)
    if not 2 <= bins <= MAX_BINS:
        raise ParameterError("{bins} must be from 2 to {most}, not {got}", most=MAX_BINS, got=bins)
    if text is None:
        entries = [
            "lossless",
            *(str(DEFAULT_BUCKETS) if count > DEFAULT_BUCKETS else "lossless" for count in classes[1:]),
        ]
    else:
        entries = [entry.strip() for entry in text.split(",")]
        if len(entries) != len(classes):
            raise ParameterError(
                "{buckets} {text!r} has {given} entries; the game has {rounds} rounds, one entry each",
                text=text,
                given=len(entries),
                rounds=len(classes),
            )
    rounds = []
    for round_, (entry, count) in enumerate(zip(entries, classes, strict=True)):
        if entry == "lossless":
            rounds.append(RoundSpec("lossless", count))
            continue
        if not entry.isascii() or not entry.isdigit() or len(entry) > 12:
            raise ParameterError(
                "{buckets} entry {entry!r} of round {round_} is neither a number of buckets nor lossless",
                entry=entry,
                round_=round_,
            )
        buckets = int(entry)
        if not 1 <= buckets <= count:
            raise ParameterError(
                "{buckets}: round {round_} takes 1 to {count:,} buckets (its lossless classes), not {got:,}",
                round_=round_,
                count=count,
                got=buckets,
            )
        chosen = "ehs2" if round_ == len(classes) - 1 else method
        rounds.append(RoundSpec(chosen, buckets, bins if chosen == "emd" else 0))
    return tuple(rounds)
