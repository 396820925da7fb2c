# `make demo` and `make test` each create .venv, install what they need, and run.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
INSTALL := $(BIN)/pip install --quiet
# `make test` runs the default suite in this many processes (pytest-xdist; the tests of one file run in one); the slow
# suite runs in one, as some of its solves take half the machine's memory. The slowest tests are listed at the end.
TEST_WORKERS ?= 2

# The shipped trained opponents join the demo tournament when their model files are present.
MODELS := eval/opponents/models
DEMO_SHIPPED := $(if $(wildcard $(MODELS)/rlcard-nfsp_leduc-holdem.json),rlcard-nfsp) \
	$(if $(wildcard $(MODELS)/rlcard-cfr_leduc-holdem.json),rlcard-cfr)

.PHONY: demo test test-slow lint bench bench-opponents bench-neural bench-web docs screenshots clean

$(VENV)/.created:
	$(PYTHON) -m venv $(VENV)
	$(INSTALL) --upgrade pip
	# torch first, pinned: 2.13.0 is the CPU build; an unpinned torch would pull CUDA packages.
	$(INSTALL) "torch==2.13.0"
	touch $@

# One stamp per set of extras: the demo needs no test, LP or benchmark packages.
$(VENV)/.demo: pyproject.toml $(VENV)/.created
	$(INSTALL) -e ".[nfsp,plot]"
	touch $@

$(VENV)/.test: pyproject.toml $(VENV)/.created
	$(INSTALL) -e ".[nfsp,plot,ray,verify,pettingzoo,web,dev]"
	touch $@

$(VENV)/.bench: pyproject.toml $(VENV)/.test
	$(INSTALL) -e ".[nfsp,plot,ray,verify,pettingzoo,web,dev,bench]"
	touch $@

$(VENV)/.docs: pyproject.toml $(VENV)/.test
	$(INSTALL) -e ".[nfsp,plot,ray,verify,dev,docs]"
	touch $@

demo: $(VENV)/.demo
	mkdir -p out
	$(BIN)/cfr-agents train --game openspiel:leduc_poker --algo dcfr --iterations 2000 --out out/openspiel_leduc.json
	$(BIN)/cfr-agents exploitability out/openspiel_leduc.json --cross-check
	$(BIN)/cfr-agents train --game rlcard:leduc-holdem --algo dcfr --iterations 2000 --out out/rlcard_leduc.json
	$(BIN)/cfr-agents exploitability out/rlcard_leduc.json --cross-check
	$(BIN)/python examples/rlcard_tournament.py out/rlcard_leduc.json
	$(BIN)/cfr-agents tournament --game rlcard:leduc-holdem out/rlcard_leduc.json random rlcard-rule-v1 rlcard-rule-v2 \
		rlcard-pretrained-cfr $(DEMO_SHIPPED) --hands 4000 --seed 0 --out out/tournament --quiet
	$(BIN)/cfr-agents plot strategy out/rlcard_leduc.json --line call:raise:call:SK:check:raise --out out/strategy_line.png

# While lint and docs run on one core, tests/warm_kernels.py compiles the kernels the suite compiles most into
# Numba's cache on the other; the suite passes without it.
test: $(VENV)/.test
	$(BIN)/python -m tests.warm_kernels & warm=$$!; \
	if $(MAKE) --no-print-directory lint docs; then wait $$warm || echo "tests/warm_kernels.py failed; the tests compile"; \
	else kill $$warm; exit 1; fi
	$(BIN)/python -m pytest -m "not slow" -n $(TEST_WORKERS) --dist loadfile --durations=15

test-slow: $(VENV)/.test
	$(BIN)/python -m pytest -m slow --hypothesis-profile=slow
	$(BIN)/python -m pytest -m "not slow" --hypothesis-profile=slow tests/test_fuzz_*.py

lint: $(VENV)/.test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-logo

bench: $(VENV)/.bench
	$(BIN)/python benchmarks/solvers.py
	$(BIN)/python benchmarks/matches.py

bench-opponents: $(VENV)/.test
	$(BIN)/python benchmarks/opponents.py --out benchmarks/results/opponents.md
	$(BIN)/python benchmarks/opponent_tables.py --out-dir benchmarks/results

# Neural CFR beside OpenSpiel's Deep CFR and tabular MCCFR, two runs at once (one per core): each Leduc about an
# hour (budgets of CPU time: seed 0 for 20 min, scored at 5 min on its way, and seeds 1-2 for 5 min), ours with
# --preset fast-large on OpenSpiel's Leduc and fast on RLCard's; Kuhn 6 min; SD-CFR with a perfect fit of its
# memory (5 min).
bench-neural: $(VENV)/.test
	$(BIN)/python benchmarks/neural.py --game openspiel:leduc_poker --preset fast-large --parallel 2 --checks 8 \
		--out benchmarks/results/neural.md
	$(BIN)/python benchmarks/neural.py --game rlcard:leduc-holdem --parallel 2 --checks 8 --out benchmarks/results/neural-rlcard.md
	$(BIN)/python benchmarks/neural.py --game openspiel:kuhn_poker --minutes 1 --seeds 3 --checks 6 --parallel 2 \
		--out benchmarks/results/neural-kuhn.md
	$(BIN)/python benchmarks/neural_limits.py --out benchmarks/results/neural-limits.md

# The browser side's figures (the system's Chromium): benchmarks/results/web.md.
bench-web: $(VENV)/.test
	$(BIN)/python -m benchmarks.web --out benchmarks/results/web

# The docs' screenshots of play and the explorer, taken by the browser tests themselves (the system's Chromium).
screenshots: $(VENV)/.test
	CFR_AGENTS_SCREENSHOTS=docs $(BIN)/python -m pytest tests/test_browser.py -q

# The documentation site (docs/, Sphinx + MyST) with the API reference; warnings are errors.
docs: $(VENV)/.docs
	$(BIN)/sphinx-build -W --keep-going -b html docs docs/_build/html

clean:
	rm -rf $(VENV) out
