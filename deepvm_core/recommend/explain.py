"""Why nothing is feasible: :class:`Explanation`, the binding constraint and the cheapest
feasible hourly price, and the notes a catalog earns (types left out, K taken as 1). When the
scenario's GPU filter admits no type, :func:`filter_binding` says which criterion binds.

An explanation beyond PW reads the cheapest configuration of each architecture and GPU type at
any price from the scenario's own candidate domain
(:meth:`~deepvm_core.search.tables.CandidateDomain.any_price`): no second domain is built, except
the scenario without quotas when the quotas are what binds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Final

import numpy as np

from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.catalog.gpu_filter import CRITERIA, GpuFilter, Identity
from deepvm_core.model import Arch, Configuration, Scenario
from deepvm_core.search.candidates import build_domain
from deepvm_core.search.gpu_filter import gpu_identity
from deepvm_core.search.pairing import candidate_table
from deepvm_core.search.tables import CandidateDomain, CandidateTable
from deepvm_core.units import GB_PER_GIB
from deepvm_core.workload.speed import SpeedBasis

__all__ = ["GPU_FILTER_BINDING", "Explanation", "any_price_table", "catalog_notes",
           "explain_infeasible", "explanations", "filter_binding"]

#: The ``binding`` name of an explanation whose cause is the GPU filter.
GPU_FILTER_BINDING: Final = "gpu_filter"
#: Most types an explanation names.
_NAMED: Final = 6


@dataclass(frozen=True)
class Explanation:
    """Why nothing (or no configuration of one architecture) is feasible.

    Attributes:
        summary: one or two sentences for the user.
        binding: the binding constraints, from ``budget``, ``memory``, ``quota``,
            ``node_cap``, ``no_gpu_types``, ``no_cpu_types``, ``needs_eflops``,
            ``gpu_filter`` (the scenario's GPU filter admits no type), ``memory_fit`` (the job
            fits on no GPU type); the job planner
            (:mod:`deepvm_core.pipeline.plan`) adds ``deadline``, ``job_budget`` and
            ``does_not_finish`` (no cluster is expected to finish the job).
        cheapest_feasible_usd_per_hour: the cheapest hourly price that would be feasible if PW
            were raised (``None`` when raising PW alone does not help).
        cheapest_configuration: that cheapest configuration.
    """

    summary: str
    binding: tuple[str, ...]
    cheapest_feasible_usd_per_hour: float | None = None
    cheapest_configuration: Configuration | None = None


#: The ``binding`` name of an explanation whose cause is the job's GPU memory: one replica fits
#: on no GPU type (a transformer job).
MEMORY_FIT_BINDING = "memory_fit"

def catalog_notes(catalog: Catalog) -> tuple[str, ...]:
    """Facts about ``catalog`` that change results: types left out, K taken as 1."""
    notes = []
    missing = [g.name for g in catalog.gpu_types if g.eflops is None]
    if missing:
        notes.append("left out of solving, needs eFLOPS: " + ", ".join(missing))
    no_fit = [g.name for g in catalog.solvable_gpu_types if g.scaling is None]
    if no_fit:
        notes.append("no scaling parameters, K = 1 assumed for: " + ", ".join(no_fit))
    return tuple(notes)


def _fmt_usd(x: float) -> str:
    return f"{x:.4f} USD/h"


def _structural_reasons(catalog: Catalog, scenario: Scenario, domain: CandidateDomain,
                        architecture: str) -> list[tuple[str, str]]:
    """Why ``architecture`` has no configuration at any price: (constraint, sentence) pairs,
    from the scenario's limits as its domain read them."""
    reasons: list[tuple[str, str]] = []
    gpus, limits = domain.gpus, domain.limits
    if not catalog.gpu_types:
        return [("no_gpu_types", "the catalog has no GPU VM types")]
    if not catalog.solvable_gpu_types:
        return [("needs_eflops", "every GPU type needs eFLOPS ("
                 + ", ".join(g.name for g in catalog.gpu_types) + ")")]
    filtered = filter_binding(catalog, scenario.gpu_filter)
    if filtered is not None:  # the domain's GPU types are the ones the filter admits
        return [(GPU_FILTER_BINDING, filtered)]
    if not gpus:  # the job fits on no type with eFLOPS (a transformer job's GPU memory)
        basis = domain.speed_basis
        why = None if basis is None else basis.no_fit_reason()
        return [(MEMORY_FIT_BINDING, why or "the job fits on none of the GPU types with eFLOPS ("
                 + ", ".join(g.name for g in catalog.solvable_gpu_types) + ")")]
    if architecture == "tiering":
        if not catalog.cpu_types:
            return [("no_cpu_types", "the catalog has no CPU VM types to serve as memory nodes")]
        need = limits.buffer_gb
        biggest = max(catalog.cpu_types, key=lambda w: w.memory_gib or 0.0)
        biggest_gb = (biggest.memory_gib or 0.0) * GB_PER_GIB
        if biggest_gb < need:
            reasons.append(("memory", (
                f"no CPU VM holds the checkpoint buffer: f x s = {scenario.checkpoint_gb:g} GB x "
                f"{scenario.buffer_checkpoints:g} = {need:g} GB, but the largest, {biggest.name}, "
                f"has {biggest.memory_gib:g} GiB = {biggest_gb:.4g} GB"
            )))
    spot_ok = [i for i in range(len(gpus)) if limits.spot[i] >= 1]
    if not spot_ok:
        if scenario.max_nodes < 1:
            reasons.append(("node_cap", "the node cap allows no spot GPU VM"))
        else:
            reasons.append(("quota", "the spot vCPU quotas allow no spot GPU VM: " + "; ".join(
                f"{g.name} needs {g.vcpus} vCPUs, family {g.family} allows "
                f"{_quota_text(catalog, g.family, 'spot')}" for g in gpus)))
    if architecture == "single_anchor":
        od_ok = [i for i in spot_ok if limits.on_demand[i] >= 1]
        if spot_ok and not od_ok:
            reasons.append(("quota", "the on-demand vCPU quotas allow no anchor: " + "; ".join(
                f"{gpus[i].name} needs {gpus[i].vcpus} vCPUs, family {gpus[i].family} allows "
                f"{_quota_text(catalog, gpus[i].family, 'on_demand')}" for i in spot_ok)))
    elif not reasons:
        reasons.append(("quota", "the on-demand vCPU quotas allow no memory node of a type "
                        "that holds the checkpoint buffer"))
    return reasons


# ----------------------------------------------------------------------------- GPU filter


def _describe(gpu: GpuType, identity: Identity) -> str:
    """``p4d.24xlarge (A100, 8 x 40 GB)``."""
    chip, count, memory = identity
    return (f"{gpu.name} ({chip or 'model unknown'}, {'?' if count is None else count} x "
            f"{'?' if memory is None else f'{memory:g}'} GB)")


def _named(items: Sequence[str]) -> str:
    more = len(items) - _NAMED
    return ", ".join(items[:_NAMED]) + (f" and {more} more" if more > 0 else "")


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
        why = "; ".join(gpu_filter.why_alone(c, catalog.name, identities) for c in alone)
    else:
        first = active[0]
        passing = [_describe(g, identities[g.name]) for g in gpus if first not in failed[g.name]]
        why = (f"each criterion alone leaves some, but {_together(gpu_filter, active)} "
               f"({_those(gpu_filter, first)}: {_named(passing)})")
    return f"{head}: {why}"


def _quota_text(catalog: Catalog, family: str, kind: str) -> str:
    q = catalog.quota(family)
    if q is None:
        return "unlimited"
    return f"{q.spot_vcpus if kind == 'spot' else q.on_demand_vcpus}"


def explain_infeasible(
    catalog: Catalog, scenario: Scenario, table: CandidateTable, architecture: Arch | None
) -> Explanation:
    """Explain why nothing of ``architecture`` (None: either) is affordable at the scenario's
    PW. ``table`` holds the cheapest configurations at any price (:func:`any_price_table` of
    the scenario's domain); when it holds a configuration of ``architecture`` the budget binds,
    else the reasons are structural (memory, quotas, node cap, missing types), and when the
    quotas bind, the cheapest cluster without them is named (the one other domain an
    explanation builds: the scenario without quotas)."""
    return explanations(catalog, scenario, table, (architecture,))[architecture]


def explanations(catalog: Catalog, scenario: Scenario, table: CandidateTable,
                 architectures: Iterable[Arch | None]) -> dict[Arch | None, Explanation]:
    """:func:`explain_infeasible` of each of ``architectures``; the scenario without quotas,
    when they bind, is built at most once for all of them."""
    relaxed: list[Configuration | None] = []

    def without_quotas() -> Configuration | None:
        """The cheapest cluster were the quotas lifted (any architecture), or ``None``."""
        if not relaxed:
            found = _cheapest_without_quotas(catalog, scenario, table.domain.speed_basis)
            relaxed.append(found.configuration(int(np.lexsort(
                (found.total_vms, found.price_usd_per_hour))[0])) if len(found) else None)
        return relaxed[0]

    return {a: _explain(catalog, scenario, table, a, without_quotas) for a in architectures}


def _explain(catalog: Catalog, scenario: Scenario, table: CandidateTable,
             architecture: Arch | None,
             without_quotas: Callable[[], Configuration | None]) -> Explanation:
    sel = np.arange(len(table)) if architecture is None else np.flatnonzero(
        table.architecture == architecture)
    label = "cluster" if architecture is None else f"{architecture.label} cluster"
    pw = scenario.pw_usd_per_hour
    if sel.size:
        index = int(sel[np.lexsort((table.total_vms[sel], table.price_usd_per_hour[sel]))[0]])
        config = table.configuration(index)
        return Explanation(
            summary=(f"PW {pw:g} USD/h is below the cheapest feasible {label}, "
                     f"{_fmt_usd(config.hourly_price_usd)} ({config.describe()})."),
            binding=("budget",),
            cheapest_feasible_usd_per_hour=config.hourly_price_usd,
            cheapest_configuration=config,
        )
    archs = list(Arch) if architecture is None else [architecture]
    pairs = [r for a in archs for r in _structural_reasons(catalog, scenario, table.domain,
                                                               a.key)]
    binding = tuple(dict.fromkeys(b for b, _ in pairs))
    sentences = list(dict.fromkeys(s for _, s in pairs))
    cheapest = without_quotas() if "quota" in binding and scenario.use_quotas else None
    if cheapest is not None:
        sentences.append(f"without quotas the cheapest cluster would be {cheapest.describe()}")
    return Explanation(
        summary=f"No {label} is feasible at any price: " + "; ".join(sentences) + ".",
        binding=binding,
        cheapest_feasible_usd_per_hour=None,
        cheapest_configuration=cheapest,
    )


def any_price_table(domain: CandidateDomain, table: CandidateTable) -> CandidateTable:
    """The cheapest configuration of each architecture and GPU type at any price, from the
    domain in hand (``table``, its configurations, when the domain has no budget)."""
    return table if domain.cheapest is None else candidate_table(domain.cheapest)


def _cheapest_without_quotas(catalog: Catalog, scenario: Scenario,
                             speed: SpeedBasis | None) -> CandidateTable:
    """A table that holds the cheapest configuration of each architecture at any price when the
    quotas are lifted.

    Prices rise with n, and a feasible (v, w, n) stays feasible with fewer GPU VMs (fewer spot
    VMs, no more memory nodes), so the cheapest is at the smallest n (1 for Tiering, 2 for
    Single Anchor), where a node cap of 2 decides feasibility as the scenario's does: the domain
    is built under it, a few rows per GPU type whatever the cap.
    """
    small = replace(scenario, use_quotas=False, max_nodes=min(scenario.max_nodes, 2))
    return candidate_table(build_domain(catalog, small, speed=speed))
