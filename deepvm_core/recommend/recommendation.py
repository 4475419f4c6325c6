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

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from deepvm_core.arrays import FloatArray, IntArray
from deepvm_core.catalog import Catalog
from deepvm_core.errors import InputError, SolverTimeoutError
from deepvm_core.model import (
    Arch,
    Configuration,
    Scenario,
    checkpoint_buffer_gb,
    max_on_demand_vms,
    max_spot_vms,
)
from deepvm_core.recommend.by_accelerator import AcceleratorBest, best_by_accelerator
from deepvm_core.recommend.distinct import DistinctCluster, distinct_clusters
from deepvm_core.search.candidates import build_candidates
from deepvm_core.search.gpu_filter import GPU_FILTER_BINDING, filter_binding, filter_gpu_types
from deepvm_core.search.selection import top_indices
from deepvm_core.search.solvers import ILP_TIME_LIMIT_S
from deepvm_core.search.solvers.enumeration import largest_single_anchor, top_configurations
from deepvm_core.search.tables import CandidateTable
from deepvm_core.units import GB_PER_GIB
from deepvm_core.workload.speed import SpeedBasis, example_speed_note

Solver = Literal["enumerate", "ilp"]
SOLVERS: tuple[Solver, ...] = ("enumerate", "ilp")
#: The default solver: the exact vectorised enumeration. The integer program gives the same
#: ranking but is not the default because it is slower: on the bundled 2025 us-east-1 catalog
#: (47 GPU x 68 CPU types) a recommendation takes 0.45-1.25 s with it (PW 3, 10, 50; three-
#: quarters of that in CBC subprocess solves) against about 3 ms enumerating (bench/bench_gpus.py),
#: and the goal is 0.5 s.
DEFAULT_SOLVER: Solver = "enumerate"
#: The range of ``top_k`` :func:`recommend` accepts.
TOP_K_RANGE = (1, 100)
#: How many DeepVM configurations (and job-plan clusters) to show, unless told.
DEFAULT_TOP_K = 3
PAPER_POLICIES = ("deepvm", "deepvm_noscale", "cost_first", "performance_first")
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
            ``node_cap``, ``no_gpu_types``, ``no_cpu_types``, ``needs_eflops``,
            ``gpu_filter`` (the scenario's GPU filter admits no type); the job
            planner (:mod:`deepvm_core.pipeline.plan`) adds ``deadline``, ``job_budget`` and
            ``does_not_finish`` (no cluster is expected to finish the job).
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
        top_k: how many DeepVM configurations were asked for.
        deepvm: the top-k configurations, best first (empty when nothing is feasible).
        deepvm_noscale, cost_first, performance_first: one configuration each, or ``None``.
        best_single_anchor, best_tiering: the best configuration of each architecture.
        explanation: why ``deepvm`` is empty (``None`` when it is not).
        architecture_notes: per architecture without a configuration, why not.
        notes: facts the user should know: about the catalog (types left out, K taken as 1),
            and when the integer program was asked for but the enumeration answered
            (:func:`ilp_fallback_note`).
        solved_by: the solver whose results these are: ``solver``, or ``enumerate`` when the
            integer program did not prove an optimum within its time budget.
        distinct: the first ``top_k`` distinct clusters (architecture, GPU type, GPU VMs),
            each with its memory-node variants of ``deepvm`` folded in
            (:mod:`deepvm_core.recommend.distinct`; found by the exact enumeration, which ranks
            as the integer program does).
        speed_basis: what every configuration's training speed was computed from (the job's,
            or the example job's when ``speed_basis.job_given`` is False), or ``None``.
        by_accelerator: the best cluster of each accelerator model within PW, ranked
            (:mod:`deepvm_core.recommend.by_accelerator`); ``()`` when no GPU type of the
            catalog has an accelerator model.
    """

    scenario: Scenario
    catalog_name: str
    catalog_sha256: str
    solver: Solver
    top_k: int
    deepvm: tuple[Configuration, ...]
    deepvm_noscale: Configuration | None
    cost_first: Configuration | None
    performance_first: Configuration | None
    best_single_anchor: Configuration | None
    best_tiering: Configuration | None
    explanation: Explanation | None
    architecture_notes: dict[str, Explanation]
    notes: tuple[str, ...]
    solved_by: Solver
    distinct: tuple[DistinctCluster, ...] = ()
    speed_basis: SpeedBasis | None = None
    by_accelerator: tuple[AcceleratorBest, ...] = ()

    @property
    def best(self) -> Configuration | None:
        """The first recommendation, or ``None``."""
        return self.deepvm[0] if self.deepvm else None

    def policy(self, name: str) -> Configuration | None:
        """The configuration of policy ``name`` (one of :data:`PAPER_POLICIES`)."""
        if name == "deepvm":
            return self.best
        return {"deepvm_noscale": self.deepvm_noscale, "cost_first": self.cost_first,
                "performance_first": self.performance_first}[name]


# ----------------------------------------------------------------------------- baselines


def single_anchor_baseline_indices(table: CandidateTable,
                                   pws: FloatArray) -> tuple[IntArray, IntArray]:
    """Cost-First and Performance-First at every PW of ``pws``, as indices into ``table``
    (-1 where a policy finds nothing); vectorised over PW."""
    index, count = largest_single_anchor(table, pws)
    gpus = table.gpus
    cost_first = np.full(index.shape[0], -1, dtype=np.int64)
    performance_first = np.full(index.shape[0], -1, dtype=np.int64)
    # Cost-First: largest n, then lower price, then name
    price = np.full(index.shape, np.inf)
    price[index >= 0] = table.price_usd_per_hour[index[index >= 0]]
    name_rank = table.domain.gpu_rank
    perf_order = sorted(range(len(gpus)), key=lambda i: (
        -float(gpus[i].eflops or 0.0), gpus[i].spot_usd_per_hour, gpus[i].name))
    for p in range(index.shape[0]):
        if not np.any(index[p] >= 0):
            continue
        cols = np.lexsort((name_rank, price[p], -count[p]))
        cost_first[p] = index[p, cols[0]]
        first = next(i for i in perf_order if index[p, i] >= 0)
        performance_first[p] = index[p, first]
    return cost_first, performance_first


def policy_indices(table: CandidateTable, pw_usd_per_hour: float,
                   top_k: int) -> dict[str, list[int]]:
    """The paper's policies on ``table`` (every configuration priced within
    ``pw_usd_per_hour``), as indices best first: ``deepvm`` (Z, the top ``top_k``),
    ``deepvm_performance`` (eFLOPS n K(n)), ``deepvm_noscale`` (Z with K = 1), ``cost_first``
    and ``performance_first`` (:func:`single_anchor_baseline_indices`); a policy that finds
    nothing has an empty list. The job planner's policies; :func:`recommend` picks the same
    ones through its solver."""
    found: dict[str, list[int]] = {
        "deepvm": [int(i) for i in top_indices(table, math.inf, "paper", top_k)],
        "deepvm_performance": [int(i) for i in top_indices(table, math.inf, "performance", 1)],
        "deepvm_noscale": [int(i) for i in top_indices(table, math.inf, "paper", 1,
                                                       noscale=True)],
    }
    cost_first, performance_first = single_anchor_baseline_indices(
        table, np.array([pw_usd_per_hour]))
    found["cost_first"] = [int(cost_first[0])] if cost_first[0] >= 0 else []
    found["performance_first"] = ([int(performance_first[0])] if performance_first[0] >= 0
                                  else [])
    return found


def single_anchor_baselines(
    table: CandidateTable, pws: FloatArray
) -> tuple[list[Configuration | None], list[Configuration | None]]:
    """Cost-First and Performance-First at every PW of ``pws`` (vectorised over PW)."""
    cost_first, performance_first = single_anchor_baseline_indices(table, pws)

    def configs(indices: IntArray) -> list[Configuration | None]:
        return [table.configuration(int(i)) if i >= 0 else None for i in indices]

    return configs(cost_first), configs(performance_first)


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
    filtered = filter_binding(catalog, scenario.gpu_filter)
    if filtered is not None:
        return [(GPU_FILTER_BINDING, filtered)]
    gpus = filter_gpu_types(gpus, scenario.gpu_filter)
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


def explain_infeasible(
    catalog: Catalog, scenario: Scenario, table: CandidateTable, architecture: Arch | None
) -> Explanation:
    """Explain why nothing of ``architecture`` (None: either) is affordable at the scenario's
    PW. ``table`` is the candidate table without a budget (:func:`build_candidates`); when it
    holds a configuration of ``architecture`` the budget binds, else the reasons are
    structural (memory, quotas, node cap, missing types)."""
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
    pairs = [r for a in archs for r in _structural_reasons(catalog, scenario, a.key)]
    binding = tuple(dict.fromkeys(b for b, _ in pairs))
    sentences = list(dict.fromkeys(s for _, s in pairs))
    cheapest = None
    if "quota" in binding and scenario.use_quotas:
        relaxed = _cheapest_candidates(catalog, replace(scenario, use_quotas=False))
        if len(relaxed):
            i = int(np.lexsort((relaxed.total_vms, relaxed.price_usd_per_hour))[0])
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


def ilp_fallback_note(time_limit_s: float, *, started: bool = True, binaries: int = 0,
                      constraints: int = 0) -> str:
    """The note of a recommendation the enumeration answered because the integer program did not
    prove an optimum within ``time_limit_s`` seconds (``started`` False: it was not run, its
    ``binaries`` and saturation ``constraints`` being too many for the budget)."""
    tail = "these results come from the exact enumeration, which gives the same ranking."
    if not started:
        return (f"The integer program was not run: its {binaries:,} binaries and "
                f"{constraints:,} saturation constraints are more than it solves within "
                f"{time_limit_s:g} s; {tail}")
    return f"The integer program did not prove an optimum within {time_limit_s:g} s; {tail}"


Pick = Callable[[int, bool, Arch | None], list[Configuration]]


def _deepvm_picks(pick: Pick, top_k: int) -> tuple[
        list[Configuration], list[Configuration], dict[Arch, Configuration | None]]:
    """The top-k, NoScale's best, and the best of each architecture, through ``pick``."""
    deepvm = pick(top_k, False, None)
    noscale = pick(1, True, None)
    best = {a: next((c for c in deepvm if c.architecture == a.key), None) for a in Arch}
    for arch in Arch:
        if deepvm and best[arch] is None:
            best[arch] = next(iter(pick(1, False, arch)), None)
    return deepvm, noscale, best


def _cheapest_candidates(catalog: Catalog, scenario: Scenario) -> CandidateTable:
    """A table that holds the cheapest configuration of each architecture at any price.

    Prices rise with n, and a feasible (v, w, n) stays feasible with fewer GPU VMs (fewer spot
    VMs, no more memory nodes), so the cheapest is at the smallest n (1 for Tiering, 2 for
    Single Anchor), where a node cap of 2 decides feasibility as the scenario's does: the table
    is built under it, a few rows per GPU type whatever the cap.
    """
    small = replace(scenario, max_nodes=min(scenario.max_nodes, 2))
    return build_candidates(catalog, small, memory_node_choices=1)


def recommend(catalog: Catalog, scenario: Scenario, solver: Solver = DEFAULT_SOLVER, *,
              top_k: int = DEFAULT_TOP_K, time_limit_s: float = ILP_TIME_LIMIT_S,
              speed: SpeedBasis | None = None) -> Recommendation:
    """Run DeepVM and the baselines on ``catalog`` for ``scenario``.

    Args:
        solver: ``enumerate`` (exact vectorised enumeration) or ``ilp`` (the PuLP integer
            program); both give the same ranking.
        top_k: how many DeepVM configurations to recommend (:data:`TOP_K_RANGE`).
        time_limit_s: the integer program's time budget for the whole recommendation, seconds.
            When it does not prove an optimum within it (or its program is too large for it),
            the exact enumeration answers instead: ``solved_by`` is ``enumerate`` and a note
            (:func:`ilp_fallback_note`) says so.
        speed: what the training speed (every configuration's, and the ``speed`` objective)
            is computed from: the user's job (:func:`~deepvm_core.workload.speed.speed_basis`), or
            ``None`` for the example job's.

    Raises:
        InputError: an unknown solver, ``top_k`` or ``time_limit_s`` out of range, or a search
            space larger than :data:`~deepvm_core.search.candidates.MAX_SEARCH_ROWS`.
        SolverError: the integer program failed otherwise (not for lack of time).
    """
    if solver not in SOLVERS:
        raise InputError("solver", solver, f"must be one of {', '.join(SOLVERS)}")
    low, high = TOP_K_RANGE
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not low <= top_k <= high:
        raise InputError("top_k", top_k, f"must be a whole number from {low} to {high}")
    if isinstance(time_limit_s, bool) or not isinstance(time_limit_s, (int, float)) or not (
            0 < time_limit_s < math.inf):
        raise InputError("time_limit_s", time_limit_s, "must be a finite number of seconds > 0")
    start = time.monotonic()
    pw = scenario.pw_usd_per_hour
    table = build_candidates(catalog, scenario, pw_usd_per_hour=pw, memory_node_choices=1,
                             speed=speed)
    beyond_pw: list[CandidateTable] = []

    def every_price() -> CandidateTable:
        """The cheapest configurations beyond PW, for explanations; built on demand."""
        if not beyond_pw:
            beyond_pw.append(_cheapest_candidates(catalog, scenario))
        return beyond_pw[0]

    def enumerated(count: int, noscale: bool, arch: Arch | None) -> list[Configuration]:
        return top_configurations(table, pw, scenario.objective, count, noscale=noscale,
                                  architecture=arch)

    solved_by: Solver = solver
    notes = catalog_notes(catalog) + _speed_notes(scenario, table.domain.speed_basis)
    if solver == "enumerate":
        deepvm, noscale, best = _deepvm_picks(enumerated, top_k)
    else:
        from deepvm_core.search.solvers import ilp

        solved: list[int] = []  # calls that ended within the budget

        def integer_program(count: int, noscale: bool, arch: Arch | None) -> list[
                Configuration]:
            left = time_limit_s - (time.monotonic() - start)
            if left <= 0:
                raise SolverTimeoutError("time budget spent", time_limit_s=time_limit_s,
                                         started=True, binaries=0)
            found = ilp.solve_top_k(catalog, scenario, count, noscale=noscale,
                                    architecture=arch, time_limit_s=left,
                                    speed=table.domain.speed_basis)
            solved.append(len(found))
            return found

        try:
            deepvm, noscale, best = _deepvm_picks(integer_program, top_k)
        except SolverTimeoutError as exc:
            solved_by = "enumerate"
            notes += (ilp_fallback_note(time_limit_s, started=exc.started or bool(solved),
                                        binaries=exc.binaries, constraints=exc.constraints),)
            deepvm, noscale, best = _deepvm_picks(enumerated, top_k)
    cost_first, performance_first = single_anchor_baselines(table, np.array([pw]))

    arch_notes: dict[str, Explanation] = {
        arch.key: explain_infeasible(catalog, scenario, every_price(), arch)
        for arch in Arch if best[arch] is None}
    best_sa, best_tr = best[Arch.SINGLE_ANCHOR], best[Arch.TIERING]
    return Recommendation(
        scenario=scenario,
        catalog_name=catalog.name,
        catalog_sha256=catalog.sha256,
        solver=solver,
        top_k=top_k,
        deepvm=tuple(deepvm),
        deepvm_noscale=noscale[0] if noscale else None,
        cost_first=cost_first[0],
        performance_first=performance_first[0],
        best_single_anchor=best_sa,
        best_tiering=best_tr,
        explanation=None if deepvm else explain_infeasible(catalog, scenario, every_price(),
                                                           None),
        architecture_notes=arch_notes,
        notes=notes,
        solved_by=solved_by,
        distinct=distinct_clusters(table, pw, scenario.objective, top_k, deepvm),
        speed_basis=table.domain.speed_basis,
        by_accelerator=best_by_accelerator(catalog, scenario, table, every_price),
    )


def _speed_notes(scenario: Scenario, basis: SpeedBasis | None) -> tuple[str, ...]:
    """What the speed objective assumed, when it is the objective."""
    if scenario.objective != "speed" or basis is None or basis.job_given:
        return ()
    return (example_speed_note(basis),)
