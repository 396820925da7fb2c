"""Named opponents: random, RLCard's rule and CFR agents, NFSP from both toolkits, OpenSpiel's C++
solvers, and any policy or model file. The registry is :mod:`eval.opponents.registry`, one spec per
family; this package re-exports it."""

from eval.opponents.base import FULL, LOSSY, Family, Opponent, Training
from eval.opponents.registry import (
    FAMILIES,
    MODELS,
    RESOLVE_SUMMARY,
    RESOLVING,
    TRAINABLE,
    available,
    is_file_name,
    load_model_file,
    load_opponent,
    resolves,
    shipped_model,
    trainable,
)

__all__ = [
    "FAMILIES",
    "FULL",
    "LOSSY",
    "MODELS",
    "RESOLVE_SUMMARY",
    "RESOLVING",
    "TRAINABLE",
    "Family",
    "Opponent",
    "Training",
    "available",
    "is_file_name",
    "load_model_file",
    "load_opponent",
    "resolves",
    "shipped_model",
    "trainable",
]
