"""Evaluation: exact best response, NashConv and exploitability on the compiled tree."""

from eval.exploitability import Exploitability, exploitability, exploitability_of_strategy

__all__ = ["Exploitability", "exploitability", "exploitability_of_strategy"]
