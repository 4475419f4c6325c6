"""Search: every configuration of a scenario and the best ones (the DeepVM model's stages 3-4).

* :mod:`deepvm_core.search.candidates`: every feasible configuration as arrays
  (:class:`~deepvm_core.search.tables.CandidateTable`);
* :mod:`deepvm_core.search.ranking`: the stage-4 order (objective, then the tie-breaks);
* :mod:`deepvm_core.search.solvers`: the PuLP integer program and the exact enumeration.
"""
