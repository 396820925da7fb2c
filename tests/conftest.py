"""Fixtures shared by the test modules (helpers live in tests/support.py)."""

from __future__ import annotations

import pytest

from tests.support import GAME_IDS


@pytest.fixture(params=GAME_IDS)
def game_id(request: pytest.FixtureRequest) -> str:
    return str(request.param)
