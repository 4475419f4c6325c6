"""Stage 4: the DeepVM ranking under the scenario's objective, with the paper's baselines.

:func:`recommend` is the one entry point the CLI and the dashboard call. It builds the
scenario's candidate domain once (:func:`~deepvm_core.search.candidates.build_domain`) and hands
it down: to the solver (the exact enumeration on its table, or the integer program on the
domain itself), to the paper's policies (:mod:`deepvm_core.recommend.policies`), to the
explanations beyond PW (:mod:`deepvm_core.recommend.explain`), to the distinct top-k and to the
best of each accelerator model. It returns a :class:`Recommendation` that always says why: the
top-k, the best of each architecture, the baselines, every policy as the paper compares them,
and, when nothing is feasible, an :class:`~deepvm_core.recommend.explain.Explanation` naming
the binding constraint and the cheapest feasible hourly price. The recommendation keeps its
candidate table, so a job estimate of one of its configurations needs no second domain.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from deepvm_core.catalog import Catalog
from deepvm_core.errors import InputError, SolverTimeoutError
from deepvm_core.model import Arch, Configuration, Scenario
from deepvm_core.recommend.by_accelerator import AcceleratorBest, best_by_accelerator
from deepvm_core.recommend.distinct import DistinctCluster, distinct_clusters
from deepvm_core.recommend.explain import (
    Explanation,
    any_price_table,
    catalog_notes,
    explanations,
)
from deepvm_core.recommend.policies import policy_indices
from deepvm_core.search.candidates import build_domain
from deepvm_core.search.pairing import candidate_table
from deepvm_core.search.solvers import ILP_TIME_LIMIT_S
from deepvm_core.search.solvers.enumeration import Ranking
from deepvm_core.search.tables import CandidateDomain, CandidateTable
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
        compared: every policy of :data:`~deepvm_core.recommend.policies.PAPER_POLICIES` at
            PW, in that order, as the paper compares them whatever the scenario's objective:
            DeepVM and DeepVM-NoScale by Z, DeepVM by performance, Cost-First and
            Performance-First by their rules (exact enumeration; one point of the PW sweep,
            :func:`deepvm_core.recommend.sweep.sweep`). Recommend's "Policies side by side".
        candidates: the scenario's candidate table within PW (one memory-node type per
            (architecture, GPU type, n)), over its candidate domain, built once: the job
            estimate of a configuration reads its row there
            (:func:`deepvm_core.pipeline.recommend_job.estimate_configuration`). Not compared.
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
    compared: dict[str, Configuration | None]
    candidates: CandidateTable = field(compare=False, repr=False)
    distinct: tuple[DistinctCluster, ...] = ()
    speed_basis: SpeedBasis | None = None
    by_accelerator: tuple[AcceleratorBest, ...] = ()

    @property
    def best(self) -> Configuration | None:
        """The first recommendation, or ``None``."""
        return self.deepvm[0] if self.deepvm else None

    def policy(self, name: str) -> Configuration | None:
        """The configuration of policy ``name`` under the scenario's objective: ``deepvm`` (the
        best), ``deepvm_noscale``, ``cost_first`` or ``performance_first`` (the paper's
        comparison, whatever the objective, is :attr:`compared`)."""
        if name == "deepvm":
            return self.best
        return {"deepvm_noscale": self.deepvm_noscale, "cost_first": self.cost_first,
                "performance_first": self.performance_first}[name]


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


def _check_arguments(solver: str, top_k: int, time_limit_s: float) -> None:
    if solver not in SOLVERS:
        raise InputError("solver", solver, f"must be one of {', '.join(SOLVERS)}")
    low, high = TOP_K_RANGE
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not low <= top_k <= high:
        raise InputError("top_k", top_k, f"must be a whole number from {low} to {high}")
    if isinstance(time_limit_s, bool) or not isinstance(time_limit_s, (int, float)) or not (
            0 < time_limit_s < math.inf):
        raise InputError("time_limit_s", time_limit_s, "must be a finite number of seconds > 0")


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
    _check_arguments(solver, top_k, time_limit_s)
    deadline = time.monotonic() + time_limit_s
    domain = build_domain(catalog, scenario, pw_usd_per_hour=scenario.pw_usd_per_hour,
                          speed=speed)
    return _recommendation(catalog, scenario, domain, solver, top_k, time_limit_s, deadline)


def _recommendation(catalog: Catalog, scenario: Scenario, domain: CandidateDomain,
                    solver: Solver, top_k: int, time_limit_s: float,
                    deadline: float) -> Recommendation:
    """Everything :func:`recommend` says, from the scenario's domain (built once): its table,
    ranked by the scenario's objective, goes to the solver, the paper's policies, the distinct
    top-k and the best of each accelerator model; the cheapest rows at any price to the
    explanations."""
    table = candidate_table(domain)
    ranking = Ranking(table, scenario.objective)
    every_price = any_price_table(domain, table)
    (deepvm, noscale, best), solved_by, fallback = _solve(ranking, solver, top_k,
                                                          time_limit_s, deadline)
    compared = {name: table.configuration(found[0]) if found else None
                for name, found in policy_indices(table, 1).items()}
    notes = catalog_notes(catalog) + _speed_notes(scenario, domain.speed_basis) + fallback
    by_accelerator = best_by_accelerator(catalog, scenario, ranking, every_price)
    missing = [arch for arch in Arch if best[arch] is None]  # all of them when deepvm is empty
    why = explanations(catalog, scenario, every_price, [*missing, *([] if deepvm else [None])])
    return Recommendation(
        scenario=scenario,
        catalog_name=catalog.name,
        catalog_sha256=catalog.sha256,
        solver=solver,
        top_k=top_k,
        deepvm=tuple(deepvm),
        deepvm_noscale=noscale[0] if noscale else None,
        cost_first=compared["cost_first"],
        performance_first=compared["performance_first"],
        best_single_anchor=best[Arch.SINGLE_ANCHOR],
        best_tiering=best[Arch.TIERING],
        explanation=why.get(None),
        architecture_notes={arch.key: why[arch] for arch in missing},
        notes=notes,
        solved_by=solved_by,
        compared=compared,
        candidates=table,
        distinct=distinct_clusters(ranking, top_k, deepvm),
        speed_basis=domain.speed_basis,
        by_accelerator=by_accelerator,
    )


Picks = tuple[list[Configuration], list[Configuration], dict[Arch, Configuration | None]]


def _solve(ranking: Ranking, solver: Solver, top_k: int, time_limit_s: float,
           deadline: float) -> tuple[Picks, Solver, tuple[str, ...]]:
    """DeepVM's picks on the ranking (the integer program on its domain), the solver that
    answered, and the fallback note when the enumeration answered for the program."""

    def enumerated(count: int, noscale: bool, arch: Arch | None) -> list[Configuration]:
        return ranking.top(count, noscale=noscale, architecture=arch)

    if solver == "enumerate":
        return _deepvm_picks(enumerated, top_k), solver, ()
    from deepvm_core.search.solvers import ilp

    solved: list[int] = []  # calls that ended within the budget

    def integer_program(count: int, noscale: bool, arch: Arch | None) -> list[Configuration]:
        left = deadline - time.monotonic()
        if left <= 0:
            raise SolverTimeoutError("time budget spent", time_limit_s=time_limit_s,
                                     started=True, binaries=0)
        found = ilp.solve_top_k(ranking.table.domain, ranking.objective, count,
                                noscale=noscale, architecture=arch, time_limit_s=left)
        solved.append(len(found))
        return found

    try:
        return _deepvm_picks(integer_program, top_k), solver, ()
    except SolverTimeoutError as exc:
        note = ilp_fallback_note(time_limit_s, started=exc.started or bool(solved),
                                 binaries=exc.binaries, constraints=exc.constraints)
        return _deepvm_picks(enumerated, top_k), "enumerate", (note,)


def _speed_notes(scenario: Scenario, basis: SpeedBasis | None) -> tuple[str, ...]:
    """What the speed objective assumed, when it is the objective."""
    if scenario.objective != "speed" or basis is None or basis.job_given:
        return ()
    return (example_speed_note(basis),)
