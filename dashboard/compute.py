"""Cached calls into ``deepvm_core``: the catalogs, the Recommend page's one answer (the
recommendation, the job and its estimate, whether it finishes, the JSON export), the sweep,
the regions' comparison and the Instances page's tables. The job planner's calls are in
:mod:`dashboard.plan_compute`, the Spot markets page's in :mod:`dashboard.spot_compute`, the
Method page's fixed tables in :mod:`dashboard.method_compute`.

Arguments are hashable values (paths, mtimes, a catalog's sha256, a frozen Scenario); the
catalog itself is passed as ``_catalog`` (not hashed) next to its sha256, which identifies its
content exactly. Nothing here reads widgets or session state. Each function is a thin
``st.cache_data``/``st.cache_resource`` wrapper around one core call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.store import load_catalog
from deepvm_core.hardware.measurements import measurements_to_csv
from deepvm_core.io.export import recommendation_to_dict
from deepvm_core.io.recommend_export import with_job_estimate
from deepvm_core.model import Configuration, Scenario
from deepvm_core.pipeline.finishing import FinishingAnswer, finishing_answer
from deepvm_core.pipeline.plan import JobPlanResult, PlanEstimate
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
from deepvm_core.recommend.recommendation import Recommendation, Solver, recommend
from deepvm_core.recommend.sweep import SweepResult, pw_grid, sweep
from deepvm_core.search.gpu_filter import catalog_models, gpu_identity
from deepvm_core.workload.speed import SpeedBasis
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import Workload

if TYPE_CHECKING:  # pandas loads with the first table, after the Recommend card (issue 9)
    import pandas as pd


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
