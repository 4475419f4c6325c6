"""Small factories for catalogs in tests: fill defaults, override what a test cares about."""

from __future__ import annotations

from typing import Any

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.validation import parse_catalog


def gpu_row(name: str = "g1", **over: Any) -> dict[str, Any]:
    row = {"name": name, "family": "G", "on_demand_usd_per_hour": 1.0, "spot_usd_per_hour": 0.3,
           "vcpus": 4, "memory_gib": 16.0, "network_gbps": 10.0, "eflops": 100.0,
           "scaling": {"a": 0.1, "b": 15.0, "c": 10.0}}
    row.update(over)
    return row


def cpu_row(name: str = "c1", **over: Any) -> dict[str, Any]:
    row = {"name": name, "family": "C", "on_demand_usd_per_hour": 0.2, "spot_usd_per_hour": 0.1,
           "vcpus": 4, "memory_gib": 8.0, "network_gbps": 10.0}
    row.update(over)
    return row


def catalog_dict(gpus: list[dict] | None = None, cpus: list[dict] | None = None,
                 quotas: list[dict] | None = None, saturation: list[dict] | None = None,
                 **meta: Any) -> dict[str, Any]:
    data = {
        "schema_version": 1, "name": "test", "provider": "simulated", "region": "-",
        "prices_date": "2026-01-01", "source": "tests",
        "gpu_types": [gpu_row()] if gpus is None else gpus,
        "cpu_types": [cpu_row()] if cpus is None else cpus,
        "quotas": quotas or [],
        "network_saturation": saturation or [
            {"bandwidth_gbps": bw, "max_gpu_vms": n}
            for bw, n in [(0.3, 2), (1.7, 12), (5, 16), (10, 20), (12.5, 24), (15, 24), (25, 28),
                          (30, 32)]],
    }
    data.update(meta)
    return data


def make_catalog(**kwargs: Any) -> Catalog:
    return parse_catalog(catalog_dict(**kwargs))
