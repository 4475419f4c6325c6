"""Compare regions: the best recommendation of each region's catalog for one scenario.

Not AWS-specific: any catalogs keyed by region (fetched ones, typically) can be compared.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from deepvm_core.catalog import Catalog
from deepvm_core.model import Configuration, Objective, Scenario
from deepvm_core.recommend.recommendation import Recommendation, recommend
from deepvm_core.search.ranking import rank_configurations


@dataclass(frozen=True)
class RegionComparison:
    """The best recommendation of one region for a scenario.

    Attributes:
        region: the region.
        catalog_name: its catalog.
        best: the DeepVM first choice, or ``None`` when nothing is feasible.
        hourly_price_usd: its price, USD per hour, or ``None``.
        performance: its performance (eFLOPS * n * K(n)), or ``None``.
        objective_value: its value under the scenario's objective, or ``None``.
        explanation: why nothing is feasible (``None`` when ``best`` is set).
        recommendation: the full :class:`~deepvm_core.recommend.recommendation.Recommendation`.
        job_hours: the job's expected makespan on ``best``, hours (``inf``: not expected to
            finish), or ``None`` when no job was estimated
            (:func:`deepvm_core.pipeline.regions_job.compare_regions_for_job` sets it).
        job_cost_usd: the job's expected cost on ``best``, USD (``inf`` likewise), or ``None``.
        job_epochs: the job's epochs E, or ``None``.
    """

    region: str
    catalog_name: str
    best: Configuration | None
    hourly_price_usd: float | None
    performance: float | None
    objective_value: float | None
    explanation: str | None
    recommendation: Recommendation
    job_hours: float | None = None
    job_cost_usd: float | None = None
    job_epochs: float | None = None

    @property
    def job_epochs_per_hour(self) -> float | None:
        """The job's expected throughput on ``best``, epochs per hour, interruptions included:
        ``E / job_hours`` (0 when it is not expected to finish), or ``None``."""
        if self.job_hours is None or self.job_epochs is None:
            return None
        return self.job_epochs / self.job_hours if self.job_hours > 0 else math.inf


def region_row(region: str, catalog: Catalog, rec: Recommendation,
               scenario: Scenario) -> RegionComparison:
    """One region's row from its recommendation (no job estimate)."""
    best = rec.best
    return RegionComparison(
        region=region,
        catalog_name=catalog.name,
        best=best,
        hourly_price_usd=best.hourly_price_usd if best else None,
        performance=best.performance if best else None,
        objective_value=best.objective_value(scenario.objective) if best else None,
        explanation=(rec.explanation.summary if rec.explanation else
                     "nothing is feasible") if best is None else None,
        recommendation=rec,
    )


def rank_regions(rows: Sequence[RegionComparison], objective: Objective) -> list[RegionComparison]:
    """Regions best first: under ``speed`` with job estimates, the least expected job time
    (then the least expected cost, then the name; a region whose best cluster does not finish
    the job after those that do); otherwise like stage 4 (objective descending, then lower
    hourly price, ...). Regions where nothing is feasible come last, by name."""
    feasible = sorted((r for r in rows if r.best is not None), key=lambda r: r.region)
    if objective == "speed" and feasible and all(r.job_hours is not None for r in feasible):
        ranked = sorted(feasible, key=lambda r: (r.job_hours, r.job_cost_usd, r.region))
    else:
        order = rank_configurations([r.best for r in feasible if r.best], objective)
        ranked = [feasible[i] for i in order]
    return ranked + sorted((r for r in rows if r.best is None), key=lambda r: r.region)


def compare_regions(
    catalogs_by_region: Mapping[str, Catalog], scenario: Scenario
) -> list[RegionComparison]:
    """The best recommendation per region for the same PW, checkpoint and buffer, ranked by
    :func:`rank_regions` (speed is the example job's, on the yardstick, so it compares across
    regions; :func:`deepvm_core.pipeline.regions_job.compare_regions_for_job` adds the job's
    expected time and cost and ranks by them)."""
    rows = [region_row(region, catalog, recommend(catalog, scenario, top_k=1), scenario)
            for region, catalog in catalogs_by_region.items()]
    return rank_regions(rows, scenario.objective)
