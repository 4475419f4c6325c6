"""Cached calls into ``deepvm_core``: where the dashboard computes (the Spot markets page has
:mod:`dashboard.spot_compute`, the Method page's fixed tables :mod:`dashboard.method_compute`).

Arguments are hashable values (paths, mtimes, a catalog's sha256, a frozen Scenario); the
catalog itself is passed as ``_catalog`` (not hashed) next to its sha256, which identifies its
content exactly. Nothing here reads widgets or session state.

**Why one file.** Every cached call of the pages is here, so that what is computed once per
server or per session, and keyed by what, can be read in one place; each function is a thin
``st.cache_data``/``st.cache_resource`` wrapper around one core call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, NoReturn

import numpy as np
import streamlit as st

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.store import load_catalog
from deepvm_core.errors import DeepVMError
from deepvm_core.hardware.calibrate import Calibration, calibrate_catalog
from deepvm_core.hardware.coverage import TypeTable, combine_measurements
from deepvm_core.hardware.measurements import (
    MeasurementTable,
    bundled_measurements_paths,
    measurements_to_csv,
    parse_measurements_csv,
)
from deepvm_core.hardware.unused import unused_measurements_warnings
from deepvm_core.io.export import recommendation_to_dict
from deepvm_core.io.plan_json import plan_to_dict
from deepvm_core.io.recommend_export import with_job_estimate
from deepvm_core.job.backtest import BACKTEST_BUDGET_SECONDS
from deepvm_core.job.deadline_offer import DeadlineOffer
from deepvm_core.job.montecarlo import JobSamples
from deepvm_core.model import Configuration, Scenario
from deepvm_core.pipeline.deadline_offer import at_risk
from deepvm_core.pipeline.deadline_offer import deadline_offer as core_deadline_offer
from deepvm_core.pipeline.finishing import FinishingAnswer, finishing_answer
from deepvm_core.pipeline.plan import (
    Goal,
    JobPlanResult,
    PlanEstimate,
    configuration_samples,
    plan_job,
)
from deepvm_core.pipeline.recommend_job import (
    JOB_TRIALS,
    PlanVsRecommend,
    RecommendJob,
    compare_plan_with_recommendation,
    estimate_configuration,
    recommend_job,
)
from deepvm_core.pipeline.regions_job import compare_regions_for_job
from deepvm_core.recommend import regions
from deepvm_core.recommend.policies import PAPER_POLICIES
from deepvm_core.recommend.recommendation import Recommendation, Solver, recommend
from deepvm_core.recommend.sweep import SweepResult, pw_grid, sweep
from deepvm_core.search.gpu_filter import catalog_models, gpu_identity
from deepvm_core.workload.speed import SpeedBasis
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import Workload

if TYPE_CHECKING:  # pandas loads with the first table, after the Recommend card (issue 9)
    import pandas as pd

    from dashboard.spot_compute import PoolSet


@st.cache_resource(show_spinner=False, max_entries=64)
def load_catalog_file(path: str, mtime_ns: int) -> Catalog:
    """Load and validate a catalog file (``mtime_ns`` invalidates the cache on change).

    A resource, not data: a :class:`Catalog` is immutable, so every session shares one object
    (no unpickled copy per run, and its sha256 is computed once)."""
    del mtime_ns  # part of the cache key only
    return load_catalog(path)


@st.cache_data(show_spinner=False, max_entries=64)
def gpu_choices(catalog_sha256: str, _catalog: Catalog) -> tuple[tuple[str, ...],
                                                                   tuple[int, ...]]:
    """The GPU models of a catalog's types (the catalog's order) and their GPUs per VM
    (ascending): what the sidebar's GPU filters offer first."""
    del catalog_sha256  # the cache key only
    identities = [gpu_identity(g) for g in _catalog.gpu_types]
    return catalog_models(_catalog), tuple(sorted({c for _, c, _ in identities if c}))


@st.cache_data(show_spinner=False, max_entries=512)
def _recommend(catalog_sha256: str, _catalog: Catalog, scenario: Scenario, solver: Solver,
               top_k: int, job_key: tuple[object, ...] = (),
               _speed: SpeedBasis | None = None) -> Recommendation:
    del catalog_sha256, job_key  # the cache key only
    return recommend(_catalog, scenario, solver=solver, top_k=top_k, speed=_speed)


def recommendation(catalog: Catalog, scenario: Scenario, solver: Solver = "enumerate",
                   top_k: int = 3) -> Recommendation:
    """:func:`deepvm_core.recommend.recommendation.recommend` with ``solver`` (both give the same
    ranking), speed the core's default (the example job's)."""
    return job_recommendation(catalog, scenario, solver, top_k, None)


@st.cache_data(show_spinner=False, max_entries=64)
def _sweep(catalog_sha256: str, _catalog: Catalog, scenario: Scenario, start: float,
           stop: float, step: float) -> SweepResult:
    del catalog_sha256  # the cache key only
    grid: np.ndarray = pw_grid(start, stop, step)
    return sweep(_catalog, scenario, grid)


def run_sweep(catalog: Catalog, scenario: Scenario, start: float, stop: float,
              step: float) -> SweepResult:
    """:func:`deepvm_core.recommend.sweep.sweep` over ``pw_grid(start, stop, step)``.

    The sweep ignores PW and the objective, so they are normalised away before the cache sees
    the scenario.
    """
    key = replace(scenario, pw_usd_per_hour=0.0, objective="paper")
    return _sweep(catalog.sha256, catalog, key, float(start), float(stop), float(step))


@st.cache_data(show_spinner=False, max_entries=64)
def _compare(key: tuple[tuple[str, str], ...], job_key: str, _catalogs: dict[str, Catalog],
             scenario: Scenario, _workload: Workload | None,
             _speedup: SpeedupModel | None) -> list[regions.RegionComparison]:
    del key, job_key  # (label, sha256) per catalog and the job: the cache key only
    return compare_regions_for_job(_catalogs, scenario, _workload, _speedup)


def compare_regions(catalogs: Mapping[str, Catalog], scenario: Scenario,
                    workload: Workload | None = None,
                    speedup: SpeedupModel | None = None) -> list[regions.RegionComparison]:
    """:func:`deepvm_core.pipeline.regions_job.compare_regions_for_job` (each region's best
    only, with the job's expected time and cost there; ``workload`` ``None``: the example
    job)."""
    key = tuple((label, c.sha256) for label, c in catalogs.items())
    table = None if speedup is None else speedup.measurements
    job_key = repr((workload, None if speedup is None else speedup.name,
                    None if table is None else measurements_to_csv(table)))
    return _compare(key, job_key, dict(catalogs), scenario, workload, speedup)


def export_text(rec: Recommendation, catalog: Catalog, chosen: Configuration | None,
                timestamp: datetime | None, base: Catalog | None = None) -> str:
    """The "Download configuration (JSON)" file: the CLI's ``recommend --format json``
    document (:func:`deepvm_core.io.export.recommendation_to_dict`) with the chosen configuration
    and a timestamp; for an edited catalog, ``base`` (the catalog as stored) lets it list the
    edits."""
    doc = recommendation_to_dict(rec, catalog, chosen=chosen, timestamp=timestamp, base=base)
    return json.dumps(doc, indent=2) + "\n"


# ----------------------------------------------------------------------------- Instances


@st.cache_data(show_spinner=False, max_entries=16)
def _flopp(catalog_sha256: str, _catalog: Catalog) -> pd.DataFrame:
    del catalog_sha256  # the cache key only
    from dashboard import result_frames  # pandas: after the first page's card (issue 9)

    return result_frames.flopp_frame(_catalog)


def flopp_table(catalog: Catalog) -> pd.DataFrame:
    """:func:`dashboard.result_frames.flopp_frame` of ``catalog``, cached by its content (up
    to 1,000 GPU types at the size limit)."""
    return _flopp(catalog.sha256, catalog)


@st.cache_data(show_spinner=False, max_entries=16)
def _pairs(catalog_sha256: str, _catalog: Catalog, limit: int) -> pd.DataFrame:
    del catalog_sha256  # the cache key only
    from dashboard import result_frames

    return result_frames.pair_saturation_frame(_catalog, limit)


def pair_table(catalog: Catalog, limit: int) -> pd.DataFrame:
    """:func:`dashboard.result_frames.pair_saturation_frame` of ``catalog`` (at most ``limit``
    GPU and CPU types), cached by its content."""
    return _pairs(catalog.sha256, catalog, limit)


# ----------------------------------------------------------------------------- job planner


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


# ----------------------------------------------------------------------------- one answer


def _job_key(job: RecommendJob) -> tuple[object, ...]:
    """What a job's results depend on, for the caches: its workload, speedup model and whether
    it is the example job."""
    return (job.workload, job.speedup, job.speed.job_given)


def job_recommendation(catalog: Catalog, scenario: Scenario, solver: Solver, top_k: int,
                       job: RecommendJob | None) -> Recommendation:
    """:func:`recommendation` ranked by ``job``'s training speed, the job's own speed basis
    handed down (the example job's when the page has no job of the user's; ``None``: the
    core's default, the example job's). The Recommend page's only call into ``recommend``: the
    card, the tables, the policy comparison and the JSON export all read this one result."""
    key, speed = ((), None) if job is None else (_job_key(job), job.speed)
    return _recommend(catalog.sha256, catalog, scenario, solver, top_k, key, speed)


@st.cache_data(show_spinner=False, max_entries=256)
def _the_job(catalog_sha256: str, _catalog: Catalog, workload: Workload, speedup: SpeedupModel,
             example: bool) -> RecommendJob:
    del catalog_sha256  # the cache key only
    return recommend_job(_catalog, workload, speedup, example=example)


def the_job(catalog: Catalog, workload: Workload, speedup: SpeedupModel, *,
            example: bool = False) -> RecommendJob:
    """:func:`deepvm_core.pipeline.recommend_job.recommend_job`: the job and its speed basis,
    derived once per catalog, job and speedup model (``example``: the example job's)."""
    return _the_job(catalog.sha256, catalog, workload, speedup, example)


@st.cache_data(show_spinner=False, max_entries=256)
def _estimate(catalog_sha256: str, scenario: Scenario, job_key: tuple[object, ...],
              config: Configuration, trials: int, _catalog: Catalog, _rec: Recommendation,
              _job: RecommendJob) -> PlanEstimate:
    del catalog_sha256, scenario, job_key  # the cache key only
    return estimate_configuration(_rec, _catalog, _job, config, trials=trials)


def job_estimate(catalog: Catalog, rec: Recommendation, job: RecommendJob,
                 config: Configuration, trials: int = JOB_TRIALS) -> PlanEstimate:
    """:func:`deepvm_core.pipeline.recommend_job.estimate_configuration`: the job on ``config``,
    a configuration of ``rec`` read from its candidate table (expected, on demand, Monte Carlo
    with ``trials`` seeded runs), cached."""
    key = replace(rec.scenario, pw_usd_per_hour=0.0, objective="paper")  # neither is read
    return _estimate(catalog.sha256, key, _job_key(job), config, trials, catalog, rec, job)


@st.cache_data(show_spinner=False, max_entries=64)
def _finishing(catalog_sha256: str, scenario: Scenario, solver_key: tuple[object, ...],
               job_key: tuple[object, ...], shown: Configuration, _catalog: Catalog,
               _rec: Recommendation, _job: RecommendJob) -> FinishingAnswer | None:
    del catalog_sha256, scenario, solver_key, job_key  # the cache key only
    return finishing_answer(_rec, _catalog, _job, shown)


def finishing(catalog: Catalog, rec: Recommendation, job: RecommendJob,
              shown: Configuration) -> FinishingAnswer | None:
    """:func:`deepvm_core.pipeline.finishing.finishing_answer`: whether the job finishes on
    ``shown`` and, if not, the best cluster that does or the PW that would allow one
    (cached)."""
    top = tuple(c.describe() for c in rec.deepvm)
    return _finishing(catalog.sha256, rec.scenario, top, _job_key(job), shown, catalog, rec,
                      job)


def plan_vs_recommend(plan: JobPlanResult, rec: Recommendation, catalog: Catalog,
                      job: RecommendJob) -> PlanVsRecommend:
    """:func:`deepvm_core.pipeline.recommend_job.compare_plan_with_recommendation`."""
    return compare_plan_with_recommendation(plan, rec, catalog, job)


def export_with_job(text: str, rec: Recommendation, catalog: Catalog, job: RecommendJob) -> str:
    """The recommend export ``text`` with the job's estimate of the pick and its summary
    (:func:`deepvm_core.io.recommend_export.with_job_estimate`), as ``deepvm recommend --epochs
    ...`` writes it."""
    doc = with_job_estimate(json.loads(text), rec, catalog, job)
    return json.dumps(doc, indent=2) + "\n"
