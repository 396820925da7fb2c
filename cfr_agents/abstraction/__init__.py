"""Card abstraction for limit hold'em: each player's hole cards and the board set dealt so far map to a bucket in
each round (imperfect recall), for the sampled solvers to index their tables by (betting node, bucket).

* :mod:`~cfr_agents.abstraction.indexing`: board sets to canonical boards and suit permutations, hands to rows;
* :mod:`~cfr_agents.abstraction.lossless`: the suit-isomorphism classes of (board set, hand) pairs;
* :mod:`~cfr_agents.abstraction.strength`: hand strength at the last round, E[HS], E[HS^2] and equity histograms
  over the run-outs before it;
* :mod:`~cfr_agents.abstraction.strength_input`: E[HS] of any deal, a neural network's strength input;
* :mod:`~cfr_agents.abstraction.suit_images`: the suit-canonical image of any state, what a network reads with
  canonical inputs;
* :mod:`~cfr_agents.abstraction.percentile`: E[HS^2] percentile buckets of equal probability mass;
* :mod:`~cfr_agents.abstraction.kmeans_emd`: k-means of equity histograms under the earth mover's distance;
* :mod:`~cfr_agents.abstraction.tables`: :class:`Abstraction` and the compiled lookup :func:`bucket_of`;
* :mod:`~cfr_agents.abstraction.build` and :mod:`~cfr_agents.abstraction.store`: building, the files, the cache.
"""

from cfr_agents.abstraction.build import build_abstraction, class_counts
from cfr_agents.abstraction.spec import RoundSpec, parse_spec
from cfr_agents.abstraction.store import AbstractionFileError, build_cached, load_abstraction, save_abstraction
from cfr_agents.abstraction.tables import Abstraction, AbstractionTables, bucket_of

__all__ = [
    "Abstraction",
    "AbstractionFileError",
    "AbstractionTables",
    "RoundSpec",
    "bucket_of",
    "build_abstraction",
    "build_cached",
    "class_counts",
    "load_abstraction",
    "parse_spec",
    "save_abstraction",
]
