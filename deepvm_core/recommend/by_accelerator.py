"""The best cluster of each accelerator model: where A100, H100, L40S... clusters stand against
the winner.

The top-k of a recommendation can be k variants of one instance type (57 x p3.2xlarge with three
memory-node types). This view answers the other question a researcher asks of a catalog with
today's GPUs: for each accelerator model (``data/accelerators.csv``: T4, A10G, L4, L40S, V100,
A100, H100, ...), what is the best cluster of that model within PW, and how does it rank?

**Rule.** A GPU type belongs to the accelerator model of its AWS instance family
(:func:`~deepvm_core.hardware.accelerators.accelerator_of_instance`: ``p4d.24xlarge`` -> A100).
For each model with a GPU type in the catalog that the scenario's GPU filter admits (only
those types count):

* its *best* configuration is the first, in the recommendation's own order (stage 4 of
  ``model.md``: the chosen objective, then lower price, fewer VMs, names), among the feasible
  configurations priced at most PW whose GPU type is of that model; the models that have one
  are ranked by that same order (rank 1 is the model of the DeepVM winner);
* a model without one says why (:attr:`AcceleratorBest.note`): its types have no eFLOPS (left
  out of the search, e.g. Trainium), or nothing of it fits PW (with the cheapest feasible
  cluster beyond PW), or nothing of it is feasible at any price (quotas, node cap, memory).

A catalog none of whose GPU types has an accelerator model (the simulated catalog's ``A``,
``B``, ...) has no such view: :func:`best_by_accelerator` returns ``()`` and the export leaves the
``by_accelerator`` key out.

The view comes from the exact enumeration's candidate table whichever solver ranked the top-k
(both give the same ranking). It is a view, not a recommendation: ``deepvm recommend --replay``
does not compare it, and the export's ``catalog.instance_types`` holds only the rows of the
configurations it replays; each row here carries its own ``eflops_source`` and
``scaling_source``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from deepvm_core.arrays import IntArray
from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.hardware.accelerators import (
    Accelerator,
    accelerator_of_instance,
    bundled_accelerators,
)
from deepvm_core.model import Configuration, Scenario
from deepvm_core.search.solvers.enumeration import Ranking
from deepvm_core.search.tables import CandidateDomain, CandidateTable


@dataclass(frozen=True)
class AcceleratorBest:
    """The best cluster of one accelerator model within PW.

    Attributes:
        accelerator: the model's name in ``data/accelerators.csv`` (``A100``).
        gpu_types: the catalog's GPU types of that model, by name.
        rank: 1-based position of :attr:`configuration` among the models' best clusters, or
            ``None`` without one.
        configuration: the best feasible configuration of the model priced at most PW, or
            ``None``.
        cheapest: without :attr:`configuration`, the cheapest feasible configuration of the
            model at any price (``None`` when there is none, or with a configuration).
        eflops_source, scaling_source: the catalog's ``eflops_source`` and ``scaling_source``
            of the GPU type of :attr:`configuration` (else of :attr:`cheapest`): ``measured``,
            ``estimated: ...``, ``prior: ...`` or ``edited``; ``None`` with neither.
        note: why there is no configuration ("" when there is one).
    """

    accelerator: str
    gpu_types: tuple[str, ...]
    rank: int | None
    configuration: Configuration | None
    cheapest: Configuration | None
    eflops_source: str | None
    scaling_source: str | None
    note: str


def catalog_accelerators(catalog: Catalog) -> dict[str, tuple[GpuType, ...]]:
    """The catalog's GPU types by accelerator model, models in the order of
    ``data/accelerators.csv`` (roughly by generation); types without a model are left out."""
    found: dict[str, list[GpuType]] = {}
    for g in catalog.gpu_types:
        acc = accelerator_of_instance(g.name)
        if acc is not None:
            found.setdefault(acc.name, []).append(g)
    return {name: tuple(found[name]) for name in bundled_accelerators() if name in found}


def _group_of_table_gpus(table: CandidateTable, names: list[str]) -> IntArray:
    """For each GPU type of ``table``, the index of its model in ``names`` (-1 for none)."""
    index = {n: i for i, n in enumerate(names)}
    out = []
    for g in table.gpus:
        acc = accelerator_of_instance(g.name)
        out.append(index.get(acc.name, -1) if acc is not None else -1)
    return np.asarray(out, dtype=np.int64)


def _best_per_group(ranking: Ranking, names: list[str]) -> list[int]:
    """Indices into the ranking's table of each model's best configuration, in the ranking
    order.

    Only a configuration whose objective equals its model's largest can be the model's best,
    so only those are ranked (stage 4); the first of each model in that order is its best."""
    table, objective = ranking.table, ranking.objective
    if len(table) == 0:
        return []
    group = _group_of_table_gpus(table, names)[table.gpu]
    values = table.objective_values(objective)
    valid = group >= 0
    top = np.full(len(names), -np.inf)
    np.maximum.at(top, group[valid], values[valid])
    contenders = np.flatnonzero(valid & (values >= top[np.maximum(group, 0)]))
    order = table.rank_order(objective, indices=contenders)
    _, first = np.unique(group[order], return_index=True)
    return [int(order[i]) for i in np.sort(first)]


def _cheapest_per_group(table: CandidateTable, names: list[str]) -> dict[int, int]:
    """Model index -> index into ``table`` of its cheapest configuration (then fewest VMs)."""
    if len(table) == 0:
        return {}
    group = _group_of_table_gpus(table, names)[table.gpu]
    order = np.lexsort((table.name_rank, table.total_vms, table.price_usd_per_hour))
    order = order[group[order] >= 0]
    ids, first = np.unique(group[order], return_index=True)
    return {int(g): int(order[i]) for g, i in zip(ids, first, strict=True)}


def _why_infeasible(catalog: Catalog, scenario: Scenario, domain: CandidateDomain,
                    acc: Accelerator, types: tuple[GpuType, ...]) -> str:
    """Why no configuration of ``types`` is feasible at any price (one sentence), from the
    scenario's limits as its domain read them."""
    solvable = [g for g in types if g.eflops is not None]
    if not solvable:
        return f"left out of the search, {acc.note or 'no eFLOPS measured or estimated'}"
    basis = domain.speed_basis
    if basis is not None and not any(basis.admits(g.name) for g in solvable):
        verdict = next((v for v in basis.memory if v.instance_type == solvable[-1].name), None)
        return ("the job does not fit: " + verdict.reason if verdict is not None
                else "the job does not fit on its GPUs")
    spot = dict(zip((g.name for g in domain.gpus), domain.limits.spot.tolist(), strict=True))
    solvable = [g for g in solvable if g.name in spot]
    if all(spot[g.name] < 1 for g in solvable):
        quota = catalog.quota(solvable[0].family)
        if scenario.use_quotas and quota is not None:
            return (f"not feasible at any price: the spot vCPU quota of family "
                    f"{solvable[0].family} ({quota.spot_vcpus}) is below the "
                    f"{min(g.vcpus for g in solvable)} vCPUs of its smallest type")
        return "not feasible at any price: the node cap allows no spot GPU VM"
    return ("not feasible at any price: no memory node holds the checkpoint buffer, or the "
            "on-demand quota allows no anchor or memory node")


def best_by_accelerator(catalog: Catalog, scenario: Scenario, ranking: Ranking,
                        every_price: CandidateTable) -> tuple[AcceleratorBest, ...]:
    """The best cluster of each accelerator model of ``catalog`` within PW (module docstring):
    the ranked models first, then the others in the order of ``data/accelerators.csv``.

    Args:
        ranking: the candidate table priced at most the scenario's PW, ranked by the
            scenario's objective: the recommendation's own.
        every_price: a table that holds the cheapest configuration of every GPU type at any
            price, from the same domain (:func:`deepvm_core.recommend.explain.any_price_table`).
    """
    allowed = set(ranking.table.domain.limits.gpu_filter_admits)  # read once by the domain
    models = {name: admitted for name, types in catalog_accelerators(catalog).items()
              if (admitted := tuple(g for g in types if g.name in allowed))}
    if not models:
        return ()
    names = list(models)
    table = ranking.table
    out: list[AcceleratorBest] = []
    gpu_group = _group_of_table_gpus(table, names)
    for index in _best_per_group(ranking, names):
        config = table.configuration(index)
        name = names[int(gpu_group[table.gpu[index]])]
        out.append(_row(catalog, name, models[name], len(out) + 1, config, None, ""))
    rest = [n for n in names if n not in {r.accelerator for r in out}]
    cheapest = _cheapest_per_group(every_price, names) if rest else {}
    for name in rest:
        found = cheapest.get(names.index(name))
        if found is None:
            why = _why_infeasible(catalog, scenario, table.domain, bundled_accelerators()[name],
                                  models[name])
            out.append(_row(catalog, name, models[name], None, None, None, why))
            continue
        config = every_price.configuration(found)
        out.append(_row(catalog, name, models[name], None, None, config,
                        f"none within PW {scenario.pw_usd_per_hour:g} USD/h; the cheapest "
                        f"feasible is {config.describe()}"))
    return tuple(out)


def _row(catalog: Catalog, name: str, types: tuple[GpuType, ...], rank: int | None,
         config: Configuration | None, cheapest: Configuration | None,
         note: str) -> AcceleratorBest:
    shown = config if config is not None else cheapest
    gpu = None if shown is None else catalog.instance(shown.gpu)
    return AcceleratorBest(
        accelerator=name, gpu_types=tuple(g.name for g in types), rank=rank,
        configuration=config, cheapest=cheapest,
        eflops_source=gpu.eflops_source if isinstance(gpu, GpuType) else None,
        scaling_source=gpu.scaling_source if isinstance(gpu, GpuType) else None, note=note)
