"""Why a spot pool's type took no part in a plan (issue 27, finding 7): ``deepvm plan --pool``
and the dashboard's pools evaluate the configurations of each pool's GPU type by the traces; a
type of which the plan has no configuration is said, with the reason, instead of being dropped
without a word.

The reasons, first that applies: the type has no eFLOPS (Trainium: no time of the job on it is
known), the GPU filter leaves it out, a transformer job does not fit its GPU memory, or no
cluster of it fits PW, the quotas and the node cap.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from deepvm_core.catalog import Catalog
from deepvm_core.job.result import JobPlanResult
from deepvm_core.text import usd_per_hour

__all__ = ["unused_pool_types"]


def _why(result: JobPlanResult, catalog: Catalog, name: str) -> str:
    gpu = next((g for g in catalog.gpu_types if g.name == name), None)
    if gpu is None:
        return f"{name} is not a GPU type of catalog {catalog.name}"
    if gpu.eflops is None:
        return (f"{name} has no eFLOPS in catalog {catalog.name}, so no time of the job on it "
                "is known (give its eFLOPS in the catalog to plan it)")
    admitted = result.candidates.domain.limits.gpu_filter_admits
    if admitted and name not in admitted:
        return f"the GPU filter ({result.scenario.gpu_filter.describe()}) leaves {name} out"
    assumed = next((a for a in result.assumptions.gpu_types if a.gpu == name), None)
    if (assumed is not None and assumed.memory_fit is not None
            and assumed.one_vm_epoch_seconds is None):  # a transformer job it cannot hold
        return f"the job does not fit {name}: {assumed.memory_fit}"
    pw = result.pw_usd_per_hour
    within = f"PW {usd_per_hour(pw)}, the quotas" if pw is not None else "the quotas"
    return f"no cluster of {name} fits {within} and the node cap"


def unused_pool_types(result: JobPlanResult, catalog: Catalog,
                      types: Sequence[str]) -> tuple[str, ...]:
    """One sentence per GPU type of ``types`` (the pools' types, each once, in order) of which
    ``result`` has no configuration: ``the pools of TYPE are not used: <why>``."""
    table = result.candidates
    planned = {table.gpus[i].name for i in np.unique(table.gpu)} if len(table) else set()
    return tuple(f"the pools of {name} are not used: {_why(result, catalog, name)}"
                 for name in dict.fromkeys(types) if name not in planned)
