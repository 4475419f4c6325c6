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

from deepvm_core.job.calibrate import (
    Calibration,
    EflopsCalibration,
    ScalingFit,
    calibrate_catalog,
    fit_scaling,
)
from deepvm_core.job.checkpoint import (
    daly_interval_seconds,
    segment_plan,
    single_anchor_stall_seconds,
    tiering_stall_seconds,
)
from deepvm_core.job.closed_form import (
    JobEstimates,
    SegmentExpectations,
    estimate_jobs,
    expected_jobs,
    segment_expectations,
)
from deepvm_core.job.errors import (
    CalibrationError,
    JobModelError,
    MeasurementsError,
    WorkloadError,
)
from deepvm_core.job.inputs import (
    ClusterArrays,
    JobInputs,
    cluster_epoch_seconds,
    job_inputs,
)
from deepvm_core.job.measurements import (
    InstanceMeasurements,
    MeasurementTable,
    bundled_measurements_paths,
    load_measurements,
    measurements_to_csv,
    parse_measurements_csv,
)
from deepvm_core.job.montecarlo import JobSamples, MonteCarloSummary, sample_jobs, simulate_jobs
from deepvm_core.job.mtbi import (
    ADVISOR_BUCKET_MTBI_HOURS,
    DEFAULT_MTBI_HOURS,
    MtbiEstimate,
    mtbi_estimate,
    mtbi_estimates,
)
from deepvm_core.job.objectives import cheapest, fastest, pareto_frontier
from deepvm_core.job.planner import (
    GOALS,
    PLAN_POLICIES,
    Goal,
    GpuAssumption,
    JobPlanResult,
    MonteCarloEstimate,
    PlanAssumptions,
    PlanEstimate,
    PolicyEstimates,
    configuration_samples,
    plan_job,
)
from deepvm_core.job.speedup import (
    SPEEDUP_MODELS,
    OneVmTime,
    SpeedupModel,
    fitted_speedup,
    measured_speedup,
    one_vm_epoch_seconds,
    paper_speedup,
    reference_epoch_seconds_from_table,
)
from deepvm_core.job.workload import AUTO, Workload, check_workload, top_spot_flopp_gpu

__all__ = [
    "ADVISOR_BUCKET_MTBI_HOURS",
    "AUTO",
    "DEFAULT_MTBI_HOURS",
    "GOALS",
    "PLAN_POLICIES",
    "SPEEDUP_MODELS",
    "Calibration",
    "CalibrationError",
    "ClusterArrays",
    "EflopsCalibration",
    "Goal",
    "GpuAssumption",
    "InstanceMeasurements",
    "JobEstimates",
    "JobInputs",
    "JobModelError",
    "JobPlanResult",
    "JobSamples",
    "MeasurementTable",
    "MeasurementsError",
    "MonteCarloEstimate",
    "MonteCarloSummary",
    "MtbiEstimate",
    "OneVmTime",
    "PlanAssumptions",
    "PlanEstimate",
    "PolicyEstimates",
    "ScalingFit",
    "SegmentExpectations",
    "SpeedupModel",
    "Workload",
    "WorkloadError",
    "bundled_measurements_paths",
    "calibrate_catalog",
    "cheapest",
    "check_workload",
    "cluster_epoch_seconds",
    "configuration_samples",
    "daly_interval_seconds",
    "estimate_jobs",
    "expected_jobs",
    "fastest",
    "fit_scaling",
    "fitted_speedup",
    "job_inputs",
    "load_measurements",
    "measured_speedup",
    "measurements_to_csv",
    "mtbi_estimate",
    "mtbi_estimates",
    "one_vm_epoch_seconds",
    "paper_speedup",
    "pareto_frontier",
    "parse_measurements_csv",
    "plan_job",
    "reference_epoch_seconds_from_table",
    "sample_jobs",
    "segment_expectations",
    "segment_plan",
    "simulate_jobs",
    "single_anchor_stall_seconds",
    "tiering_stall_seconds",
    "top_spot_flopp_gpu",
]
