"""The training job a user wants to run (``job-model.md``, "Inputs").

A :class:`Workload` checks its own values when it is built and lists every bad field with its
value (:class:`~deepvm_core.errors.WorkloadError`). :func:`check_workload` then checks it
against a catalog: the reference GPU type and the types named in MTBI overrides must exist
(close names are suggested). Without a reference type the epoch time is on the fixed yardstick,
one A10G (:mod:`deepvm_core.workload.yardstick`).

Symbols of ``job-model.md``: E ``epochs``, t_ref ``reference_epoch_seconds`` measured on n_ref
``reference_nodes`` VMs of g_ref ``reference_gpu``, f ``checkpoint_gb``, k
``checkpoint_every_epochs`` (or ``"auto"``: Daly's interval), R ``restart_hours``, W
``wait_hours``, D ``disk_gb_per_second``, δ0 ``checkpoint_fixed_seconds``, MTBI(g) overrides
``mtbi_hours_by_gpu``, the sensitivity factor ``mtbi_scale`` and ρ ``per_vm_share``, the share of
one VM's reclaims that take that VM alone (:mod:`deepvm_core.market.reclaims`).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.errors import Problem, WorkloadError
from deepvm_core.model import DEFAULT_CHECKPOINT_GB
from deepvm_core.units import MINUTES_PER_HOUR
from deepvm_core.workload.memory import checkpoint_gb as transformer_checkpoint_gb
from deepvm_core.workload.transformer import TransformerJob

CheckpointEvery = int | Literal["auto"]
AUTO: Literal["auto"] = "auto"
#: What kind of job: ``cnn`` (the paper's data-parallel job, relative speeds from eFLOPS or a
#: measurement table) or ``transformer`` (an LLM pretraining or fine-tune: GPU memory decides
#: which types can run it, its time comes from FLOPs per token and MFU or a measured tokens/s).
WorkloadKind = Literal["cnn", "transformer"]
#: The kinds, the default first.
WORKLOAD_KINDS: Final[tuple[WorkloadKind, ...]] = ("cnn", "transformer")

_WHERE = "workload"

#: k of a transformer job unless the user gives one: Daly's interval (one epoch can be a whole
#: fine-tune, so a checkpoint per epoch would be none at all).
TRANSFORMER_CHECKPOINT_EVERY: Final[CheckpointEvery] = AUTO

#: Upper bound of R, ``restart_hours``: relaunching, rejoining and restoring from the last
#: checkpoint takes minutes; a day is far past any real restart (hours).
MAX_RESTART_HOURS: Final = 24.0
#: Upper bound of W, ``wait_hours``: public spot traces show 1.4-3.1 h to get capacity back;
#: a week is far past them (hours).
MAX_WAIT_HOURS: Final = 168.0
#: ρ, the default share of one spot VM's reclaims that take that VM alone rather than the whole
#: market (:mod:`deepvm_core.market.reclaims`, where the arithmetic is): n spot VMs are
#: interrupted (1 + ρ (n - 1)) times as often as one. Public count traces put MTBI(1) / MTBI(4)
#: at 1.2-2.7 (ρ 0.048-0.298) and MTBI(1) / MTBI(16) at 0.9-2.1 (ρ 0-0.064); 0.06 is in both.
DEFAULT_PER_VM_SHARE: Final = 0.06
#: Upper bound of δ0, ``checkpoint_fixed_seconds``: serialising and syncing one checkpoint
#: takes seconds; an hour is far past it (seconds).
MAX_CHECKPOINT_FIXED_SECONDS: Final = 3600.0

#: The example job (:func:`example_workload`), used wherever the user has not given theirs (the
#: CLI's defaults, the README, the dashboard's pages, the benchmarks, speed without a job,
#: :func:`deepvm_core.workload.speed.default_speed_basis`): a ResNet-50-sized job, 90 epochs of
#: 960 s on one A10G GPU (the fixed yardstick, :mod:`deepvm_core.workload.yardstick`), i.e. 24
#: hours of training on one g5.xlarge. The same job in every catalog and region. An example,
#: not a measurement: edit the epoch time to yours. :data:`EXAMPLE_REFERENCE_GPU` is the catalog
#: type the README names when it shows a measurement on a named type (``--ref-type``).
EXAMPLE_EPOCHS: Final = 90.0
EXAMPLE_EPOCH_SECONDS: Final = 960.0
EXAMPLE_REFERENCE_GPU: Final = "g4dn.xlarge"
EXAMPLE_DESCRIPTION: Final = ("an example, a ResNet-50-sized job: 90 epochs of 960 s on one "
                              "A10G GPU (24 h); edit the epoch time to yours")


def _number(problems: list[Problem], name: str, value: object, *, positive: bool = False,
            nonnegative: bool = False, maximum: float | None = None,
            unit: str = "") -> None:
    """Record a problem unless ``value`` is a finite number within the bounds asked for
    (``maximum`` inclusive, named with its ``unit`` in the message)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        problems.append(Problem(_WHERE, name, value, "must be a number"))
    elif not math.isfinite(value):
        problems.append(Problem(_WHERE, name, value, "must be a finite number"))
    elif positive and value <= 0:
        problems.append(Problem(_WHERE, name, value, "must be greater than 0"))
    elif nonnegative and value < 0:
        problems.append(Problem(_WHERE, name, value, "must not be negative"))
    elif maximum is not None and value > maximum:
        minutes = f" ({maximum * MINUTES_PER_HOUR:g} min)" if unit == " h" else ""
        problems.append(Problem(_WHERE, name, value,
                                f"must be at most {maximum:g}{unit}{minutes}"))


@dataclass(frozen=True, kw_only=True)
class Workload:
    """A training job and the assumptions about its interruptions.

    A ``cnn`` job (the default) gives its time as t_ref; a ``transformer`` job
    (``transformer`` set) gives its model and tokens, and its time comes from the FLOPs per
    token at a published MFU or from ``tokens_per_second`` measured on ``reference_nodes`` VMs
    of ``reference_gpu`` (:mod:`deepvm_core.workload.throughput`); its GPU memory decides which
    types can run it at all (:mod:`deepvm_core.workload.memory`).

    Attributes:
        epochs: E, epochs of the job (> 0; may be fractional); a transformer job's own
            ``transformer.epochs``.
        reference_epoch_seconds: t_ref, measured seconds per epoch (> 0) on
            ``reference_nodes`` VMs of ``reference_gpu``; required for a ``cnn`` job, ``None``
            for a ``transformer`` job.
        reference_gpu: g_ref, the GPU type of that measurement; ``None`` means the fixed
            yardstick, one A10G GPU (:mod:`deepvm_core.workload.yardstick`), the same in every
            catalog (for a transformer job without a measurement, g_ref is the type it runs on
            at the most tokens per spot USD).
        reference_nodes: n_ref, VMs of that measurement (whole number >= 1; 1 when
            ``reference_gpu`` is ``None``: the yardstick is one GPU).
        checkpoint_gb: f, checkpoint size in GB (> 0).
        checkpoint_every_epochs: k, a checkpoint every k epochs (whole number >= 1), or
            ``"auto"`` for Daly's interval.
        restart_hours: R, relaunch + rejoin + restore after an interruption, hours (0 to
            :data:`MAX_RESTART_HOURS`).
        wait_hours: W, mean wait for spot capacity after an interruption (and, for a job that
            starts inside an outage, before its first attempt), hours (0 to
            :data:`MAX_WAIT_HOURS`); ``None`` (default): each GPU type's Spot Advisor bucket
            default (:mod:`deepvm_core.market.mtbi`).
        disk_gb_per_second: D, the anchor's disk write bandwidth, GB/s (> 0; Single Anchor).
        checkpoint_fixed_seconds: δ0, fixed cost of one checkpoint, seconds (0 to
            :data:`MAX_CHECKPOINT_FIXED_SECONDS`).
        mtbi_hours_by_gpu: user MTBI per GPU type name, hours (> 0); replaces the Spot
            Advisor default. Stored as a copy; treat it as read-only.
        mtbi_scale: factor on every MTBI (> 0), the sensitivity control (``job-model.md``
            suggests 0.25 to 4).
        transformer: the transformer job (model, tokens, method, sharding, ...), or ``None``
            for a ``cnn`` job.
        tokens_per_second: a transformer job's measured tokens per second on
            ``reference_nodes`` VMs of ``reference_gpu`` (which it needs), or ``None`` (the
            estimate).
        per_vm_share: ρ, the share of one VM's reclaims that take that VM alone (0 to 1;
            :data:`DEFAULT_PER_VM_SHARE`): n spot VMs are interrupted at (1 + ρ (n - 1)) times
            one VM's rate (:mod:`deepvm_core.market.reclaims`); 0 is the all-or-none market.
    """

    epochs: float
    reference_epoch_seconds: float | None = None
    reference_gpu: str | None = None
    reference_nodes: int = 1
    checkpoint_gb: float = DEFAULT_CHECKPOINT_GB
    checkpoint_every_epochs: CheckpointEvery = 1
    restart_hours: float = 0.1
    wait_hours: float | None = None
    disk_gb_per_second: float = 0.25
    checkpoint_fixed_seconds: float = 0.0
    mtbi_hours_by_gpu: Mapping[str, float] = field(default_factory=dict, hash=False)
    mtbi_scale: float = 1.0
    transformer: TransformerJob | None = None
    tokens_per_second: float | None = None

    @property
    def kind(self) -> WorkloadKind:
        """``transformer`` when :attr:`transformer` is set, else ``cnn``."""
        return "cnn" if self.transformer is None else "transformer"
    per_vm_share: float = DEFAULT_PER_VM_SHARE

    def __post_init__(self) -> None:
        problems: list[Problem] = []
        _number(problems, "epochs", self.epochs, positive=True)
        self._check_kind(problems)
        if self.reference_gpu is not None and (
                not isinstance(self.reference_gpu, str) or not self.reference_gpu.strip()):
            problems.append(Problem(_WHERE, "reference_gpu", self.reference_gpu,
                                    "must be a GPU type name, or None for the yardstick "
                                    "(one A10G)"))
        n_ref = self.reference_nodes
        if isinstance(n_ref, bool) or not isinstance(n_ref, int) or n_ref < 1:
            problems.append(Problem(_WHERE, "reference_nodes", n_ref,
                                    "must be a whole number >= 1"))
        elif self.reference_gpu is None and n_ref != 1:
            problems.append(Problem(_WHERE, "reference_nodes", n_ref,
                                    "must be 1 when no reference type is named (the epoch time "
                                    "is then on one A10G); name the GPU type measured on "
                                    f"{n_ref} VMs"))
        _number(problems, "checkpoint_gb", self.checkpoint_gb, positive=True)
        k = self.checkpoint_every_epochs
        if k != AUTO and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            problems.append(Problem(_WHERE, "checkpoint_every_epochs", k,
                                    "must be a whole number >= 1 or 'auto' (Daly's interval)"))
        _number(problems, "restart_hours", self.restart_hours, nonnegative=True,
                maximum=MAX_RESTART_HOURS, unit=" h")
        if self.wait_hours is not None:
            _number(problems, "wait_hours", self.wait_hours, nonnegative=True,
                    maximum=MAX_WAIT_HOURS, unit=" h")
        _number(problems, "disk_gb_per_second", self.disk_gb_per_second, positive=True)
        _number(problems, "checkpoint_fixed_seconds", self.checkpoint_fixed_seconds,
                nonnegative=True, maximum=MAX_CHECKPOINT_FIXED_SECONDS, unit=" s")
        _number(problems, "mtbi_scale", self.mtbi_scale, positive=True)
        _number(problems, "per_vm_share", self.per_vm_share, nonnegative=True, maximum=1.0)
        overrides = self.mtbi_hours_by_gpu
        if not isinstance(overrides, Mapping):
            problems.append(Problem(_WHERE, "mtbi_hours_by_gpu", overrides,
                                    "must be a mapping {GPU type name: hours}"))
        else:
            for name, hours in overrides.items():
                if not isinstance(name, str) or not name:
                    problems.append(Problem(_WHERE, "mtbi_hours_by_gpu", name,
                                            "keys must be GPU type names"))
                _number(problems, f"mtbi_hours_by_gpu[{name!r}]", hours, positive=True)
            object.__setattr__(self, "mtbi_hours_by_gpu", dict(sorted(overrides.items())))
        if problems:
            raise WorkloadError(problems)

    def _check_kind(self, problems: list[Problem]) -> None:
        """A cnn job's t_ref, or a transformer job's own fields (class docstring)."""
        job = self.transformer
        if job is None:
            _number(problems, "reference_epoch_seconds", self.reference_epoch_seconds,
                    positive=True)
            if self.tokens_per_second is not None:
                problems.append(Problem(_WHERE, "tokens_per_second", self.tokens_per_second,
                                        "is a transformer job's measurement (give the "
                                        "transformer job, or the epoch time instead)"))
            return
        if not isinstance(job, TransformerJob):
            problems.append(Problem(_WHERE, "transformer", job, "must be a TransformerJob"))
            return
        if self.reference_epoch_seconds is not None:
            problems.append(Problem(_WHERE, "reference_epoch_seconds",
                                    self.reference_epoch_seconds,
                                    "a transformer job's time comes from its tokens per "
                                    "second (measured or estimated), not an epoch time"))
        if self.epochs != job.epochs:
            problems.append(Problem(_WHERE, "epochs", self.epochs,
                                    f"must be the transformer job's epochs ({job.epochs:g})"))
        if self.tokens_per_second is not None:
            _number(problems, "tokens_per_second", self.tokens_per_second, positive=True)
            if self.reference_gpu is None:
                problems.append(Problem(_WHERE, "reference_gpu", None,
                                        "a measured tokens per second needs the GPU type it "
                                        "was measured on"))

    @classmethod
    def for_transformer(cls, job: TransformerJob, *, checkpoint_gb: float | None = None,
                        checkpoint_every_epochs: CheckpointEvery = TRANSFORMER_CHECKPOINT_EVERY,
                        **fields: Any) -> Workload:
        """A transformer job's workload: E from ``job``; f the user's ``checkpoint_gb`` or, when
        ``None``, the job's own (:func:`job_checkpoint_gb`); k Daly's interval unless given
        (:data:`TRANSFORMER_CHECKPOINT_EVERY`); ``fields`` any other field
        (``tokens_per_second``, ``reference_gpu``, ``restart_hours``, ...).

        Raises:
            WorkloadError: as the constructor.
        """
        return cls(epochs=job.epochs, transformer=job,
                   checkpoint_gb=job_checkpoint_gb(job, checkpoint_gb),
                   checkpoint_every_epochs=checkpoint_every_epochs, **fields)

    def describe(self, reference_gpu: str) -> str:
        """The job in one line, with g_ref's name (``reference_gpu``, resolved against a
        catalog): ``90 epochs of 960 s on 1 x g4dn.xlarge``, or a transformer job's
        :meth:`~deepvm_core.workload.transformer.TransformerJob.describe` and where its time
        comes from."""
        if self.transformer is None:
            return (f"{self.epochs:g} epochs of {self.reference_epoch_seconds:g} s on "
                    f"{self.reference_nodes} x {reference_gpu}")
        if self.tokens_per_second is not None:
            return (f"{self.transformer.describe()}; {self.tokens_per_second:,.0f} tokens/s "
                    f"measured on {self.reference_nodes} x {reference_gpu}")
        return (f"{self.transformer.describe()}; time estimated from FLOPs per token at "
                "published MFU")


def job_checkpoint_gb(transformer: TransformerJob | None, given: float | None) -> float:
    """f, GB, of a job: ``given`` when the user gave one, else a transformer job's own
    checkpoint (trainable weights and optimizer states,
    :func:`~deepvm_core.workload.memory.checkpoint_gb`), else the scenario's default
    (:data:`~deepvm_core.model.DEFAULT_CHECKPOINT_GB`). The CLI and the dashboard size f by it,
    for the workload and the scenario's memory nodes alike."""
    if given is not None:
        return float(given)
    if transformer is not None:
        return transformer_checkpoint_gb(transformer)
    return float(DEFAULT_CHECKPOINT_GB)


def _unknown_name(field_name: str, name: str, known: list[str], kind: str) -> Problem:
    close = difflib.get_close_matches(name, known, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return Problem(_WHERE, field_name, name, f"no {kind} of that name in the catalog{hint}")


def check_workload(workload: Workload, catalog: Catalog) -> GpuType | None:
    """Check ``workload`` against ``catalog`` and return its reference GPU type g_ref, or
    ``None`` for the yardstick (no reference type named: one A10G, in no catalog).

    Every problem is collected: a reference type that is not a GPU type of the catalog, and
    MTBI overrides for unknown GPU types (both with close names suggested).

    Raises:
        WorkloadError: listing every problem.
    """
    problems: list[Problem] = []
    gpu_names = [g.name for g in catalog.gpu_types]
    reference: GpuType | None = None
    if workload.reference_gpu is not None:
        for g in catalog.gpu_types:
            if g.name == workload.reference_gpu:
                reference = g
        if reference is None:
            cpu_names = {c.name for c in catalog.cpu_types}
            if workload.reference_gpu in cpu_names:
                problems.append(Problem(_WHERE, "reference_gpu", workload.reference_gpu,
                                        "is a CPU type; the reference must be a GPU type"))
            else:
                problems.append(_unknown_name("reference_gpu", workload.reference_gpu,
                                              gpu_names, "GPU type"))
    for name in workload.mtbi_hours_by_gpu:
        if name not in gpu_names:
            problems.append(_unknown_name("mtbi_hours_by_gpu", name, gpu_names, "GPU type"))
    if problems:
        raise WorkloadError(problems)
    return reference


def example_workload(**changes: Any) -> Workload:
    """The example job (:data:`EXAMPLE_EPOCHS` epochs of :data:`EXAMPLE_EPOCH_SECONDS` s on one
    A10G, the yardstick), with ``changes`` to any :class:`Workload` field."""
    fields: dict[str, Any] = {"epochs": EXAMPLE_EPOCHS,
                              "reference_epoch_seconds": EXAMPLE_EPOCH_SECONDS}
    fields.update(changes)
    return Workload(**fields)
