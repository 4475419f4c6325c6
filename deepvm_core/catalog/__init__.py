"""Catalogs: instance types, quotas and the network-saturation table, validated.

* :mod:`deepvm_core.catalog.types`: the row types (each checks itself when built, by the
  rules of :mod:`deepvm_core.catalog.rules`) and :mod:`deepvm_core.catalog.catalog`: the
  catalog that holds them, re-exported here;
* :mod:`deepvm_core.catalog.validation`: raw JSON (our format or the artifact's) -> a
  validated :class:`Catalog`, every problem collected with its row, field and value;
* :mod:`deepvm_core.catalog.schema`: our file format (``data/README.md``);
* :mod:`deepvm_core.catalog.artifact`: the research artifact's format (``model.md``).

Files are read and written by :mod:`deepvm_core.catalog.store`.
"""

from deepvm_core.catalog.catalog import Catalog
from deepvm_core.catalog.rules import MAX_CPU_TYPES, MAX_GPU_TYPES
from deepvm_core.catalog.types import (
    DEFAULT_SATURATION,
    CpuType,
    GpuType,
    InstanceType,
    Quota,
    SaturationStep,
    ScalingParams,
)

__all__ = [
    "DEFAULT_SATURATION",
    "MAX_CPU_TYPES",
    "MAX_GPU_TYPES",
    "Catalog",
    "CpuType",
    "GpuType",
    "InstanceType",
    "Quota",
    "SaturationStep",
    "ScalingParams",
]
