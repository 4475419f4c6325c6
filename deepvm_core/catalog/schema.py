"""Our catalog file format (``data/README.md``): its versions and its rows as JSON-ready dicts
(the whole catalog and its hash: :mod:`deepvm_core.catalog.catalog`).

Version 2 added ``gpu_types[].interruption_bucket``; version 1 files still load (every bucket
``None``). Catalogs are always written in the current version.

Reading the format back is :func:`deepvm_core.catalog.validation.parse_catalog`; files are read
and written by :mod:`deepvm_core.catalog.store`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from deepvm_core.catalog.types import (
    MEASURED,
    GpuType,
    InstanceType,
    Quota,
    SaturationStep,
)

#: The schema version this program writes.
SCHEMA_VERSION = 2
#: The schema versions this program reads.
READABLE_SCHEMA_VERSIONS: tuple[int, ...] = (1, 2)
#: The largest catalog file read, bytes (``data/README.md``, "Limits"). A catalog at the row
#: limits (:data:`~deepvm_core.catalog.rules.MAX_GPU_TYPES` GPU and
#: :data:`~deepvm_core.catalog.rules.MAX_CPU_TYPES` CPU types, each with per-zone spot prices)
#: takes about 1.5 MB written with indentation.
MAX_CATALOG_BYTES = 8 * 2**20


def saturation_rows(steps: Iterable[SaturationStep]) -> list[dict[str, Any]]:
    """The ``network_saturation`` list of the file format (keys ``bandwidth_gbps``,
    ``max_gpu_vms``)."""
    return [{"bandwidth_gbps": s.bandwidth_gbps, "max_gpu_vms": s.serves_fewer_than}
            for s in steps]


def quota_rows(quotas: Iterable[Quota]) -> list[dict[str, Any]]:
    """The ``quotas`` list of the file format."""
    return [{"family": q.family, "on_demand_vcpus": q.on_demand_vcpus, "spot_vcpus": q.spot_vcpus}
            for q in quotas]


def instance_row(t: InstanceType) -> dict[str, Any]:
    """One ``gpu_types`` or ``cpu_types`` row of the file format."""
    row: dict[str, Any] = {
        "name": t.name,
        "family": t.family,
        "on_demand_usd_per_hour": t.on_demand_usd_per_hour,
        "spot_usd_per_hour": t.spot_usd_per_hour,
        "vcpus": t.vcpus,
        "memory_gib": t.memory_gib,
        "network_gbps": t.network_gbps,
    }
    if t.spot_by_zone_usd_per_hour:
        row["spot_by_zone_usd_per_hour"] = dict(sorted(t.spot_by_zone_usd_per_hour.items()))
    if isinstance(t, GpuType):
        row["eflops"] = t.eflops
        row["scaling"] = (
            None if t.scaling is None
            else {"a": t.scaling.a, "b": t.scaling.b, "c": t.scaling.c}
        )
        row["interruption_bucket"] = t.interruption_bucket
        for key in ("eflops_source", "scaling_source"):  # left out when measured
            if getattr(t, key) != MEASURED:
                row[key] = getattr(t, key)
    return row
