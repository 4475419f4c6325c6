"""DeepVM Studio's solver library: catalogs, the DeepVM model, solvers, policies, sweeps.

Flow: catalog file -> :mod:`deepvm_core.catalog` (validated ``Catalog``) ->
:mod:`deepvm_core.model` (FLOPP, K, saturation, architectures) -> :mod:`deepvm_core.candidates`
(every configuration as arrays) and :mod:`deepvm_core.ranking` (stage 4) ->
:mod:`deepvm_core.solvers` (PuLP integer program; vectorised enumeration) ->
:mod:`deepvm_core.policies` (recommendations and baselines) and :mod:`deepvm_core.sweep` ->
:mod:`deepvm_core.export` / :mod:`deepvm_core.cli`. :mod:`deepvm_core.store` reads and writes
catalog files; :mod:`deepvm_core.aws` fetches live catalogs; :mod:`deepvm_core.diff` compares
two catalogs' prices and :mod:`deepvm_core.regions` the best recommendation per region;
:mod:`deepvm_core.job` estimates the cost and time of a training job; :mod:`deepvm_core.fleet`
launches a configuration on EC2 Fleet.
No module reads files or talks to a service when it is imported.
"""
