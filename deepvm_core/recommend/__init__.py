"""Recommendations: what DeepVM and the paper's baselines choose, and views over them.

* :mod:`deepvm_core.recommend.recommendation`: :func:`recommend` (one candidate domain per
  scenario, handed down) and :class:`Recommendation`;
* :mod:`deepvm_core.recommend.policies`: the paper's policies (one list, one order, labels) and
  the Cost-First and Performance-First rules;
* :mod:`deepvm_core.recommend.explain`: why nothing is feasible;
* :mod:`deepvm_core.recommend.by_accelerator`, :mod:`deepvm_core.recommend.distinct`: the best
  cluster of each accelerator model, distinct clusters;
* :mod:`deepvm_core.recommend.narrative`: the recommendation in words;
* :mod:`deepvm_core.recommend.sweep`: every policy over a PW range (the paper's Fig. 3);
* :mod:`deepvm_core.recommend.regions`: the best recommendation per region.
"""
