"""Compare regions: the best recommendation of each region's catalog for one scenario.

Not AWS-specific: any catalogs keyed by region (fetched ones, typically) can be compared.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from deepvm_core.catalog import Catalog
from deepvm_core.model import Configuration, Scenario
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
    """

    region: str
    catalog_name: str
    best: Configuration | None
    hourly_price_usd: float | None
    performance: float | None
    objective_value: float | None
    explanation: str | None
    recommendation: Recommendation


def compare_regions(
    catalogs_by_region: Mapping[str, Catalog], scenario: Scenario
) -> list[RegionComparison]:
    """The best recommendation per region for the same PW, checkpoint and buffer.

    Rows are ranked like stage 4 (objective descending, then lower hourly price, ...);
    regions where nothing is feasible come last, by name.
    """
    rows: list[RegionComparison] = []
    for region, catalog in catalogs_by_region.items():
        rec = recommend(catalog, scenario, top_k=1)
        best = rec.best
        rows.append(RegionComparison(
            region=region,
            catalog_name=catalog.name,
            best=best,
            hourly_price_usd=best.hourly_price_usd if best else None,
            performance=best.performance if best else None,
            objective_value=best.objective_value(scenario.objective) if best else None,
            explanation=(rec.explanation.summary if rec.explanation else
                         "nothing is feasible") if best is None else None,
            recommendation=rec,
        ))
    feasible = sorted((r for r in rows if r.best is not None), key=lambda r: r.region)
    order = rank_configurations([r.best for r in feasible if r.best], scenario.objective)
    return [feasible[i] for i in order] + sorted(
        (r for r in rows if r.best is None), key=lambda r: r.region)
