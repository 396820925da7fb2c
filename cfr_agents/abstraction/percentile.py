r"""Percentile buckets: :math:`K` buckets of equal probability mass, in the order of a value.

The classic card abstraction of limit hold'em (Johanson's M.Sc. thesis, 2007; Zinkevich, Johanson, Bowling &
Piccione, NIPS 2007) sorts the hands of a round by :math:`\mathrm{E}[\mathrm{HS}^2]` and cuts them into
percentiles. Here the entries are the classes of a round (:mod:`~cfr_agents.abstraction.lossless`), each weighted
by the raw (board set, hand) pairs :math:`w_i` it stands for, so the buckets hold equal chance of being dealt,
not equal numbers of classes. With :math:`W = \sum_i w_i`, the entries sorted by value and entries of equal
value taken as one group :math:`g` of mass :math:`w_g` and mass :math:`W_{<g}` below it, the group goes to

.. math:: \operatorname{bucket}(g) = \min\left(K - 1, \left\lfloor K \, \frac{W_{<g} + w_g / 2}{W} \right\rfloor\right),

the bucket its midpoint falls in. Buckets follow the value (a higher value never has a lower bucket), equal values
share a bucket, and each bucket's mass is within the largest group's mass of :math:`W / K`: a bucket misses at most
half of each of the two groups that straddle its ends and takes at most half of each beyond them. A bucket may
be empty where one group outweighs :math:`W / K`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from adapters.inputs import InputError


def percentile_buckets(values: NDArray[np.float64], weights: NDArray[Any], k: int) -> NDArray[np.int32]:
    """``(N,)``: the bucket in ``[0, k)`` of each entry of ``values`` ``(N,)``, weighted by ``weights`` ``(N,)``
    (non-negative, not all 0), as the module docstring says."""
    values = np.asarray(values, dtype=np.float64)
    weights = np.asarray(weights)
    if values.ndim != 1 or weights.shape != values.shape:
        raise InputError(f"percentile buckets take one weight per value, not {weights.shape} for {values.shape}")
    if k < 1 or not np.isfinite(values).all() or (weights < 0).any() or not weights.sum() > 0:
        raise InputError("percentile buckets need k >= 1, finite values and non-negative weights not all 0")
    return _assign(values, weights, np.argsort(values, kind="stable"), k)


@njit(cache=True)
def _assign(values: NDArray[np.float64], weights: NDArray[Any], order: NDArray[np.int64], k: int) -> NDArray[np.int32]:
    total = 0.0
    for weight in weights:
        total += weight
    labels = np.empty(values.shape[0], dtype=np.int32)
    below, first = 0.0, 0
    while first < order.shape[0]:
        stop, mass = first, 0.0
        while stop < order.shape[0] and values[order[stop]] == values[order[first]]:
            mass += weights[order[stop]]
            stop += 1
        bucket = min(k - 1, int(k * (below + mass / 2) / total))
        for i in range(first, stop):
            labels[order[i]] = bucket
        below += mass
        first = stop
    return labels
