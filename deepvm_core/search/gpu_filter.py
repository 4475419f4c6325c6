"""A scenario's GPU filter (:class:`~deepvm_core.catalog.gpu_filter.GpuFilter`) applied to a
catalog's GPU types: which types it admits.

What a type has (its GPU model, GPUs per VM and GB per GPU) is :func:`gpu_identity`: the
catalog row's own fields, else their derivation from the instance type's name
(:func:`deepvm_core.workload.gpu_hardware.gpu_hardware`). The candidate domain
(:func:`deepvm_core.search.candidates.build_domain`) keeps the admitted types
(:func:`filter_gpu_types`); when it admits none, the explanation of the empty answer names the
binding criterion (:func:`deepvm_core.recommend.explain.filter_binding`, where every "which
constraint binds" lives).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.catalog.gpu_filter import GpuFilter, Identity, resolve_accelerators
from deepvm_core.hardware.accelerators import bundled_accelerators
from deepvm_core.workload.gpu_hardware import gpu_hardware

#: A GPU type's ``(model, GPUs per VM, GB per GPU)``, each ``None`` when unknown.


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
    identities = [(g, gpu_identity(g)) for g in gpus]  # what each type has, then the test
    return tuple(g for g, identity in identities if gpu_filter.admits(*identity))


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


def resolve_gpu_models(names: Iterable[str], catalog: Catalog | None = None) -> tuple[str, ...]:
    """The GPU models a user asks for (the CLI's ``--gpus``, the dashboard's ``gpus``), spelled
    as the known models do (:func:`known_accelerators` of ``catalog``), in order, each once.

    Raises:
        InputError: a name no known model has (field ``gpus``); the message suggests the
            closest and lists the catalog's models (:func:`catalog_models`), or without a
            catalog every known one.
    """
    return resolve_accelerators(names, known_accelerators(catalog),
                                catalog_models(catalog) if catalog is not None else ())
