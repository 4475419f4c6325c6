"""The catalog: its rows (:mod:`deepvm_core.catalog.types`) as one validated, immutable object
under the rules that span rows (:func:`catalog_problems`), its canonical JSON form
(:func:`catalog_to_dict`, ``schema_version`` :data:`~deepvm_core.catalog.schema.SCHEMA_VERSION`)
and the SHA-256 that identifies its content."""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from deepvm_core.catalog.rules import row_count_problem
from deepvm_core.catalog.schema import (
    SCHEMA_VERSION,
    instance_row,
    quota_rows,
    saturation_rows,
)
from deepvm_core.catalog.types import (
    DEFAULT_SATURATION,
    CpuType,
    GpuType,
    Quota,
    SaturationStep,
)
from deepvm_core.errors import CatalogError, InstanceNotFoundError, Problem


def catalog_problems(
    gpu_types: tuple[GpuType, ...],
    cpu_types: tuple[CpuType, ...],
    quotas: tuple[Quota, ...],
    saturation: tuple[SaturationStep, ...],
) -> list[Problem]:
    """The rules that span rows: at most :data:`~deepvm_core.catalog.rules.MAX_GPU_TYPES` GPU
    and :data:`~deepvm_core.catalog.rules.MAX_CPU_TYPES` CPU types, unique names across them,
    one quota per family, a non-empty saturation table with strictly increasing bandwidths."""
    problems: list[Problem] = [
        p for p in (row_count_problem("gpu_types", len(gpu_types)),
                    row_count_problem("cpu_types", len(cpu_types))) if p is not None]
    names: dict[str, str] = {}
    for kind, items in (("gpu_types", gpu_types), ("cpu_types", cpu_types)):
        for t in items:
            if t.name in names:
                problems.append(Problem(f"{kind} ({t.name})", "name", t.name,
                                        f"duplicate name (also in {names[t.name]})"))
            else:
                names[t.name] = kind
    families: set[str] = set()
    for q in quotas:
        if q.family in families:
            problems.append(Problem(f"quotas ({q.family})", "family", q.family,
                                    "duplicate family"))
        families.add(q.family)
    if not saturation:
        problems.append(Problem("(catalog)", "network_saturation", [],
                                "must be a non-empty list of {bandwidth_gbps, max_gpu_vms}"))
    for i in range(1, len(saturation)):
        previous, bw = saturation[i - 1].bandwidth_gbps, saturation[i].bandwidth_gbps
        if bw <= previous:
            problems.append(Problem(
                f"network_saturation[{i}]", "bandwidth_gbps", bw,
                f"bandwidths must increase strictly (previous entry is {previous:g})"))
    return problems


@dataclass(frozen=True)
class Catalog:
    """A validated catalog. Build it with :func:`~deepvm_core.catalog.validation.parse_catalog`
    or :func:`~deepvm_core.catalog.store.load_catalog`; built directly, it checks
    :func:`catalog_problems`.

    Attributes:
        name: short name (``aws-us-east-1-2023-10``).
        provider: ``aws`` or ``simulated``.
        region: the provider's region, or ``-``.
        prices_date: ISO date (or timestamp) the prices were taken.
        source: where the numbers come from, free text.
        gpu_types: GPU VM types.
        cpu_types: CPU VM types (memory nodes).
        quotas: vCPU quotas per family; a family not listed is unlimited.
        saturation: the network-saturation table, bandwidth ascending.
        warnings: soft problems found while loading (the catalog is still usable).
    """

    name: str
    provider: str
    region: str
    prices_date: str
    source: str
    gpu_types: tuple[GpuType, ...]
    cpu_types: tuple[CpuType, ...]
    quotas: tuple[Quota, ...] = ()
    saturation: tuple[SaturationStep, ...] = DEFAULT_SATURATION
    warnings: tuple[Problem, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        problems = catalog_problems(self.gpu_types, self.cpu_types, self.quotas,
                                    self.saturation)
        if problems:
            raise CatalogError(problems, f"catalog {self.name!r}")

    def quota(self, family: str) -> Quota | None:
        """The quota of ``family``, or ``None`` when the family is unlimited."""
        return next((q for q in self.quotas if q.family == family), None)

    @property
    def solvable_gpu_types(self) -> tuple[GpuType, ...]:
        """GPU types with an eFLOPS score: the ones the solvers consider."""
        return tuple(g for g in self.gpu_types if g.solvable)

    def instance(self, name: str) -> GpuType | CpuType:
        """The instance type called ``name``.

        Raises:
            InstanceNotFoundError: no such type (close matches suggested).
        """
        types: tuple[GpuType | CpuType, ...] = (*self.gpu_types, *self.cpu_types)
        for t in types:
            if t.name == name:
                return t
        names = [t.name for t in types]
        raise InstanceNotFoundError(name, self.name,
                                    tuple(difflib.get_close_matches(name, names, n=3)))

    @functools.cached_property
    def sha256(self) -> str:
        """SHA-256 of the catalog's canonical JSON (our format): identifies its exact content.

        Computed once per object (the catalog is immutable)."""
        return catalog_sha256(self)


def catalog_to_dict(catalog: Catalog) -> dict[str, Any]:
    """Our JSON format (``schema_version`` :data:`SCHEMA_VERSION`) of ``catalog``; warnings are
    not stored."""
    return {
        "schema_version": SCHEMA_VERSION,
        "name": catalog.name,
        "provider": catalog.provider,
        "region": catalog.region,
        "prices_date": catalog.prices_date,
        "source": catalog.source,
        "gpu_types": [instance_row(g) for g in catalog.gpu_types],
        "cpu_types": [instance_row(w) for w in catalog.cpu_types],
        "quotas": quota_rows(catalog.quotas),
        "network_saturation": saturation_rows(catalog.saturation),
    }


def catalog_sha256(catalog: Catalog) -> str:
    """SHA-256 (hex) of the canonical JSON of ``catalog`` (sorted keys, no spaces)."""
    text = json.dumps(catalog_to_dict(catalog), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
