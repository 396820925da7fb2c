"""Hold'em cards in OpenSpiel's ``universal_poker`` numbering: a compiled evaluator in ACPC's order, private
hands and their indexing (:mod:`adapters.holdem.cards`), and suit isomorphism of boards
(:mod:`adapters.holdem.suits`)."""

from adapters.holdem.cards import (
    MAX_RANKS,
    MAX_SUITS,
    RANK_BOUND,
    RANK_CHARS,
    SUIT_CHARS,
    board_mask,
    card_id,
    card_name,
    cards_rank,
    hand_index_table,
    hand_masks,
    hand_rank,
    information_state_fields,
    parse_cards,
    private_hands,
    rank_hands,
)
from adapters.holdem.suits import (
    board_orbits,
    canonical_board,
    card_permutation,
    hand_permutation,
    stabilizer,
    suit_permutations,
)

__all__ = [
    "MAX_RANKS",
    "MAX_SUITS",
    "RANK_BOUND",
    "RANK_CHARS",
    "SUIT_CHARS",
    "board_mask",
    "board_orbits",
    "canonical_board",
    "card_id",
    "card_name",
    "card_permutation",
    "cards_rank",
    "hand_index_table",
    "hand_masks",
    "hand_permutation",
    "hand_rank",
    "information_state_fields",
    "parse_cards",
    "private_hands",
    "rank_hands",
    "stabilizer",
    "suit_permutations",
]
