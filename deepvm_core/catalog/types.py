"""The catalog's row types: instance types, quotas and the saturation table (the catalog that
holds them is :class:`deepvm_core.catalog.catalog.Catalog`).

Every type checks itself when it is built: a value that breaks a rule of
:data:`~deepvm_core.catalog.rules.RULES` (a negative price, a fractional vCPU count, a scaling
parameter out of range) raises one :class:`~deepvm_core.errors.CatalogError` that lists every
problem of the object, each naming its field and value. Loading a file
(:mod:`deepvm_core.catalog.validation`) checks the same rules on the raw JSON first, so that it
can report every problem of every row at once.

Units live in the field names: ``*_usd_per_hour`` (USD per hour), ``memory_gib`` (GiB, 2^30
bytes), ``network_gbps`` (Gbit/s), ``eflops`` (the artifact's relative deep-learning
throughput score).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from deepvm_core.catalog.rules import RULES, number_problem
from deepvm_core.errors import CatalogError, Problem

#: The default ``eflops_source`` and ``scaling_source``: a measured value (left out of files).
MEASURED = "measured"

#: What each ``interruption_bucket`` means: the AWS Spot Instance Advisor's share of spot
#: capacity reclaimed in the trailing month, by bucket index.
INTERRUPTION_BUCKET_LABELS: tuple[str, ...] = ("<5%", "5-10%", "10-15%", "15-20%", ">20%")


class _Checks:
    """Collects the problems of one object being built; raises them all at once."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.problems: list[Problem] = []

    def add(self, field_name: str, value: object, message: str) -> None:
        self.problems.append(Problem(self.where, field_name, value, message))

    def number(self, field_name: str, value: object, rule_name: str | None = None, *,
               optional: bool = False, integer_type: bool = False) -> None:
        if optional and value is None:
            return
        message = number_problem(value, RULES[rule_name or field_name],
                                 integer_type=integer_type)
        if message is not None:
            self.add(field_name, value, message)

    def text(self, field_name: str, value: object) -> None:
        if not isinstance(value, str) or not value.strip():
            self.add(field_name, value, "must be a non-empty text")

    def raise_any(self, what: str) -> None:
        if self.problems:
            raise CatalogError(self.problems, what)


@dataclass(frozen=True)
class ScalingParams:
    """Logistic speedup fit ``S(n) = c / (1 + exp(-a (n - b)))`` of one GPU type.

    Attributes:
        a: steepness, per node (0 < a <= 10).
        b: inflection point, in nodes (0 <= b <= 100000).
        c: asymptotic speedup (0 < c <= 1000000).
    """

    a: float
    b: float
    c: float

    def __post_init__(self) -> None:
        checks = _Checks("scaling")
        for key in ("a", "b", "c"):
            checks.number(f"scaling.{key}", getattr(self, key))
        checks.raise_any("ScalingParams")


@dataclass(frozen=True, kw_only=True)
class InstanceType:
    """A VM type of a cloud provider.

    Attributes:
        name: the provider's name, unique in a catalog (``g4dn.xlarge``).
        family: the quota family (AWS: ``G`` for ``g4dn.xlarge``).
        on_demand_usd_per_hour: on-demand price, USD per hour (> 0).
        spot_usd_per_hour: spot price, USD per hour (> 0); the aggregate of
            ``spot_by_zone_usd_per_hour`` when a fetch recorded per-zone prices.
        vcpus: virtual CPUs (>= 1), counted against quotas.
        memory_gib: RAM in GiB (> 0), or ``None`` where unknown (GPU types only; memory nodes
            need it).
        network_gbps: network bandwidth in Gbit/s (> 0).
        spot_by_zone_usd_per_hour: optional latest spot price per availability zone, USD per
            hour (each > 0).
    """

    name: str
    family: str
    on_demand_usd_per_hour: float
    spot_usd_per_hour: float
    vcpus: int
    memory_gib: float | None
    network_gbps: float
    spot_by_zone_usd_per_hour: Mapping[str, float] | None = None

    def __post_init__(self) -> None:
        name = self.name if isinstance(self.name, str) and self.name else type(self).__name__
        checks = _Checks(name)
        self._check(checks)
        checks.raise_any(f"{type(self).__name__} {self.name!r}")

    def _check(self, checks: _Checks) -> None:
        """Add this object's problems to ``checks`` (subclasses add theirs)."""
        checks.text("name", self.name)
        checks.text("family", self.family)
        checks.number("on_demand_usd_per_hour", self.on_demand_usd_per_hour)
        checks.number("spot_usd_per_hour", self.spot_usd_per_hour)
        checks.number("vcpus", self.vcpus, integer_type=True)
        checks.number("memory_gib", self.memory_gib, optional=True)
        checks.number("network_gbps", self.network_gbps)
        zones: object = self.spot_by_zone_usd_per_hour  # as given, whatever its type
        if zones is not None and not isinstance(zones, Mapping):
            checks.add("spot_by_zone_usd_per_hour", zones, "must be a mapping {zone: USD/hour}")
        elif zones:
            for zone, price in zones.items():
                checks.number(f"spot_by_zone_usd_per_hour.{zone}", price,
                              "spot_by_zone_usd_per_hour")


@dataclass(frozen=True, kw_only=True)
class GpuType(InstanceType):
    """A GPU VM type: trains.

    Attributes:
        eflops: measured deep-learning throughput (relative units, > 0), or ``None`` when not
            known yet ("needs eFLOPS": kept in the catalog, left out of solving).
        scaling: the logistic scaling fit, or ``None`` (then K(n) = 1).
        interruption_bucket: the AWS Spot Instance Advisor's interruption bucket of the type in
            the catalog's region, an index 0..4 into :data:`INTERRUPTION_BUCKET_LABELS`
            (0: under 5 % of spot capacity reclaimed in the trailing month, 4: over 20 %), or
            ``None`` when unknown (the job model then applies its default and says so).
        eflops_source: where ``eflops`` comes from: ``measured`` (default), ``estimated:
            <model>`` (:mod:`deepvm_core.hardware.eflops_estimate`) or ``edited``.
        scaling_source: where ``scaling`` comes from: ``measured`` (default) or ``prior: ...``
            (:mod:`deepvm_core.hardware.scaling_prior`).
    """

    eflops: float | None
    scaling: ScalingParams | None = None
    interruption_bucket: int | None = None
    eflops_source: str = MEASURED
    scaling_source: str = MEASURED

    def _check(self, checks: _Checks) -> None:
        super()._check(checks)
        checks.number("eflops", self.eflops, optional=True)
        checks.number("interruption_bucket", self.interruption_bucket, optional=True,
                      integer_type=True)
        for key in ("eflops_source", "scaling_source"):
            checks.text(key, getattr(self, key))
        scaling: object = self.scaling  # as given, whatever its type
        if scaling is not None and not isinstance(scaling, ScalingParams):
            checks.add("scaling", scaling, "must be ScalingParams or None")

    @property
    def solvable(self) -> bool:
        """True when the type has an eFLOPS score and can take part in a recommendation."""
        return self.eflops is not None


@dataclass(frozen=True, kw_only=True)
class CpuType(InstanceType):
    """A CPU VM type: a Tiering memory node that keeps checkpoints in RAM (``memory_gib`` is
    required)."""

    def _check(self, checks: _Checks) -> None:
        super()._check(checks)
        if self.memory_gib is None:
            checks.add("memory_gib", None, "is required for a CPU type (a memory node)")


@dataclass(frozen=True)
class Quota:
    """vCPU limits of one instance family (AWS style: on-demand and spot are separate).

    Attributes:
        family: the family the limits apply to.
        on_demand_vcpus: most vCPUs of on-demand VMs of this family (>= 0).
        spot_vcpus: most vCPUs of spot VMs of this family (>= 0).
    """

    family: str
    on_demand_vcpus: int
    spot_vcpus: int

    def __post_init__(self) -> None:
        checks = _Checks(f"quota {self.family}")
        checks.text("family", self.family)
        checks.number("on_demand_vcpus", self.on_demand_vcpus, integer_type=True)
        checks.number("spot_vcpus", self.spot_vcpus, integer_type=True)
        checks.raise_any(f"Quota {self.family!r}")


@dataclass(frozen=True)
class SaturationStep:
    """One entry of the network-saturation table (file keys ``bandwidth_gbps``,
    ``max_gpu_vms``).

    Attributes:
        bandwidth_gbps: the bandwidth ``min(BW(v), BW(w))`` this entry starts at, Gbit/s (> 0).
        serves_fewer_than: ``n_sat`` (>= 1): one memory node serves fewer than this many GPU
            VMs, so Tiering needs ``n / m < serves_fewer_than``.
    """

    bandwidth_gbps: float
    serves_fewer_than: int

    def __post_init__(self) -> None:
        checks = _Checks(f"saturation step {self.bandwidth_gbps!r} Gbps")
        checks.number("bandwidth_gbps", self.bandwidth_gbps)
        checks.number("serves_fewer_than", self.serves_fewer_than, "max_gpu_vms",
                      integer_type=True)
        checks.raise_any("SaturationStep")


#: The measured table of ``model.md`` (Gbit/s -> n_sat).
DEFAULT_SATURATION: tuple[SaturationStep, ...] = tuple(
    SaturationStep(bw, n)
    for bw, n in [(0.3, 2), (1.7, 12), (5, 16), (10, 20), (12.5, 24), (15, 24), (25, 28), (30, 32)]
)
