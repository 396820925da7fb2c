"""Benchmarks against OpenSpiel and LiteEFG: one module per yardstick family (:mod:`benchmarks.full_tree`,
:mod:`benchmarks.sampling`), shared measurement (:mod:`benchmarks.measure`) and presentation
(:mod:`benchmarks.report`); ``benchmarks/solvers.py`` is the entry point (``make bench``)."""
