"""A scenario's GPU filter (:class:`~deepvm_core.catalog.gpu_filter.GpuFilter`) applied to a
catalog's GPU types: which types it admits, and, when it admits none, which criterion binds.

What a type has (its GPU model, GPUs per VM and GB per GPU) is :func:`gpu_identity`: the
catalog row's own fields, else their derivation from the instance type's name
(:func:`deepvm_core.workload.gpu_hardware.gpu_hardware`). The candidate domain
(:func:`deepvm_core.search.candidates.build_domain`) keeps the admitted types
(:func:`filter_gpu_types`); an explanation of an empty answer names the binding criterion
(:func:`filter_binding`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.catalog.gpu_filter import CRITERIA, GpuFilter, or_list
from deepvm_core.hardware.accelerators import bundled_accelerators
from deepvm_core.workload.gpu_hardware import gpu_hardware

#: The ``binding`` name of an explanation whose cause is the GPU filter.
GPU_FILTER_BINDING: Final = "gpu_filter"
#: Most types an explanation names.
_NAMED: Final = 6

Identity = tuple[str | None, int | None, float | None]


def gpu_identity(gpu: GpuType) -> Identity:
    """``(model, GPUs per VM, GB per GPU)`` of a GPU type, each ``None`` when unknown: the
    row's own fields, else derived from its name (module docstring). A model the row names
    is kept as named, even when ``data/accelerators.csv`` lacks it."""
    hw = gpu_hardware(gpu)
    chip = gpu.accelerator if gpu.accelerator is not None else (
        hw.accelerator.name if hw.accelerator is not None else None)
    return chip, hw.gpus_per_vm, hw.memory_gb_per_gpu


def filter_gpu_types(gpus: Sequence[GpuType], gpu_filter: GpuFilter) -> tuple[GpuType, ...]:
    """The types of ``gpus`` that ``gpu_filter`` admits, in order (all of them when it is not
    active)."""
    if not gpu_filter.active:
        return tuple(gpus)
    return tuple(g for g in gpus if gpu_filter.admits(*gpu_identity(g)))


def known_accelerators(catalog: Catalog | None = None) -> tuple[str, ...]:
    """The GPU model names a filter may ask for: the rows of ``data/accelerators.csv``, then
    any other model a GPU row of ``catalog`` names."""
    names = list(bundled_accelerators())
    if catalog is not None:
        names += [g.accelerator for g in catalog.gpu_types
                  if g.accelerator is not None and g.accelerator not in names]
    return tuple(names)


def catalog_models(catalog: Catalog) -> tuple[str, ...]:
    """The GPU models of a catalog's types (:func:`gpu_identity`), in the catalog's order,
    each once; types without a known model are left out."""
    return tuple(dict.fromkeys(chip for g in catalog.gpu_types
                               if (chip := gpu_identity(g)[0]) is not None))


def _describe(gpu: GpuType, identity: Identity) -> str:
    """``p4d.24xlarge (A100, 8 x 40 GB)``."""
    chip, count, memory = identity
    return (f"{gpu.name} ({chip or 'model unknown'}, {'?' if count is None else count} x "
            f"{'?' if memory is None else f'{memory:g}'} GB)")


def _named(items: Sequence[str]) -> str:
    more = len(items) - _NAMED
    return ", ".join(items[:_NAMED]) + (f" and {more} more" if more > 0 else "")


def _alone(criterion: str, gpu_filter: GpuFilter, catalog: Catalog,
           identities: dict[str, Identity]) -> str:
    """Why ``criterion`` alone leaves no type: what the catalog has instead."""
    values = list(identities.values())
    text = gpu_filter.criterion_text(criterion)
    if criterion == "accelerators":
        models = list(dict.fromkeys(v[0] for v in values if v[0] is not None))
        has = f"its models: {', '.join(models)}" if models else (
            "none of its GPU types has a known model")
        return f"{catalog.name} has no {text} GPU type ({has})"
    if criterion == "min_gpu_memory_gb":
        sized = [(v[2], name) for name, v in identities.items() if v[2] is not None]
        if not sized:
            return "no GPU type has a known memory per GPU"
        most, name = max(sized)
        return f"none has {text} (the most: {most:g} GB, {name})"
    counts = sorted({v[1] for v in values if v[1] is not None})
    has = (f"its VMs have {or_list(str(c) for c in counts)}" if counts
           else "no GPU type has a known GPU count")
    return f"none has {text} ({has})"


def _together(gpu_filter: GpuFilter, active: list[str]) -> str:
    """``no A100 or H100 type has at least 80 GB per GPU and 8 GPUs per VM``."""
    rest = [gpu_filter.criterion_text(c) for c in active if c != "accelerators"]
    what = (f"{gpu_filter.criterion_text('accelerators')} type" if "accelerators" in active
            else "type")
    return f"no {what} has {' and '.join(rest)}"


def _those(gpu_filter: GpuFilter, criterion: str) -> str:
    """``the A100 or H100 types``, ``the types with at least 80 GB per GPU``."""
    if criterion == "accelerators":
        return f"the {gpu_filter.criterion_text(criterion)} types"
    return f"the types with {gpu_filter.criterion_text(criterion)}"


def filter_binding(catalog: Catalog, gpu_filter: GpuFilter) -> str | None:
    """When ``gpu_filter`` admits none of the catalog's GPU types that can be solved (they
    have eFLOPS): the sentence that says which criterion binds; ``None`` otherwise (it admits
    some, it is not active, or the catalog has no such types).

    A criterion that alone leaves nothing is named with what the catalog has instead
    (``aws-us-west-2-2025-h1 has no A100 GPU type (its models: T4, A10G, ...)``, ``none has at
    least 200 GB per GPU (the most: 141 GB, p5en.48xlarge)``); when each alone leaves some but
    not all of them together, the types the first one admits are named with their GPUs.
    """
    gpus = catalog.solvable_gpu_types
    if not gpu_filter.active or not gpus:
        return None
    identities = {g.name: gpu_identity(g) for g in gpus}
    failed = {name: gpu_filter.failed(*identity) for name, identity in identities.items()}
    if any(not f for f in failed.values()):
        return None
    head = f"the GPU filter ({gpu_filter.clause()}) leaves no GPU type"
    unsolved = [g.name for g in catalog.gpu_types if not g.solvable
                and gpu_filter.admits(*gpu_identity(g))]
    if unsolved:
        return (f"{head} that can be solved: it admits only {_named(unsolved)}, left out of "
                "solving (needs eFLOPS)")
    active = [c for c in CRITERIA if gpu_filter.is_set(c)]
    alone = [c for c in active if all(c in f for f in failed.values())]
    if alone:
        why = "; ".join(_alone(c, gpu_filter, catalog, identities) for c in alone)
    else:
        first = active[0]
        passing = [_describe(g, identities[g.name]) for g in gpus if first not in failed[g.name]]
        why = (f"each criterion alone leaves some, but {_together(gpu_filter, active)} "
               f"({_those(gpu_filter, first)}: {_named(passing)})")
    return f"{head}: {why}"
