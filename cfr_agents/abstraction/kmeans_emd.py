r"""k-means over equity histograms under the earth mover's distance (Johanson, Burch, Valenzano & Bowling,
"Evaluating State-Space Abstractions in Extensive-Form Games", AAMAS 2013).

Hand :math:`i` is a histogram :math:`h_i` over :math:`B` equal-width bins of equity in :math:`[0, 1]` (counts or
probabilities) that stands for :math:`w_i \ge 0` raw hands. With :math:`H_i(j) = \sum_{b \le j} h_i(b) / \sum_b
h_i(b)` its cumulative distribution, the earth mover's distance between two histograms over the same bins is,
exactly in one dimension,

.. math:: \mathrm{EMD}(x, y) = \frac{1}{B} \sum_{j=1}^{B-1} |X(j) - Y(j)|

(the :math:`B`-th term is :math:`|1 - 1| = 0`). :func:`kmeans_emd` gives every hand a cluster :math:`a(i)` among
:math:`k`, with centroids :math:`c_1, \dots, c_k` (normalised histograms), to make the inertia
:math:`\sum_i w_i\,\mathrm{EMD}(h_i, c_{a(i)})` small:

* seeds: weighted k-means++ with :math:`D^1` (the usual power for an L1-type distance): the first seed is hand
  :math:`i` with probability :math:`\propto w_i`, each next one with probability
  :math:`\propto w_i \min_j \mathrm{EMD}(h_i, c_j)`, on a sample of at most :data:`SEED_SAMPLE` hands of positive
  weight drawn with the generator;
* assignment: :math:`a(i) = \arg\min_j \mathrm{EMD}(h_i, c_j)` (ties keep the current cluster, else the lowest
  index), skipped where Hamerly's bounds prove it unchanged (below);
* update: the weighted mean of the members' normalised histograms,
  :math:`\bar c_j = \sum_{a(i)=j} w_i h_i / \sum_{a(i)=j} w_i` (the paper's choice; the mean of CDFs is the CDF of
  the mean). The mean minimises the squared distance between CDFs, not EMD, so it can raise a cluster's cost
  (two bins, hands with :math:`H(1) = 0, 0, 1` around the seed :math:`0` cost :math:`1/2`, around their mean
  :math:`1/3` they cost :math:`2/3`; on a million equity-like histograms the plain mean's inertia turns upward
  after 17 rounds): a cluster whose mean would cost more than its centroid keeps its centroid, so the inertia never
  increases;
* a cluster left with no hand of positive weight is re-seeded with the hand farthest from its centroid (the lowest
  index among equals) of a cluster that has several;
* the run stops after ``iterations`` assignment-and-update rounds, or at the first assignment that changes no label.

Hamerly's bounds (EMD is a metric, so the triangle inequality holds): :math:`u(i) = \mathrm{EMD}(h_i, c_{a(i)})`,
kept exact (each round computes it for the inertia), :math:`l(i) \le \min_{j \ne a(i)} \mathrm{EMD}(h_i, c_j)` and
:math:`s(j) = \frac12 \min_{j' \ne j} \mathrm{EMD}(c_j, c_{j'})`. If :math:`u(i) \le \max(s(a(i)), l(i))` no centroid
is nearer than :math:`c_{a(i)}` and no other distance is computed. Otherwise the centroids are scanned, skipping
(Elkan's test) every :math:`c_j` with :math:`\mathrm{EMD}(c_b, c_j) \ge d_1 + d_2`, where :math:`c_b` is the nearest
so far at :math:`d_1` and :math:`d_2` the second-nearest distance: then
:math:`\mathrm{EMD}(h_i, c_j) \ge \mathrm{EMD}(c_b, c_j) - d_1 \ge d_2`. When the centroids move by
:math:`p(j) = \mathrm{EMD}(c_j^{\mathrm{old}}, c_j^{\mathrm{new}})`, :math:`l(i)` drops by
:math:`\max_{j \ne a(i)} p(j)`. On a million equity-like histograms of 50 bins with :math:`k = 200`, a round
takes about a quarter of its time without the two tests (the scan's test does the most).

The CDFs are formed per hand, in float64, by the pass that reads it (a running sum and a product per bin, nothing
next to the distances) and are not stored: a copy would double the memory of 15 million histograms. Rows are
processed in fixed chunks of :data:`CHUNK` hands, one task each, summed in row order within a chunk and combined in
chunk order, with no (N, k) distance matrix: the same inputs and generator state give the same result whatever the
number of threads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numba
import numpy as np
from numba import njit, prange
from numpy.typing import NDArray

from adapters.inputs import InputError

SEED_SAMPLE = 100_000
"""Most hands k-means++ seeds from (a sample drawn with the generator when more have positive weight)."""
CHUNK = 1 << 14
"""Hands per parallel task: the order of every floating-point sum depends on it, never on the thread count."""
_FAST = {"reassoc", "nsz", "contract"}
"""Lets LLVM vectorise a distance's sum: the order is fixed by the compiled code, so results stay reproducible."""

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class KMeansResult:
    """A clustering: ``labels[i]`` is hand ``i``'s cluster, ``centroids[j]`` cluster ``j``'s normalised histogram,
    ``inertia`` :math:`\\sum_i w_i\\,\\mathrm{EMD}(h_i, c_{a(i)})` for them, ``iterations`` the rounds run."""

    labels: NDArray[np.int32]
    centroids: FloatArray
    inertia: float
    iterations: int


@njit(cache=True, fastmath=_FAST)
def _distance(x: FloatArray, i: int, c: FloatArray, j: int) -> float:
    """:math:`\\sum_b |X(b) - C(b)|` (:math:`B \\cdot \\mathrm{EMD}`) between the CDFs (without their last bin)
    ``x[i]`` and ``c[j]``. Rows are indexed, not sliced: a view inside a parallel loop costs an atomic reference
    count on the shared array."""
    total = 0.0
    for b in range(x.shape[1]):
        total += abs(x[i, b] - c[j, b])
    return total


@njit(cache=True)
def _cdf(histograms: NDArray[np.float32], i: int, scale: float, out: FloatArray, row: int) -> None:
    """``out[row, b]`` :math:`= H_i(b)`, row ``i``'s CDF at bins ``0 .. B-2`` (``scale`` is one over its sum)."""
    running = 0.0
    for b in range(out.shape[1]):
        running += histograms[i, b]
        out[row, b] = running * scale


@njit(cache=True, parallel=True)
def _scales(histograms: NDArray[np.float32], scale: FloatArray) -> tuple[int, int]:
    """Fills ``scale[i]`` with one over row ``i``'s sum; returns the first row with a negative or non-finite entry
    and the first row summing to 0 (-1 when none)."""
    n = histograms.shape[0]
    num_chunks = (n + CHUNK - 1) // CHUNK
    bad_entry = np.full(num_chunks, n)
    zero_sum = np.full(num_chunks, n)
    for chunk in prange(num_chunks):
        for i in range(chunk * CHUNK, min(n, (chunk + 1) * CHUNK)):
            total = 0.0
            for b in range(histograms.shape[1]):
                value = histograms[i, b]
                if not (value >= 0.0 and value < np.inf):
                    bad_entry[chunk] = min(bad_entry[chunk], i)
                total += value
            if total > 0.0 and total < np.inf:
                scale[i] = 1.0 / total
            else:
                scale[i] = 0.0
                zero_sum[chunk] = min(zero_sum[chunk], i)
    first_bad, first_zero = bad_entry.min(), zero_sum.min()
    return (first_bad if first_bad < n else -1), (first_zero if first_zero < n else -1)


@njit(cache=True, parallel=True)
def _sample_cdfs(histograms: NDArray[np.float32], scale: FloatArray, rows: NDArray[np.int64]) -> FloatArray:
    """The CDFs of the rows ``rows`` (the seeding sample), computed once."""
    out = np.empty((rows.shape[0], histograms.shape[1] - 1))
    for s in prange(rows.shape[0]):
        _cdf(histograms, rows[s], scale[rows[s]], out, s)
    return out


@njit(cache=True)
def _seed_rows(points: FloatArray, weights: FloatArray, draws: FloatArray) -> NDArray[np.int64]:
    """Weighted k-means++ with :math:`D^1` over the sample's CDFs ``points`` (all of positive weight): seed ``c`` is
    the first point whose running sum of :math:`w_s D(s)` (:math:`w_s` for the first seed) exceeds ``draws[c]``
    times the total. Where every point sits on a seed (all :math:`D(s) = 0`) it is point ``draws[c]`` of the way
    through the sample: a repeated seed, which the empty-cluster rule moves."""
    size, k = points.shape[0], draws.shape[0]
    chosen = np.empty(k, np.int64)
    nearest = np.full(size, np.inf)
    mass = np.empty(size)
    for c in range(k):
        running = 0.0
        for s in range(size):
            if c > 0:
                nearest[s] = min(nearest[s], _distance(points, s, points, chosen[c - 1]))
            running += weights[s] * (nearest[s] if c > 0 else 1.0)
            mass[s] = running
        if running > 0.0:
            pick = np.searchsorted(mass, draws[c] * running, side="right")
            chosen[c] = min(pick, np.searchsorted(mass, running))  # the last point of positive mass
        else:
            chosen[c] = int(draws[c] * size)
    return chosen


@njit(cache=True)
def _nearest(
    x: FloatArray, centroids: FloatArray, gaps: FloatArray, start: int, start_distance: float
) -> tuple[int, float, float]:
    """The nearest centroid to ``x[0]``, its distance and the second-nearest distance, from ``start`` (-1: none) at
    ``start_distance``; ties keep the earlier candidate. A centroid ``j`` with ``gaps[best, j]`` at least the best
    distance plus the second is skipped: by the triangle inequality it is no nearer than the second."""
    best, best_distance, second = start, start_distance, np.inf
    for j in range(centroids.shape[0]):
        if j == start or (best >= 0 and gaps[best, j] >= best_distance + second):
            continue
        d = _distance(x, 0, centroids, j)
        if d < best_distance:
            best, best_distance, second = j, d, best_distance
        elif d < second:
            second = d
    return best, best_distance, second


@njit(cache=True)
def _clear(chunk: int, sums: FloatArray, mass: FloatArray, members: NDArray[np.int64], cost: FloatArray) -> None:
    sums[chunk] = 0.0
    mass[chunk] = 0.0
    members[chunk] = 0
    cost[chunk] = 0.0


@njit(cache=True)
def _add(
    chunk: int,
    j: int,
    w: float,
    x: FloatArray,
    d: float,
    sums: FloatArray,
    mass: FloatArray,
    members: NDArray[np.int64],
    cost: FloatArray,
) -> None:
    """Counts a hand of weight ``w``, CDF ``x[0]`` and distance ``d`` to its centroid in cluster ``j`` of ``chunk``."""
    if w > 0.0:
        for b in range(x.shape[1]):
            sums[chunk, j, b] += w * x[0, b]
        mass[chunk, j] += w
        members[chunk, j] += 1
        cost[chunk, j] += w * d


@njit(cache=True, parallel=True)
def _assign(
    histograms: NDArray[np.float32],
    scale: FloatArray,
    weights: FloatArray,
    centroids: FloatArray,
    gaps: FloatArray,
    half_gap: FloatArray,
    shift: tuple[float, int, float],
    accepted: NDArray[np.bool_],
    first: bool,
    labels: NDArray[np.int32],
    upper: FloatArray,
    lower: FloatArray,
    moved: FloatArray,
    sums: FloatArray,
    mass: FloatArray,
    members: NDArray[np.int64],
    cost: FloatArray,
    changed: NDArray[np.int64],
) -> None:
    """The assignment of every hand, per chunk: its exact distance to its centroid (``moved[i]`` where its cluster
    took its mean, else ``upper[i]``), Hamerly's test with the half gaps :math:`s(j)`, the scan of the centroids
    (``gaps``: their distances) where it fails; the chunk's
    weighted CDF sums, masses, positive-weight member counts, costs and label changes per cluster.
    ``shift = (max p, its cluster, second max p)`` lowers the bounds ``lower``."""
    n, m = histograms.shape[0], centroids.shape[1]
    largest, largest_at, runner_up = shift
    for chunk in prange(sums.shape[0]):
        x = np.empty((1, m))
        _clear(chunk, sums, mass, members, cost)
        changed[chunk] = 0
        for i in range(chunk * CHUNK, min(n, (chunk + 1) * CHUNK)):
            _cdf(histograms, i, scale[i], x, 0)
            if first:
                best, best_distance, second = _nearest(x, centroids, gaps, -1, np.inf)
            else:
                a = labels[i]
                u = moved[i] if accepted[a] else upper[i]
                low = lower[i] - (runner_up if a == largest_at else largest)
                if u > max(half_gap[a], low):
                    best, best_distance, second = _nearest(x, centroids, gaps, a, u)
                else:
                    best, best_distance, second = a, u, low
            _add(chunk, best, weights[i], x, best_distance, sums, mass, members, cost)
            if best != labels[i]:
                changed[chunk] += 1
                labels[i] = best
            upper[i] = best_distance
            lower[i] = second


@njit(cache=True, parallel=True)
def _accumulate(
    histograms: NDArray[np.float32],
    scale: FloatArray,
    weights: FloatArray,
    labels: NDArray[np.int32],
    upper: FloatArray,
    sums: FloatArray,
    mass: FloatArray,
    members: NDArray[np.int64],
    cost: FloatArray,
) -> None:
    """The per-chunk sums of :func:`_assign` for the labels as they stand (after a re-seeding)."""
    n, m = histograms.shape[0], sums.shape[2]
    for chunk in prange(sums.shape[0]):
        x = np.empty((1, m))
        _clear(chunk, sums, mass, members, cost)
        for i in range(chunk * CHUNK, min(n, (chunk + 1) * CHUNK)):
            _cdf(histograms, i, scale[i], x, 0)
            _add(chunk, labels[i], weights[i], x, upper[i], sums, mass, members, cost)


@njit(cache=True)
def _in_order(per_chunk: np.ndarray) -> np.ndarray:
    """The sum over the first axis, added in chunk order."""
    total: np.ndarray = per_chunk[0].copy()
    for chunk in range(1, per_chunk.shape[0]):
        total += per_chunk[chunk]
    return total


@njit(cache=True)
def _reseed(
    weights: FloatArray, labels: NDArray[np.int32], upper: FloatArray, lower: FloatArray, members: NDArray[np.int64]
) -> NDArray[np.bool_]:
    """Moves into every cluster with no member of positive weight the hand farthest from its centroid (``upper``,
    the lowest index among equals) of a cluster with several; returns the clusters re-seeded."""
    reseeded = np.zeros(members.shape[0], np.bool_)
    for j in range(members.shape[0]):
        if members[j] > 0:
            continue
        far, far_distance = -1, -1.0
        for i in range(labels.shape[0]):
            if weights[i] > 0.0 and members[labels[i]] > 1 and upper[i] > far_distance:
                far, far_distance = i, upper[i]
        members[labels[far]] -= 1
        members[j] += 1
        labels[far] = j
        upper[far] = 0.0  # its cluster's mean is the hand itself
        lower[far] = 0.0
        reseeded[j] = True
    return reseeded


@njit(cache=True, parallel=True)
def _spread(
    histograms: NDArray[np.float32],
    scale: FloatArray,
    weights: FloatArray,
    labels: NDArray[np.int32],
    means: FloatArray,
    moved: FloatArray,
    cost: FloatArray,
) -> None:
    """``moved[i]``: hand ``i``'s distance to its cluster's mean; ``cost[chunk, j]`` the chunk's weighted sum."""
    n, m = histograms.shape[0], means.shape[1]
    for chunk in prange(cost.shape[0]):
        x = np.empty((1, m))
        cost[chunk] = 0.0
        for i in range(chunk * CHUNK, min(n, (chunk + 1) * CHUNK)):
            _cdf(histograms, i, scale[i], x, 0)
            d = _distance(x, 0, means, labels[i])
            moved[i] = d
            cost[chunk, labels[i]] += weights[i] * d


@njit(cache=True)
def _gaps(centroids: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The centroids' distances to each other (unscaled, infinite on the diagonal) and :math:`s(j)`, half the
    distance from centroid ``j`` to its nearest other centroid."""
    k = centroids.shape[0]
    gaps = np.full((k, k), np.inf)
    for j in range(k):
        for other in range(j + 1, k):
            gaps[j, other] = gaps[other, j] = _distance(centroids, j, centroids, other)
    half = np.empty(k)
    for j in range(k):
        half[j] = 0.5 * gaps[j].min()
    return gaps, half


@njit(cache=True)
def _shift(old: FloatArray, new: FloatArray) -> tuple[float, int, float]:
    """The largest centroid move :math:`p(j)`, its cluster, and the largest move of the other clusters."""
    largest, largest_at, runner_up = 0.0, -1, 0.0
    for j in range(old.shape[0]):
        p = _distance(old, j, new, j)
        if p > largest:
            largest, largest_at, runner_up = p, j, largest
        elif p > runner_up:
            runner_up = p
    return largest, largest_at, runner_up


def emd(x: NDArray[np.floating], y: NDArray[np.floating]) -> float:
    """:math:`\\mathrm{EMD}(x, y) = \\frac1B \\sum_j |X(j) - Y(j)|` between two histograms over the same ``B`` bins
    (counts or probabilities), by the distance :func:`kmeans_emd` computes."""
    if np.ndim(x) != 1 or np.shape(x) != np.shape(y) or np.size(x) < 1:
        raise InputError(f"EMD: two histograms over the same bins; got shapes {np.shape(x)} and {np.shape(y)}")
    cdfs = np.cumsum(np.stack([x, y]), axis=1, dtype=np.float64)
    if not (np.isfinite(cdfs[:, -1]).all() and (cdfs[:, -1] > 0).all() and (np.stack([x, y]) >= 0).all()):
        raise InputError("EMD: histograms must be non-negative and finite, each with a positive sum")
    cdfs = np.ascontiguousarray(cdfs[:, :-1] / cdfs[:, -1:])
    return float(_distance(cdfs, 0, cdfs, 1)) / len(x)


def _checked(
    histograms: NDArray[np.float32], weights: NDArray[np.float64], k: int, iterations: int
) -> tuple[NDArray[np.float32], FloatArray, FloatArray]:
    """The histograms (C-ordered float32), weights and row scales, or an :class:`InputError` naming the problem."""
    table = np.ascontiguousarray(histograms, dtype=np.float32)
    mass = np.ascontiguousarray(weights, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] < 1 or table.shape[1] < 1:
        raise InputError(f"k-means: histograms must be a non-empty (N, B) array; got shape {table.shape}")
    if mass.shape != (table.shape[0],):
        raise InputError(f"k-means: weights of shape {mass.shape} do not match {table.shape[0]} histograms")
    if not np.isfinite(mass).all() or (mass < 0).any():
        raise InputError("k-means: weights must be finite and non-negative")
    if iterations < 1:
        raise InputError(f"k-means: iterations must be at least 1; got {iterations}")
    positive = int(np.count_nonzero(mass))
    if not 1 <= k <= positive:
        raise InputError(f"k-means: k must be between 1 and the {positive} histograms of positive weight; got {k}")
    scale = np.empty(table.shape[0])
    bad_entry, zero_sum = _scales(table, scale)
    if bad_entry >= 0:
        raise InputError(f"k-means: histogram {bad_entry} has a negative or non-finite entry")
    if zero_sum >= 0:
        raise InputError(f"k-means: histogram {zero_sum} sums to 0")
    return table, mass, scale


def kmeans_emd(
    histograms: NDArray[np.float32],
    weights: NDArray[np.float64],
    k: int,
    rng: np.random.Generator,
    *,
    iterations: int = 30,
    progress: Callable[[int, float], None] | None = None,
) -> KMeansResult:
    """Clusters the rows of ``histograms`` (N, B), hand ``i`` weighing ``weights[i]``, into ``k`` clusters under
    EMD (module docstring); ``progress(iteration, inertia)`` after each round. Rows are read as float32."""
    with _threads_for(np.shape(histograms)[0] if np.ndim(histograms) == 2 else 0):
        return _lloyd(*_checked(histograms, weights, k, iterations), k, rng, iterations, progress)


@contextmanager
def _threads_for(rows: int) -> Iterator[None]:
    """Numba's threads, or one where the rows make a single chunk: one task, and waking idle threads for it costs
    milliseconds on a busy machine."""
    threads = numba.get_num_threads()
    if rows <= CHUNK:
        numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(threads)


def _lloyd(
    table: NDArray[np.float32],
    w: FloatArray,
    scale: FloatArray,
    k: int,
    rng: np.random.Generator,
    iterations: int,
    progress: Callable[[int, float], None] | None,
) -> KMeansResult:
    """The seeding and the rounds of :func:`kmeans_emd` on checked inputs."""
    n, num_bins = table.shape
    positive = np.flatnonzero(w > 0)
    if len(positive) > max(SEED_SAMPLE, k):
        positive = np.sort(rng.choice(positive, size=max(SEED_SAMPLE, k), replace=False))
    sample = _sample_cdfs(table, scale, positive)
    centroids = sample[_seed_rows(sample, w[positive], rng.random(k))]
    num_chunks = (n + CHUNK - 1) // CHUNK
    sums = np.empty((num_chunks, k, num_bins - 1))
    mass, cost = np.empty((num_chunks, k)), np.empty((num_chunks, k))
    members, changed = np.empty((num_chunks, k), np.int64), np.empty(num_chunks, np.int64)
    labels = np.full(n, -1, np.int32)
    upper, lower, moved = np.empty(n), np.empty(n), np.empty(n)
    accepted = np.zeros(k, np.bool_)
    shift: tuple[float, int, float] = (0.0, -1, 0.0)
    for iteration in range(1, iterations + 1):
        state = (table, scale, w, centroids, *_gaps(centroids), shift, accepted, iteration == 1)
        _assign(*state, labels, upper, lower, moved, sums, mass, members, cost, changed)
        if iteration > 1 and not changed.any():
            inertia = math.fsum(_in_order(cost)) / num_bins
            _report(progress, iteration, inertia)
            break
        reseeded = _reseed(w, labels, upper, lower, _in_order(members))
        if reseeded.any():
            _accumulate(table, scale, w, labels, upper, sums, mass, members, cost)
        means = _in_order(sums) / _in_order(mass)[:, None]
        cost_before = _in_order(cost)
        _spread(table, scale, w, labels, means, moved, cost)
        cost_after = _in_order(cost)
        accepted = reseeded | (cost_after <= cost_before)
        updated = np.where(accepted[:, None], means, centroids)
        shift = _shift(centroids, updated)
        centroids = updated
        inertia = math.fsum(np.where(accepted, cost_after, cost_before)) / num_bins
        _report(progress, iteration, inertia)
    return KMeansResult(labels, np.diff(centroids, axis=1, prepend=0.0, append=1.0), inertia, iteration)


def _report(progress: Callable[[int, float], None] | None, iteration: int, inertia: float) -> None:
    if progress is not None:
        progress(iteration, inertia)
