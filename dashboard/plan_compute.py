"""Cached calls of the job planner (the Plan page's, and the plans the Recommend and Spot
markets pages read): the measurements table in use, the plan itself and its deadline offer,
the frontier chart's points, one candidate's Monte Carlo draws, the plan's JSON file and the
calibration of a measurements CSV. The Recommend page's calls, the catalogs' and the other
pages' are in :mod:`dashboard.compute`.

Arguments are hashable values (a catalog's sha256, a frozen Scenario, a CSV's name and text);
the catalog itself is passed as ``_catalog`` (not hashed) next to its sha256, which
identifies its content exactly. Nothing here reads widgets or session state.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, NoReturn

import numpy as np
import streamlit as st

from deepvm_core.catalog import Catalog
from deepvm_core.errors import DeepVMError
from deepvm_core.hardware.calibrate import Calibration, calibrate_catalog
from deepvm_core.hardware.coverage import TypeTable, combine_measurements
from deepvm_core.hardware.measurements import (
    MeasurementTable,
    bundled_measurements_paths,
    parse_measurements_csv,
)
from deepvm_core.hardware.unused import unused_measurements_warnings
from deepvm_core.io.plan_json import plan_to_dict
from deepvm_core.job.backtest import BACKTEST_BUDGET_SECONDS
from deepvm_core.job.deadline_offer import DeadlineOffer
from deepvm_core.job.montecarlo import JobSamples
from deepvm_core.model import Scenario
from deepvm_core.pipeline.deadline_offer import at_risk
from deepvm_core.pipeline.deadline_offer import deadline_offer as core_deadline_offer
from deepvm_core.pipeline.plan import Goal, JobPlanResult, configuration_samples, plan_job
from deepvm_core.pipeline.recommend_job import PlanVsRecommend
from deepvm_core.recommend.policies import PAPER_POLICIES
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import Workload

if TYPE_CHECKING:
    from dashboard.spot_compute import PoolSet


@st.cache_data(show_spinner=False, max_entries=16)
def measurements_table(name: str, text: str) -> MeasurementTable:
    """A measurements CSV parsed (:func:`deepvm_core.job.parse_measurements_csv`)."""
    return parse_measurements_csv(text, source=name)


def bundled_measurements() -> tuple[str, str]:
    """The bundled scaling measurements: (file name, CSV text)."""
    name, path = next(iter(sorted(bundled_measurements_paths().items())))
    return name, path.read_text(encoding="utf-8")


@st.cache_data(show_spinner=False, max_entries=16)
def measurements_in_use(upload: tuple[str, str] | None, confirmed: bool = False
                        ) -> tuple[MeasurementTable, tuple[TypeTable, ...]]:
    """The one measurements table the plan uses: ``upload`` (file name, CSV text), its rows of
    the types it measures well with a trusted fit (any fit once ``confirmed``), when there are
    any, else the bundled file (:func:`deepvm_core.hardware.coverage.combine_measurements`);
    and which table each type uses."""
    bundled = measurements_table(*bundled_measurements())
    if upload is None:
        return bundled, tuple(TypeTable(m.instance, bundled.source) for m in bundled.instances)
    return combine_measurements(measurements_table(*upload), bundled, confirmed=confirmed)


@dataclass(frozen=True)
class Failure:
    """A computation that failed with a user error, cached like a result (issue 27): a rerun
    or a shared link shows the same message without computing it again."""

    message: str

    def throw(self) -> NoReturn:
        """Raise the error again (as :class:`~deepvm_core.errors.DeepVMError`)."""
        raise DeepVMError(self.message)


@st.cache_data(show_spinner=False, max_entries=64)
def _plan(catalog_sha256: str, _catalog: Catalog, scenario: Scenario, workload: Workload,
          pw: float | None, speedup: SpeedupModel, goal: Goal, deadline: float | None,
          budget: float | None, trials: int, seed: int, top_k: int,
          pools_key: tuple[object, ...] = (), _pools: PoolSet | None = None,
          recovery: str = "failover") -> JobPlanResult | Failure:
    del catalog_sha256, pools_key  # the cache key only
    replay, why = None, None
    try:
        if _pools is not None and _pools.pools:
            from deepvm_core.pipeline.replay_hook import planner_recovery, replay_hook

            policy, why = planner_recovery(recovery, deadline)
            # the page describes a replay over the pools in failover order; its model selector
            # (issue 25, plan --model) comes with the Spot markets page. The backtests have
            # the request's time budget: past it the plan says what was cut (its warnings)
            replay = replay_hook(_catalog, _pools.pools, recovery=policy,
                                 deadline_hours=deadline, model="replay",
                                 budget_seconds=BACKTEST_BUDGET_SECONDS)
        result = plan_job(_catalog, scenario, workload, pw_usd_per_hour=pw, speedup=speedup,
                          goal=goal, deadline_hours=deadline, budget_usd=budget, trials=trials,
                          seed=seed, top_k=top_k, replay=replay)
    except DeepVMError as exc:  # cached too: a rerun or a shared link does not compute it again
        return Failure(str(exc))
    return result if why is None else replace(result, warnings=(why, *result.warnings))


def job_plan(catalog: Catalog, scenario: Scenario, workload: Workload, *, pw: float | None,
             speedup: SpeedupModel, goal: Goal, deadline: float | None, budget: float | None,
             trials: int, seed: int, top_k: int, pools: PoolSet | None = None,
             recovery: str = "failover") -> JobPlanResult:
    """:func:`deepvm_core.job.plan_job`, cached by catalog content and every input (the
    scenario's PW is not read by the planner, so it is normalised away). With ``pools`` (the
    Spot markets page's), the configurations of their types are evaluated by a backtest
    (``recovery``; a deadline policy without a deadline replays ``failover`` and the plan's
    first warning says so: :func:`deepvm_core.pipeline.replay_hook.planner_recovery`). A user
    error is cached as well, and raised again (:class:`Failure`)."""
    key = replace(scenario, pw_usd_per_hour=0.0)
    pools_key = pools.key if pools is not None else ()
    result = _plan(catalog.sha256, catalog, key, workload, pw, speedup, goal, deadline, budget,
                   trials, seed, top_k, pools_key, pools, recovery)
    if isinstance(result, Failure):
        result.throw()
    return result


@st.cache_data(show_spinner=False, max_entries=16)
def _offer(catalog_sha256: str, _catalog: Catalog, _result: JobPlanResult,
           result_key: tuple[object, ...], pools_key: tuple[object, ...],
           _pools: PoolSet | None) -> DeadlineOffer | None:
    del catalog_sha256, result_key, pools_key  # the cache key only
    return core_deadline_offer(_result, _catalog, pools=() if _pools is None else _pools.pools)


def deadline_offer(catalog: Catalog, result: JobPlanResult,
                   pools: PoolSet | None = None) -> DeadlineOffer | None:
    """:func:`deepvm_core.pipeline.deadline_offer.deadline_offer` of the plan (``pools``: the
    ones it was planned with), cached by the plan's inputs; ``None`` at once when the deadline
    is not at risk."""
    if at_risk(result) is None:
        return None
    key = (result.scenario, result.workload, result.pw_usd_per_hour, result.goal,
           result.deadline_hours, result.budget_usd, result.trials, result.seed, result.top_k,
           None if result.replay is None else result.replay.recovery)
    return _offer(catalog.sha256, catalog, result, key,
                  () if pools is None else pools.key, pools)


@dataclass(frozen=True)
class FrontierPoints:
    """What the frontier chart draws of a plan (candidate indices).

    Attributes:
        shown: the candidates drawn, ascending: a fixed sample of the feasible ones (finite
            cost > 0 and makespan) past the chart's limit, plus the frontier and the marked.
        frontier: the Pareto frontier, in the plan's order.
        marks: candidate -> its mark: ``best`` (the chosen one) or the first policy of
            :data:`deepvm_core.recommend.policies.PAPER_POLICIES` it is (DeepVM's first pick
            for ``deepvm``); a policy's pick that is not expected to finish is not marked.
        finishing: how many candidates are expected to finish the job.
    """

    shown: np.ndarray
    frontier: tuple[int, ...]
    marks: dict[int, str]
    finishing: int


def frontier_points(result: JobPlanResult, limit: int) -> FrontierPoints:
    """The candidates the frontier chart draws: at most ``limit`` background points (a sample
    with a fixed seed, so every rerun draws the same picture), the frontier and the marked
    ones (:meth:`deepvm_core.job.JobPlanResult.marks`) always."""
    cost, hours = result.expected_cost_usd, result.expected_makespan_hours
    cloud = np.flatnonzero(result.finishes & np.isfinite(cost) & np.isfinite(hours) & (cost > 0))
    if cloud.size > limit:
        cloud = np.sort(np.random.default_rng(0).choice(cloud, limit, replace=False))
    order = ("best", *PAPER_POLICIES)
    marks: dict[int, str] = {}
    for index, tags in result.marks().items():
        usable = [m for m in order if m in tags and (m == "best" or result.finishes[index])]
        if usable:
            marks[index] = usable[0]
    frontier = tuple(int(i) for i in result.frontier)
    keep = np.array(sorted(set(frontier) | set(marks)), dtype=np.int64)
    return FrontierPoints(np.union1d(cloud, keep), frontier, marks,
                          int(np.count_nonzero(result.finishes)))


@st.cache_data(show_spinner=False, max_entries=16)
def _samples(catalog_sha256: str, _catalog: Catalog, _result: JobPlanResult,
             result_key: tuple[object, ...],
             speedup: SpeedupModel, index: int, trials: int, seed: int) -> JobSamples:
    del catalog_sha256, result_key  # the cache key only
    return configuration_samples(_result, _catalog, speedup, index, trials=trials, seed=seed)


def job_samples(catalog: Catalog, result: JobPlanResult, speedup: SpeedupModel, index: int,
                trials: int, seed: int) -> JobSamples:
    """Raw Monte Carlo draws of one candidate (for the distribution chart)."""
    key = (result.scenario, result.workload, result.pw_usd_per_hour)
    return _samples(catalog.sha256, catalog, result, key, speedup, index, trials, seed)


def plan_text(result: JobPlanResult, catalog: Catalog, timestamp: datetime | None,
              comparison: PlanVsRecommend | None = None,
              offer: DeadlineOffer | None = None) -> str:
    """The "Download plan (JSON)" file: the CLI's ``plan --format json`` document, with the
    card's comparison with Recommend (``recommend_comparison``) and its deadline offer
    (``deadline_offer``) when there are."""
    return json.dumps(plan_to_dict(result, catalog, timestamp=timestamp,
                                   comparison=comparison, deadline_offer=offer),
                      indent=2) + "\n"


def unused_measurements(catalog: Catalog, name: str, text: str) -> tuple[str, ...]:
    """:func:`deepvm_core.hardware.unused.unused_measurements_warnings` of a measurements CSV."""
    return tuple(unused_measurements_warnings(catalog, measurements_table(name, text)))


@st.cache_data(show_spinner=False, max_entries=16)
def _calibrate(catalog_sha256: str, _catalog: Catalog, name: str, text: str,
               eflops_reference: str | None) -> Calibration:
    del catalog_sha256  # the cache key only
    table = parse_measurements_csv(text, source=name)
    return calibrate_catalog(_catalog, table, eflops_reference=eflops_reference)


def calibration(catalog: Catalog, name: str, text: str,
                eflops_reference: str | None) -> Calibration:
    """:func:`deepvm_core.hardware.calibrate_catalog` of ``catalog`` on a measurements CSV (with
    ``eflops_reference``, relative eFLOPS from one-node times too)."""
    return _calibrate(catalog.sha256, catalog, name, text, eflops_reference)
