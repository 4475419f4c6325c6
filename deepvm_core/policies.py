"""Stage 4 and the baselines: the DeepVM ranking, DeepVM-NoScale, Cost-First, Performance-First.

:func:`recommend` is the one entry point the CLI and the dashboard call. It returns a
:class:`Recommendation` that always says why: the top-k, the best of each architecture, the
baselines, and, when nothing is feasible, an :class:`Explanation` naming the binding
constraint and the cheapest feasible hourly price.

Policies (``model.md``, "Baseline policies"):

* **DeepVM**: every feasible configuration of both architectures ranked by the chosen
  objective (stage 4).
* **DeepVM-NoScale**: the same ranking with K = 1 in the objective; its performance is still
  evaluated with the true K.
* **Cost-First**: Single Anchor only; per GPU type the largest affordable n; the type with the
  largest n wins (ties: lower hourly price, then name).
* **Performance-First**: Single Anchor only; GPU types by eFLOPS (ties: lower spot price, then
  name); the first with an affordable n >= 2, at its largest affordable n.

Cost-First and Performance-First are rules, not optimisations, so both solvers share them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from deepvm_core.catalog import Catalog
from deepvm_core.errors import InputError
from deepvm_core.model import (
    GB_PER_GIB,
    Configuration,
    Scenario,
    checkpoint_buffer_gb,
    max_on_demand_vms,
    max_spot_vms,
)
from deepvm_core.solvers.enumeration import (
    SA,
    TR,
    CandidateTable,
    build_candidates,
    largest_single_anchor,
    top_indices,
)

Solver = Literal["enumerate", "ilp"]
SOLVERS: tuple[Solver, ...] = ("enumerate", "ilp")
POLICIES = ("deepvm", "deepvm_noscale", "cost_first", "performance_first")
POLICY_LABELS = {
    "deepvm": "DeepVM",
    "deepvm_noscale": "DeepVM-NoScale",
    "cost_first": "Cost-First",
    "performance_first": "Performance-First",
    "deepvm_performance": "DeepVM (performance objective)",
}


@dataclass(frozen=True)
class Explanation:
    """Why nothing (or no configuration of one architecture) is feasible.

    Attributes:
        summary: one or two sentences for the user.
        binding: the binding constraints, from ``budget``, ``memory``, ``quota``,
            ``node_cap``, ``no_gpu_types``, ``no_cpu_types``, ``needs_eflops``.
        cheapest_feasible_usd_per_hour: the cheapest hourly price that would be feasible if PW
            were raised (``None`` when raising PW alone does not help).
        cheapest_configuration: that cheapest configuration.
    """

    summary: str
    binding: tuple[str, ...]
    cheapest_feasible_usd_per_hour: float | None = None
    cheapest_configuration: Configuration | None = None


@dataclass(frozen=True)
class Recommendation:
    """Everything one run of DeepVM says about one scenario.

    Attributes:
        scenario: the inputs.
        catalog_name, catalog_sha256: which catalog, exactly.
        solver: ``enumerate`` or ``ilp``.
        deepvm: the top-k configurations, best first (empty when nothing is feasible).
        deepvm_noscale, cost_first, performance_first: one configuration each, or ``None``.
        best_single_anchor, best_tiering: the best configuration of each architecture.
        explanation: why ``deepvm`` is empty (``None`` when it is not).
        architecture_notes: per architecture without a configuration, why not.
        notes: facts about the catalog the user should know (types left out, K taken as 1).
    """

    scenario: Scenario
    catalog_name: str
    catalog_sha256: str
    solver: Solver
    deepvm: tuple[Configuration, ...]
    deepvm_noscale: Configuration | None
    cost_first: Configuration | None
    performance_first: Configuration | None
    best_single_anchor: Configuration | None
    best_tiering: Configuration | None
    explanation: Explanation | None
    architecture_notes: dict[str, Explanation]
    notes: tuple[str, ...]

    @property
    def best(self) -> Configuration | None:
        """The first recommendation, or ``None``."""
        return self.deepvm[0] if self.deepvm else None

    def policy(self, name: str) -> Configuration | None:
        """The configuration of policy ``name`` (one of :data:`POLICIES`)."""
        if name == "deepvm":
            return self.best
        return {"deepvm_noscale": self.deepvm_noscale, "cost_first": self.cost_first,
                "performance_first": self.performance_first}[name]


# ----------------------------------------------------------------------------- baselines


def single_anchor_baselines(
    table: CandidateTable, catalog: Catalog, pws: np.ndarray
) -> tuple[list[Configuration | None], list[Configuration | None]]:
    """Cost-First and Performance-First at every PW of ``pws`` (vectorised over PW)."""
    index, count = largest_single_anchor(table, pws)
    gpus = {g.name: g for g in catalog.solvable_gpu_types}
    names = table.gpu_names
    # Cost-First: largest n, then lower price, then name
    price = np.full(index.shape, np.inf)
    price[index >= 0] = table.price[index[index >= 0]]
    name_rank = np.argsort(np.argsort(np.array(names, dtype=object), kind="stable"))
    cost_first: list[Configuration | None] = []
    perf_order = sorted(range(len(names)), key=lambda i: (
        -float(gpus[names[i]].eflops or 0.0), gpus[names[i]].spot_usd_per_hour, names[i]))
    performance_first: list[Configuration | None] = []
    for p in range(pws.size):
        if not np.any(index[p] >= 0):
            cost_first.append(None)
            performance_first.append(None)
            continue
        cols = np.lexsort((name_rank, price[p], -count[p]))
        cost_first.append(table.configuration(int(index[p, cols[0]])))
        first = next(i for i in perf_order if index[p, i] >= 0)
        performance_first.append(table.configuration(int(index[p, first])))
    return cost_first, performance_first


# ----------------------------------------------------------------------------- explanations


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


def _structural_reasons(catalog: Catalog, scenario: Scenario, architecture: str) -> list[
        tuple[str, str]]:
    """Why ``architecture`` has no configuration at any price: (constraint, sentence) pairs."""
    reasons: list[tuple[str, str]] = []
    gpus = catalog.solvable_gpu_types
    if not catalog.gpu_types:
        return [("no_gpu_types", "the catalog has no GPU VM types")]
    if not gpus:
        return [("needs_eflops", "every GPU type needs eFLOPS ("
                 + ", ".join(g.name for g in catalog.gpu_types) + ")")]
    if architecture == "tiering":
        if not catalog.cpu_types:
            return [("no_cpu_types", "the catalog has no CPU VM types to serve as memory nodes")]
        need = checkpoint_buffer_gb(scenario.checkpoint_gb, scenario.buffer_checkpoints)
        biggest = max(catalog.cpu_types, key=lambda w: w.memory_gib or 0.0)
        biggest_gb = (biggest.memory_gib or 0.0) * GB_PER_GIB
        if biggest_gb < need:
            reasons.append(("memory", (
                f"no CPU VM holds the checkpoint buffer: f x s = {scenario.checkpoint_gb:g} GB x "
                f"{scenario.buffer_checkpoints:g} = {need:g} GB, but the largest, {biggest.name}, "
                f"has {biggest.memory_gib:g} GiB = {biggest_gb:.4g} GB"
            )))
    spot_ok = [g for g in gpus if max_spot_vms(catalog, g, scenario) >= 1]
    if not spot_ok:
        if scenario.max_nodes < 1:
            reasons.append(("node_cap", "the node cap allows no spot GPU VM"))
        else:
            reasons.append(("quota", "the spot vCPU quotas allow no spot GPU VM: " + "; ".join(
                f"{g.name} needs {g.vcpus} vCPUs, family {g.family} allows "
                f"{_quota_text(catalog, g.family, 'spot')}" for g in gpus)))
    if architecture == "single_anchor":
        od_ok = [g for g in spot_ok if max_on_demand_vms(catalog, g, scenario) >= 1]
        if spot_ok and not od_ok:
            reasons.append(("quota", "the on-demand vCPU quotas allow no anchor: " + "; ".join(
                f"{g.name} needs {g.vcpus} vCPUs, family {g.family} allows "
                f"{_quota_text(catalog, g.family, 'on_demand')}" for g in spot_ok)))
    elif not reasons:
        reasons.append(("quota", "the on-demand vCPU quotas allow no memory node of a type "
                        "that holds the checkpoint buffer"))
    return reasons


def _quota_text(catalog: Catalog, family: str, kind: str) -> str:
    q = catalog.quota(family)
    if q is None:
        return "unlimited"
    return f"{q.spot_vcpus if kind == 'spot' else q.on_demand_vcpus}"


def _explain(
    catalog: Catalog, scenario: Scenario, table: CandidateTable, architecture: int | None
) -> Explanation:
    """Explain why nothing of ``architecture`` (None: either) is affordable at PW."""
    sel = np.arange(len(table)) if architecture is None else np.flatnonzero(
        table.arch == architecture)
    label = {None: "cluster", SA: "Single Anchor cluster", TR: "Tiering cluster"}[architecture]
    pw = scenario.pw_usd_per_hour
    if sel.size:
        cheapest = int(sel[np.lexsort((table.n[sel] + table.m[sel], table.price[sel]))[0]])
        config = table.configuration(cheapest)
        return Explanation(
            summary=(f"PW {pw:g} USD/h is below the cheapest feasible {label}, "
                     f"{_fmt_usd(config.hourly_price_usd)} ({config.describe()})."),
            binding=("budget",),
            cheapest_feasible_usd_per_hour=config.hourly_price_usd,
            cheapest_configuration=config,
        )
    archs = ["single_anchor", "tiering"] if architecture is None else [
        "single_anchor" if architecture == SA else "tiering"]
    pairs = [r for a in archs for r in _structural_reasons(catalog, scenario, a)]
    binding = tuple(dict.fromkeys(b for b, _ in pairs))
    sentences = list(dict.fromkeys(s for _, s in pairs))
    cheapest = None
    if "quota" in binding and scenario.use_quotas:
        relaxed = build_candidates(
            catalog, Scenario(pw, scenario.checkpoint_gb, scenario.buffer_checkpoints,
                              scenario.objective, False, scenario.max_nodes, 1), per_group=1)
        if len(relaxed):
            i = int(np.lexsort((relaxed.n + relaxed.m, relaxed.price))[0])
            cheapest = relaxed.configuration(i)
            sentences.append("without quotas the cheapest cluster would be "
                             f"{cheapest.describe()}")
    return Explanation(
        summary=f"No {label} is feasible at any price: " + "; ".join(sentences) + ".",
        binding=binding,
        cheapest_feasible_usd_per_hour=None,
        cheapest_configuration=cheapest,
    )


# ----------------------------------------------------------------------------- recommend


def recommend(catalog: Catalog, scenario: Scenario, solver: Solver = "enumerate") -> Recommendation:
    """Run DeepVM and the baselines on ``catalog`` for ``scenario``.

    Args:
        solver: ``enumerate`` (exact vectorised enumeration) or ``ilp`` (the PuLP integer
            program); both give the same ranking.

    Raises:
        InputError: an unknown solver.
        SolverError: the integer program ended without a proven optimum.
    """
    if solver not in SOLVERS:
        raise InputError("solver", solver, f"must be one of {', '.join(SOLVERS)}")
    pw = scenario.pw_usd_per_hour
    k = scenario.top_k
    table = build_candidates(catalog, scenario, per_group=k)

    if solver == "enumerate":
        def pick(count: int, noscale: bool = False, arch: int | None = None) -> list[
                Configuration]:
            return [table.configuration(int(i)) for i in top_indices(
                table, pw, scenario.objective, count, noscale=noscale, architecture=arch)]
    else:
        from deepvm_core.solvers import ilp

        def pick(count: int, noscale: bool = False, arch: int | None = None) -> list[
                Configuration]:
            name = None if arch is None else ("single_anchor" if arch == SA else "tiering")
            return ilp.solve_top_k(catalog, scenario, count, noscale=noscale, architecture=name)

    deepvm = pick(k)
    noscale = pick(1, noscale=True)
    best_sa = next((c for c in deepvm if c.architecture == "single_anchor"), None)
    best_tr = next((c for c in deepvm if c.architecture == "tiering"), None)
    if deepvm and best_sa is None:
        best_sa = next(iter(pick(1, arch=SA)), None)
    if deepvm and best_tr is None:
        best_tr = next(iter(pick(1, arch=TR)), None)
    cost_first, performance_first = single_anchor_baselines(table, catalog, np.array([pw]))

    arch_notes: dict[str, Explanation] = {}
    for code, name, best in ((SA, "single_anchor", best_sa), (TR, "tiering", best_tr)):
        if best is None:
            arch_notes[name] = _explain(catalog, scenario, table, code)
    return Recommendation(
        scenario=scenario,
        catalog_name=catalog.name,
        catalog_sha256=catalog.sha256,
        solver=solver,
        deepvm=tuple(deepvm),
        deepvm_noscale=noscale[0] if noscale else None,
        cost_first=cost_first[0],
        performance_first=performance_first[0],
        best_single_anchor=best_sa,
        best_tiering=best_tr,
        explanation=None if deepvm else _explain(catalog, scenario, table, None),
        architecture_notes=arch_notes,
        notes=catalog_notes(catalog),
    )
