"""The job model (``job-model.md``): what a training job costs in total and when it is done,
given that spot VMs get reclaimed.

Flow: a :class:`Workload` (epochs, a reference epoch time, checkpoint and restart settings,
MTBI assumptions) and a catalog -> per-GPU-type facts (:func:`mtbi_estimates`,
:func:`one_vm_epoch_seconds` under a :class:`SpeedupModel`) -> :func:`job_inputs` turns
:class:`ClusterArrays` (many configurations at once) into a :class:`JobInputs` (epoch time, δ, τ,
segments, λ) -> :func:`expected_jobs` (exact closed form, :class:`JobEstimates`) and
:func:`simulate_jobs` (seeded Monte Carlo, :class:`MonteCarloSummary`) -> :func:`cheapest`,
:func:`fastest`, :func:`pareto_frontier`. :func:`plan_job` (module ``planner``) does all of it
for a catalog: every feasible cluster, the goal, the frontier, the paper's policies, Monte
Carlo for the few that matter (:class:`JobPlanResult`; JSON by
:func:`deepvm_core.io.plan_json.plan_to_dict`).
Measurements (:func:`load_measurements`) feed the ``measured`` speedup model and
:func:`calibrate_catalog`.

Modules: ``workload``, ``mtbi``, ``measurements``, ``speedup``, ``calibrate``, ``checkpoint``,
``plan``, ``closed_form``, ``montecarlo``, ``objectives``, ``planner``, ``errors``. Nothing is
read from disk at import time.
"""
