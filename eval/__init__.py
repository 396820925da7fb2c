"""Evaluation: exact best response, NashConv and exploitability, exact head-to-head values on the
compiled tree, and sampled duplicate matches in the real environment."""

from eval.exploitability import Exploitability, exploitability, exploitability_of_strategy
from eval.head_to_head import HeadToHead, exact_head_to_head
from eval.match import MatchResult, play_rlcard_match

__all__ = [
    "Exploitability",
    "HeadToHead",
    "MatchResult",
    "exact_head_to_head",
    "exploitability",
    "exploitability_of_strategy",
    "play_rlcard_match",
]
