"""k-means under the earth mover's distance: the distance against SciPy's, the clustering against planted
clusters, the objective never rising, weights, empty clusters, determinism across thread counts, refusals.

Expected values are worked out by hand from the definitions in the module docstring, or computed here with
NumPy from those definitions; none is copied from the code's own output.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numba
import numpy as np
import pytest
from numpy.typing import NDArray

from adapters.inputs import InputError
from cfr_agents.abstraction import kmeans_emd as module
from cfr_agents.abstraction.kmeans_emd import KMeansResult, emd, kmeans_emd


def reference_emd(histograms: NDArray[np.float64], centroids: NDArray[np.float64]) -> NDArray[np.float64]:
    """Row-wise EMD by the definition: the mean absolute difference of the normalised cumulative sums."""
    x = np.cumsum(histograms / histograms.sum(axis=1, keepdims=True), axis=1)
    c = np.cumsum(centroids / centroids.sum(axis=1, keepdims=True), axis=1)
    distances: NDArray[np.float64] = np.abs(x - c).mean(axis=1)
    return distances


def equity_histograms(rng: np.random.Generator, n: int, bins: int, draws: int = 200) -> NDArray[np.float32]:
    """Counts of ``draws`` equities per hand from a mixture of two beta distributions: a continuum, no clusters."""
    shape = rng.gamma(2.0, 2.0, size=(4, n, 1)) + 0.3
    mixed = np.where(
        rng.random((n, draws)) < rng.random((n, 1)),
        rng.beta(shape[0], shape[1], size=(n, draws)),
        rng.beta(shape[2], shape[3], size=(n, draws)),
    )
    cells = np.minimum((mixed * bins).astype(np.int64), bins - 1) + bins * np.arange(n)[:, None]
    return np.bincount(cells.ravel(), minlength=n * bins).reshape(n, bins).astype(np.float32)


def test_emd_equals_scipy_wasserstein_distance() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    for bins in (1, 2, 7, 50):
        centres = (np.arange(bins) + 0.5) / bins
        for _ in range(20):
            x, y = rng.random(bins) * rng.integers(0, 2, bins), rng.random(bins) + 0.01
            x[rng.integers(bins)] += 1.0  # a positive sum, with empty bins elsewhere
            expected = stats.wasserstein_distance(centres, centres, x, y)
            assert emd(x, y) == pytest.approx(expected, rel=1e-6, abs=1e-7)


@pytest.mark.slow
def test_inertia_is_the_weighted_emd_to_the_returned_centroids() -> None:
    rng = np.random.default_rng(1)
    histograms = equity_histograms(rng, 2000, 20)
    weights = rng.integers(0, 5, len(histograms)).astype(np.float64)
    result = kmeans_emd(histograms, weights, 12, np.random.default_rng(2))
    assert result.labels.dtype == np.int32 and result.labels.shape == (2000,)
    assert result.centroids.shape == (12, 20) and set(result.labels) == set(range(12))
    assert (result.centroids >= -1e-12).all() and np.allclose(result.centroids.sum(axis=1), 1.0)
    distances = reference_emd(histograms.astype(np.float64), result.centroids[result.labels])
    assert result.inertia == pytest.approx(float(weights @ distances), rel=1e-9)


@pytest.mark.slow
def test_well_separated_clusters_are_recovered_with_their_weighted_means(monkeypatch: pytest.MonkeyPatch) -> None:
    """Five histograms far apart, each copied with small noise and random weights; the seeds come from a sample of
    100 hands of the 1,000. Every planted cluster is found, its centroid the weighted mean of its hands."""
    monkeypatch.setattr(module, "SEED_SAMPLE", 100)
    rng = np.random.default_rng(3)
    bins, k = 25, 5
    prototypes = np.zeros((k, bins))
    for j in range(k):
        prototypes[j, 5 * j : 5 * j + 5] = 1.0
    truth = rng.permutation(np.repeat(np.arange(k), 200))
    histograms = (prototypes[truth] + 0.01 * rng.random((len(truth), bins))).astype(np.float32)
    weights = rng.uniform(0.5, 3.0, len(truth))
    result = kmeans_emd(histograms, weights, k, np.random.default_rng(4))
    pairs = set(zip(truth.tolist(), result.labels.tolist(), strict=True))
    assert len(pairs) == k and len({label for _, label in pairs}) == k
    normalised = histograms.astype(np.float64) / histograms.sum(axis=1, keepdims=True)
    for planted, label in pairs:
        members = truth == planted
        mean = np.average(normalised[members], axis=0, weights=weights[members])
        assert np.allclose(result.centroids[label], mean, atol=1e-7)


@pytest.mark.slow
def test_every_round_assigns_each_hand_to_its_nearest_centroid() -> None:
    """A run of ``t`` rounds returns the centroids the round ``t + 1`` assigns to (the same inputs and seed give the
    same rounds), so the labels of ``t + 1`` rounds are the nearest of those centroids, found here by brute force:
    the bounds may skip distances, never change an assignment."""
    rng = np.random.default_rng(10)
    histograms = equity_histograms(rng, 3000, 20)
    weights = rng.integers(1, 10, len(histograms)).astype(np.float64)
    runs = [kmeans_emd(histograms, weights, 30, np.random.default_rng(11), iterations=t) for t in range(1, 9)]
    assert runs[-1].iterations == 8
    for before, after in itertools.pairwise(runs):
        distances = np.stack([reference_emd(histograms.astype(np.float64), c[None, :]) for c in before.centroids])
        chosen = distances[after.labels, np.arange(len(histograms))]
        assert (chosen <= distances.min(axis=0) + 1e-12).all()


def recorder(reported: list[tuple[int, float]]) -> Callable[[int, float], None]:
    return lambda iteration, inertia: reported.append((iteration, inertia))


@pytest.mark.slow
def test_inertia_never_increases() -> None:
    """The mean of a cluster's CDFs is not their EMD minimiser (that is their median), so on these hands a plain
    mean update raises the inertia after some rounds; a cluster keeps its centroid when the mean costs more."""
    rng = np.random.default_rng(5)
    histograms = equity_histograms(rng, 3000, 20)
    weights = rng.integers(1, 10, len(histograms)).astype(np.float64)
    for seed in range(3):
        reported: list[tuple[int, float]] = []
        result = kmeans_emd(
            histograms, weights, 40, np.random.default_rng(seed), iterations=60, progress=recorder(reported)
        )
        assert [i for i, _ in reported] == list(range(1, result.iterations + 1))
        inertia = [value for _, value in reported]
        assert all(later <= earlier for earlier, later in itertools.pairwise(inertia)), inertia
        assert inertia[-1] == result.inertia


@pytest.mark.slow
def test_a_centroid_that_beats_its_clusters_mean_is_kept() -> None:
    """Two bins, one cluster: hand A = (1, 0) of weight 2, hand B = (0, 1) of weight 1, so H(1) is 1 and 0 and
    EMD(A, B) = 1/2. Seeded at A the cost is 1 * 1/2 = 1/2; the mean H(1) = 2/3 would cost (2 * 1/3 + 2/3) / 2 = 2/3,
    so A stays. Seeded at B the cost is 2 * 1/2 = 1 and the mean, 2/3, replaces it."""
    histograms = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)
    outcomes = {}
    for seed in range(12):
        result = kmeans_emd(histograms, np.array([2.0, 1.0]), 1, np.random.default_rng(seed))
        outcomes[round(result.centroids[0, 0], 9)] = result.inertia
    assert outcomes.keys() == {1.0, round(2 / 3, 9)}
    assert outcomes[1.0] == pytest.approx(1 / 2) and outcomes[round(2 / 3, 9)] == pytest.approx(2 / 3)


@pytest.mark.slow
def test_a_heavy_hand_pulls_its_centroid() -> None:
    rng = np.random.default_rng(6)
    histograms = equity_histograms(rng, 30, 10)
    heavy = np.ones(len(histograms))
    heavy[0] = 1000.0
    pulled = [kmeans_emd(histograms, w, 1, np.random.default_rng(7)).centroids[0] for w in (np.ones(30), heavy)]
    even, towards = (emd(histograms[0], centroid) for centroid in pulled)
    assert towards < 0.05 * even


@pytest.mark.slow
def test_an_empty_cluster_takes_the_farthest_hand_of_a_shared_cluster() -> None:
    """Four copies of A and one B for three clusters: k-means++ seeds A and B, then repeats a seed (every hand sits
    on one), whose cluster is left empty; it takes the first A (all are at distance 0 from their centroid)."""
    a, b = [0.2, 0.5, 0.3], [0.7, 0.0, 0.3]
    histograms = np.array([a, a, a, a, b], np.float32)
    for seed in range(5):
        result = kmeans_emd(histograms, np.ones(5), 3, np.random.default_rng(seed))
        assert result.labels[0] == 2 and len(set(result.labels[1:4])) == 1
        assert set(result.labels) == {0, 1, 2} and result.inertia == pytest.approx(0.0, abs=1e-12)


@pytest.mark.slow
def test_same_inputs_and_seed_give_the_same_result_on_any_number_of_threads() -> None:
    """Several chunks of rows, so the parallel sums are combined; one thread and all of them (two on the machines
    this runs on) give identical bits."""
    rng = np.random.default_rng(8)
    histograms = rng.random((2 * module.CHUNK + 123, 6)).astype(np.float32) ** 3
    weights = rng.random(len(histograms))
    before = numba.get_num_threads()

    def run(threads: int) -> KMeansResult:
        numba.set_num_threads(threads)
        try:
            return kmeans_emd(histograms, weights, 9, np.random.default_rng(9), iterations=8)
        finally:
            numba.set_num_threads(before)

    runs = [run(1), run(before), run(1)]
    for other in runs[1:]:
        assert np.array_equal(other.labels, runs[0].labels)
        assert np.array_equal(other.centroids, runs[0].centroids)
        assert other.inertia == runs[0].inertia and other.iterations == runs[0].iterations


GOOD = np.array([[1.0, 2.0], [3.0, 0.0], [0.5, 0.5]], np.float32)
NAN_1 = np.where([[0], [1], [0]], np.nan, GOOD)


def call(histograms: object = GOOD, weights: object = (1.0, 1.0, 0.0), k: int = 2, iterations: int = 5) -> None:
    kmeans_emd(histograms, np.asarray(weights), k, np.random.default_rng(0), iterations=iterations)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("attempt", "words"),
    [
        (lambda: call(k=0), "k must be between 1 and the 2 histograms of positive weight; got 0"),
        (lambda: call(k=3), "k must be between 1 and the 2 histograms of positive weight; got 3"),
        (lambda: call(weights=(1.0, 1.0)), "do not match 3 histograms"),
        (lambda: call(histograms=GOOD[0]), "non-empty (N, B) array"),
        (lambda: call(histograms=GOOD[:0]), "non-empty (N, B) array"),
        (lambda: call(weights=(1.0, -1.0, 1.0)), "finite and non-negative"),
        (lambda: call(weights=(1.0, np.nan, 1.0)), "finite and non-negative"),
        (lambda: call(weights=(1.0, np.inf, 1.0)), "finite and non-negative"),
        (lambda: call(histograms=GOOD * [[1], [0], [1]]), "histogram 1 sums to 0"),
        (lambda: call(histograms=GOOD - [[0], [0], [1]]), "histogram 2 has a negative or non-finite entry"),
        (lambda: call(histograms=NAN_1), "histogram 1 has a negative or non-finite entry"),
        (lambda: call(iterations=0), "iterations must be at least 1; got 0"),
        (lambda: emd(np.ones(3), np.ones(4)), "same bins"),
        (lambda: emd(np.ones(3), np.zeros(3)), "positive sum"),
    ],
)
def test_bad_input_is_refused_in_one_line(attempt: Callable[[], object], words: str) -> None:
    with pytest.raises(InputError) as refused:
        attempt()
    assert words in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.slow
def test_re_seeding_takes_the_farthest_hands_of_positive_weight_from_clusters_that_keep_one() -> None:
    """Clusters 2 and 3 are empty. Hand 5 is the farthest but has no weight and hand 0 is alone in cluster 0; the
    farthest of the rest, hand 3, goes to cluster 2, then hand 1 (cluster 1 then keeps hand 2) to cluster 3."""
    labels = np.array([0, 1, 1, 1, 1, 1], np.int32)
    upper = np.array([0.9, 0.5, 0.2, 0.7, 0.5, 1.0])
    lower = np.ones(6)
    weights = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 0.0])
    members = np.array([1, 4, 0, 0], np.int64)
    reseeded = module._reseed(weights, labels, upper, lower, members)
    assert reseeded.tolist() == [False, False, True, True]
    assert labels.tolist() == [0, 3, 1, 2, 1, 1] and members.tolist() == [1, 2, 1, 1]
    assert upper[[1, 3]].tolist() == [0.0, 0.0] and lower[[1, 3]].tolist() == [0.0, 0.0]
