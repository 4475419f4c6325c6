"""Where a vCPU quota binds the configurations of a PW sweep (Simulate page; pure).

A quota *binds* a configuration when one more VM of a type it holds would pass its family's
vCPU quota while the node cap would still allow it: more budget alone does not buy a larger
cluster of that type there. Spot quotas count the spot GPU VMs; on-demand quotas the
on-demand GPU VM (Single Anchor) and the memory nodes (Tiering) of the family.
"""

from __future__ import annotations

import pandas as pd

from deepvm_core.catalog import Catalog
from deepvm_core.model import Scenario


def _binding(catalog: Catalog, scenario: Scenario, gpu: str, spot: int, gpu_od: int,
             cpu: str | None, memory_nodes: int) -> str:
    """The quota that binds one configuration, as text (``spot vCPUs of g4dn``), or ``""``."""
    if spot + gpu_od >= scenario.max_nodes:
        return ""  # the node cap binds first
    g = catalog.instance(gpu)
    quota = catalog.quota(g.family)
    if spot and quota is not None and (spot + 1) * g.vcpus > quota.spot_vcpus:
        return f"spot vCPUs of {g.family} ({quota.spot_vcpus:,})"
    on_demand: dict[str, tuple[int, int]] = {}  # family -> (vCPUs used, smallest VM's vCPUs)
    vms = [(g, gpu_od)] + ([(catalog.instance(cpu), memory_nodes)] if cpu else [])
    for vm, count in vms:
        if count:
            used, smallest = on_demand.get(vm.family, (0, vm.vcpus))
            on_demand[vm.family] = (used + count * vm.vcpus, min(smallest, vm.vcpus))
    for family, (used, smallest) in on_demand.items():
        quota = catalog.quota(family)
        if quota is not None and used + smallest > quota.on_demand_vcpus:
            return f"on-demand vCPUs of {family} ({quota.on_demand_vcpus:,})"
    return ""


def quota_binds(frame: pd.DataFrame, catalog: Catalog, scenario: Scenario) -> pd.Series:
    """Per row of ``result_frames.sweep_frame``: the quota that binds its configuration (text),
    or ``""`` (quotas off, nothing chosen, or no quota binds)."""
    if not scenario.use_quotas or frame.empty:
        return pd.Series("", index=frame.index, dtype=object)
    keys = frame[["gpu", "gpu_spot", "gpu_on_demand", "cpu", "cpu_on_demand"]].fillna(
        {"gpu": "", "cpu": ""}).itertuples(index=False, name=None)
    rows = list(keys)
    found = {row: _binding(catalog, scenario, row[0], int(row[1]), int(row[2]), row[3] or None,
                           int(row[4]))
             for row in set(rows) if row[0]}  # once per distinct configuration
    return pd.Series([found.get(row, "") for row in rows], index=frame.index, dtype=object)
