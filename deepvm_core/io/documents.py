"""The JSON the library writes, typed at the boundary: the pieces of the recommendation export
(:mod:`deepvm_core.io.export`) and of the job plan (:mod:`deepvm_core.io.plan_json`).

Key order is the order of the fields here, which is the order the files have (the golden files
of ``tests/test_golden_cli.py`` pin it). Units are in the key names (USD per hour, GB, seconds,
hours) unless said otherwise. Reading a document back (:mod:`deepvm_core.io.replay`,
:mod:`deepvm_core.cloud.fleet.target`) checks every field it uses, since a file may hold
anything; those readers take a plain mapping.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict


class GpuPartDoc(TypedDict):
    """The GPU VMs of a configuration: type name, spot and on-demand counts."""

    name: str
    spot: int
    on_demand: int


class CpuPartDoc(TypedDict):
    """The memory nodes of a Tiering configuration: CPU type name and on-demand count."""

    name: str
    on_demand: int


class ConfigurationDoc(TypedDict):
    """One configuration. ``hourly_price`` is USD per hour (rounded to 1e-10); ``objective`` its
    value under the scenario's objective; ``performance`` eFLOPS n K(n); ``cluster_flopp`` eFLOP
    per USD."""

    architecture: str
    gpu: GpuPartDoc
    cpu: CpuPartDoc | None
    hourly_price: float
    objective: float
    performance: float
    z_paper: float
    scaling_factor: float
    cluster_flopp: float
    summary: str
    speed_epochs_per_hour: float | None
    speed_vs_one_ref_vm: float | None


class ExplanationDoc(TypedDict):
    """Why nothing (or no configuration of one architecture) is feasible."""

    summary: str
    binding: list[str]
    cheapest_feasible_usd_per_hour: float | None
    cheapest_configuration: ConfigurationDoc | None


class AcceleratorBestDoc(TypedDict):
    """One row of the export's ``by_accelerator`` (:mod:`deepvm_core.recommend.by_accelerator`):
    the best configuration of one accelerator model within PW and its rank (``None`` without),
    else the cheapest one beyond PW, the sources of its GPU type's eFLOPS and scaling, and why
    there is none."""

    accelerator: str
    rank: int | None
    gpu_types: list[str]
    configuration: ConfigurationDoc | None
    cheapest: ConfigurationDoc | None
    eflops_source: str | None
    scaling_source: str | None
    note: str


class GpuFilterDoc(TypedDict):
    """The scenario's GPU filter (``inputs.gpu_filter``, only when one is set:
    :class:`~deepvm_core.catalog.gpu_filter.GpuFilter`): the models allowed (``[]``: any), the
    least GB per GPU and the GPUs per VM (``null``: any), and its sentence."""

    accelerators: list[str]
    min_gpu_memory_gb: float | None
    gpus_per_vm: int | None
    summary: str


class InputsDoc(TypedDict):
    """The scenario and the recommendation's settings (``inputs`` of the export); ``gpu_filter``
    only when the scenario has one."""

    pw_usd_per_hour: float
    checkpoint_gb: float
    buffer_checkpoints: float
    objective: str
    use_quotas: bool
    max_nodes: int
    top_k: int
    solver: str
    gpu_filter: NotRequired[GpuFilterDoc]


class OnDemandDoc(TypedDict):
    """The same cluster with every VM on demand, no interruptions: USD and hours."""

    cost_usd: float | None
    makespan_hours: float | None


class EstimateDoc(TypedDict):
    """A configuration's job estimate in the plan JSON; ``null`` for a value that is not finite.
    ``does_not_finish`` (the reason, with T, C and N null) only for a cluster not expected to
    finish; the Monte Carlo keys only when the configuration was simulated (or backtested:
    ``evaluated_by`` ``backtest``, ``renewal`` or ``trace_closed_form``, its ``pools`` in
    failover order and its ``recovery`` policy; ``closed_form``, ``[]`` and ``null``
    otherwise); ``odds``: where its numbers come from, in one sentence."""

    epoch_seconds: float
    compute_hours: float
    checkpoint_stall_seconds: float
    checkpoint_interval_seconds: float | None
    checkpoints: int
    expected_makespan_hours: float | None
    expected_cost_usd: float | None
    expected_interruptions: float | None
    within_limits: bool
    evaluated_by: str
    pools: list[str]
    recovery: str | None
    odds: str
    on_demand_same_cluster: OnDemandDoc
    savings_vs_on_demand_usd: float | None
    savings_vs_on_demand_percent: float | None
    slow_warning: str | None
    does_not_finish: NotRequired[str]
    trials: NotRequired[int]
    makespan_hours_p10: NotRequired[float | None]
    makespan_hours_p50: NotRequired[float | None]
    makespan_hours_p90: NotRequired[float | None]
    cost_usd_p10: NotRequired[float | None]
    cost_usd_p50: NotRequired[float | None]
    cost_usd_p90: NotRequired[float | None]
    mean_interruptions: NotRequired[float | None]
    deadline_probability: NotRequired[float]
    confidence: NotRequired[str]


class PlanConfigurationDoc(ConfigurationDoc):
    """A configuration of the plan JSON: the export's keys plus its ``estimate``."""

    estimate: EstimateDoc


class GpuAssumptionDoc(TypedDict):
    """What the plan assumed for one GPU type (MTBI hours, speedup, one-VM epoch seconds)."""

    mtbi_hours: float
    mtbi_source: str
    wait_hours: float
    wait_source: str
    interruption_bucket: int | None
    speedup_source: str
    one_vm_epoch_seconds: float | None
    one_vm_source: str | None
    relative_speed_source: str | None
    relative_speed_table: str | None
    relative_one_vm_time: float | None
    memory_fit: str | None


class AssumptionsDoc(TypedDict):
    """The plan's ``assumptions``: the workload settings it used, per GPU type too."""

    speedup: str
    measurements: str | None
    reference_gpu: str
    checkpoint_every_epochs: int | str
    restart_hours: float
    wait_hours: float | None
    disk_gb_per_s: float
    checkpoint_fixed_seconds: float
    mtbi_scale: float
    per_vm_share: float
    gpu_types: dict[str, GpuAssumptionDoc]
