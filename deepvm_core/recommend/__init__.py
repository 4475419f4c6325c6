"""Recommendations: what DeepVM and the paper's baselines choose, and views over them.

* :mod:`deepvm_core.recommend.recommendation`: :func:`recommend`, the baselines,
  :class:`Recommendation`;
* :mod:`deepvm_core.recommend.narrative`: the recommendation in words;
* :mod:`deepvm_core.recommend.sweep`: every policy over a PW range (the paper's Fig. 3);
* :mod:`deepvm_core.recommend.regions`: the best recommendation per region.
"""
