"""Fixtures shared by the test modules (helpers live in tests/support.py), and Hypothesis profiles.

``make test`` runs the property tests with the ``bounded`` profile: few examples, the same ones on
every run. ``make test-slow`` passes ``--hypothesis-profile=slow``: many more, freshly drawn.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from cfr_agents import make_solver
from tests.support import GAME_IDS, tree

UNTIMED = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""Examples that train or call OpenSpiel take their time; no per-example deadline."""
settings.register_profile("bounded", UNTIMED, max_examples=20, derandomize=True, database=None)
settings.register_profile("slow", UNTIMED, max_examples=400)
settings.load_profile("bounded")


@pytest.fixture(scope="session", autouse=True)
def tree_cache_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``XDG_CACHE_HOME`` of the whole session (and of the processes it starts): a fresh directory,
    so the tree cache starts empty and the user's own cache is never read or written."""
    home = tmp_path_factory.mktemp("xdg-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(home))
        patch.delenv("CFR_AGENTS_NO_TREE_CACHE", raising=False)
        yield home


@pytest.fixture(params=GAME_IDS)
def game_id(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def local_ray() -> Iterator[None]:
    """A real local Ray runtime, started once for the tests that need it; skipped without Ray."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'cfr-agents[ray]')")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="session")
def policy_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A policy file per game the match tests play, from 300 iterations of DCFR."""
    directory = tmp_path_factory.mktemp("policies")
    files = {}
    for game_id in ("rlcard:leduc-holdem", "openspiel:kuhn_poker", "rlcard:kuhn-poker"):
        solver = make_solver(tree(game_id), "dcfr")
        solver.run(300)
        files[game_id] = directory / f"{game_id.replace(':', '_')}.json"
        solver.average_policy().save(files[game_id])
    return files
