"""Search: every configuration of a scenario and the best ones (the DeepVM model's stages 3-4).

* :mod:`deepvm_core.search.candidates`: a scenario's candidate domain, built once
  (:class:`~deepvm_core.search.tables.CandidateDomain`), and :mod:`deepvm_core.search.pairing`:
  its configurations (:class:`~deepvm_core.search.tables.CandidateTable`);
* :mod:`deepvm_core.search.ranking`: the stage-4 order (objective, then the tie-breaks);
* :mod:`deepvm_core.search.solvers`: the PuLP integer program and the exact enumeration.
"""
