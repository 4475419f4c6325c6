"""Regions for a job (issue 24): each region's best cluster for the same job, ranked by the
job's expected time and cost there.

The job (the user's, or the example job) is one workload: without a named reference type its
epoch time is on the fixed yardstick, one A10G (:mod:`deepvm_core.workload.yardstick`), so it is
the same compute in every region and the regions' times compare. Each region's catalog gets the
job's speed basis, its recommendation (top 1, ranked by that speed under the ``speed``
objective), and the job model on its pick (closed form, no Monte Carlo:
:func:`~deepvm_core.pipeline.recommend_job.estimate_configuration`). Ranking:
:func:`deepvm_core.recommend.regions.rank_regions`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from deepvm_core.catalog import Catalog
from deepvm_core.errors import WorkloadError
from deepvm_core.model import Scenario
from deepvm_core.pipeline.recommend_job import estimate_configuration, recommend_job
from deepvm_core.recommend.recommendation import recommend
from deepvm_core.recommend.regions import RegionComparison, rank_regions, region_row
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import Workload, example_workload

__all__ = ["compare_regions_for_job"]


def compare_regions_for_job(catalogs_by_region: Mapping[str, Catalog], scenario: Scenario,
                            workload: Workload | None = None,
                            speedup: SpeedupModel | None = None) -> list[RegionComparison]:
    """Each region's best cluster for ``scenario`` and the job (``None``: the example job),
    with the job's expected makespan and cost on it, best region first
    (:func:`~deepvm_core.recommend.regions.rank_regions`: under ``speed``, the least expected
    job time). A region whose catalog the job does not fit (a reference type it lacks) is a
    region where nothing is feasible, with the reason."""
    example = workload is None
    job_workload = example_workload() if workload is None else workload
    rows: list[RegionComparison] = []
    for region, catalog in catalogs_by_region.items():
        names = {g.name for g in catalog.gpu_types}
        here = replace(job_workload, mtbi_hours_by_gpu={
            k: v for k, v in job_workload.mtbi_hours_by_gpu.items() if k in names})
        try:
            job = recommend_job(catalog, here, speedup, example=example)
        except WorkloadError as exc:
            rec = recommend(catalog, scenario, top_k=1)
            rows.append(replace(region_row(region, catalog, rec, scenario), best=None,
                                hourly_price_usd=None, performance=None, objective_value=None,
                                explanation=f"the job does not fit this catalog: {exc}"))
            continue
        rec = recommend(catalog, scenario, top_k=1, speed=job.speed)
        row = region_row(region, catalog, rec, scenario)
        if rec.best is not None:
            e = estimate_configuration(rec, catalog, job, rec.best, trials=0)
            finishes = e.does_not_finish is None and math.isfinite(e.expected_makespan_hours)
            row = replace(row, job_hours=e.expected_makespan_hours if finishes else math.inf,
                          job_cost_usd=e.expected_cost_usd if finishes else math.inf,
                          job_epochs=job_workload.epochs)
        rows.append(row)
    return rank_regions(rows, scenario.objective)
