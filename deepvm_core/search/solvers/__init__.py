"""Solvers of the DeepVM model: the PuLP integer program and the exact enumeration.

The integer program's time budget lives here, not in :mod:`deepvm_core.search.solvers.ilp`, so
that callers can read it without importing PuLP.
"""

#: The integer program's default time budget per call, seconds: what an interactive page waits
#: (:func:`deepvm_core.search.solvers.ilp.solve_top_k`,
#: :func:`deepvm_core.recommend.recommendation.recommend`).
ILP_TIME_LIMIT_S = 5.0
