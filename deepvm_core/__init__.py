"""DeepVM Studio's solver library: catalogs, the DeepVM model, solvers, policies, sweeps.

Layers, each a folder (a module imports only from the layers above it):

1. :mod:`deepvm_core.errors`, :mod:`deepvm_core.units` (shared constants),
   :mod:`deepvm_core.arrays` (array type aliases), :mod:`deepvm_core.bundled` (the data files
   shipped in the package, ``data/``), :mod:`deepvm_core.home` (where the user's files go);
2. :mod:`deepvm_core.catalog`: instance types, quotas, saturation; validation, file formats,
   reading and writing files (``store``), price diffs (``diff``);
3. :mod:`deepvm_core.model`: FLOPP, K, saturation, :class:`~deepvm_core.model.Scenario`,
   :class:`~deepvm_core.model.Configuration`;
4. :mod:`deepvm_core.search`: every configuration as arrays (``candidates``), the stage-4 order
   (``ranking``), the PuLP integer program and the exact enumeration (``solvers``);
5. :mod:`deepvm_core.recommend`: recommendations and the paper's baselines, the narrative,
   PW sweeps, regions;
6. :mod:`deepvm_core.job`: the cost and time of a training job on spot VMs (``plan_job``);
7. :mod:`deepvm_core.io`: JSON exports, replay, the job plan as JSON;
8. :mod:`deepvm_core.cloud`: live AWS prices (``aws``) and EC2 Fleet launches (``fleet``);
9. :mod:`deepvm_core.cli`: the ``deepvm`` command.

No module reads files or talks to a service when it is imported.
"""
