"""DeepVM Studio's solver library: catalogs, the DeepVM model, solvers, policies, sweeps.

Flow: catalog file -> :mod:`deepvm_core.catalog` (validated ``Catalog``) ->
:mod:`deepvm_core.model` (FLOPP, K, saturation, architectures) -> :mod:`deepvm_core.search.candidates`
(every configuration as arrays) and :mod:`deepvm_core.search.ranking` (stage 4) ->
:mod:`deepvm_core.search.solvers` (PuLP integer program; vectorised enumeration) ->
:mod:`deepvm_core.recommend.recommendation` (recommendations and baselines) and :mod:`deepvm_core.recommend.sweep` ->
:mod:`deepvm_core.io.export` / :mod:`deepvm_core.cli`. :mod:`deepvm_core.catalog.store` reads and writes
catalog files; :mod:`deepvm_core.cloud.aws` fetches live catalogs; :mod:`deepvm_core.catalog.diff` compares
two catalogs' prices and :mod:`deepvm_core.recommend.regions` the best recommendation per region;
:mod:`deepvm_core.job` estimates the cost and time of a training job; :mod:`deepvm_core.cloud.fleet`
launches a configuration on EC2 Fleet.
No module reads files or talks to a service when it is imported.
"""
