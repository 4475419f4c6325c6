"""A reproducible synthetic catalog of many GPU and CPU types, for benchmarks."""

from __future__ import annotations

import numpy as np

from deepvm_core.catalog import DEFAULT_SATURATION, Catalog
from deepvm_core.catalog.schema import SCHEMA_VERSION, saturation_rows
from deepvm_core.catalog.validation import parse_catalog


def synthetic_catalog(gpu_types: int = 100, cpu_types: int = 100, seed: int = 7) -> Catalog:
    """``gpu_types`` GPU and ``cpu_types`` CPU types with AWS-like prices (seeded)."""
    rng = np.random.default_rng(seed)
    gpus = []
    for i in range(gpu_types):
        od = float(rng.uniform(0.2, 4.0))
        gpus.append({
            "name": f"gpu{i:03d}", "family": str(rng.choice(["G", "P"])),
            "on_demand_usd_per_hour": round(od, 4),
            "spot_usd_per_hour": round(od * float(rng.uniform(0.25, 0.6)), 4),
            "vcpus": int(rng.choice([4, 8, 16])), "memory_gib": 16.0,
            "network_gbps": float(rng.choice([5, 10, 15, 25, 50, 100])),
            "eflops": round(float(rng.uniform(50, 1200)), 1),
            "scaling": {"a": round(float(rng.uniform(0.05, 0.25)), 4),
                        "b": round(float(rng.uniform(8, 25)), 3),
                        "c": round(float(rng.uniform(4, 16)), 3)},
        })
    cpus = [{
        "name": f"cpu{i:03d}", "family": str(rng.choice(["C", "M", "R", "T"])),
        "on_demand_usd_per_hour": round(float(rng.uniform(0.1, 0.6)), 4),
        "spot_usd_per_hour": round(float(rng.uniform(0.04, 0.1)), 4),
        "vcpus": 4, "memory_gib": float(rng.choice([4, 8, 16, 32, 64])),
        "network_gbps": float(rng.choice([1.7, 5, 10, 12.5, 25, 30])),
    } for i in range(cpu_types)]
    return parse_catalog({
        "schema_version": SCHEMA_VERSION, "name": f"synthetic-{gpu_types}x{cpu_types}",
        "provider": "simulated", "region": "-", "prices_date": "2026-01-01",
        "source": f"bench/synthetic.py, seed {seed}", "gpu_types": gpus, "cpu_types": cpus,
        "quotas": [], "network_saturation": saturation_rows(DEFAULT_SATURATION),
    })
