"""Evaluation: the exact strategy of any agent, exact best response (a value and a playable policy),
NashConv and exploitability, exact head-to-head values on the compiled tree, sampled duplicate
matches in the real environment, and named opponents (:mod:`eval.opponents`)."""

from eval.agents import Agent, AgentQueryError, as_agent, strategy_of
from eval.best_response import best_response_policy, best_response_strategy
from eval.environments import MatchResult, play_openspiel_match, play_rlcard_match
from eval.exploitability import Exploitability, exploitability, exploitability_of_strategy
from eval.head_to_head import HeadToHead, exact_head_to_head

__all__ = [
    "Agent",
    "AgentQueryError",
    "Exploitability",
    "HeadToHead",
    "MatchResult",
    "as_agent",
    "best_response_policy",
    "best_response_strategy",
    "exact_head_to_head",
    "exploitability",
    "exploitability_of_strategy",
    "play_openspiel_match",
    "play_rlcard_match",
    "strategy_of",
]
