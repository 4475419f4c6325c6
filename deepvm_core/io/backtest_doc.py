"""A backtest as a JSON-ready document: the figures of a
:class:`~deepvm_core.job.backtest_runs.BacktestRuns` for one configuration, written once for
``deepvm backtest --format json`` and the Spot markets page's download."""

from __future__ import annotations

from typing import Any

from deepvm_core.job.backtest_runs import BacktestRuns


def runs_to_dict(runs: BacktestRuns, *, per_run: bool = False) -> dict[str, Any]:
    """Makespan (mean, P10, P50, P90, max; hours), cost (mean, P90; USD), spot hours,
    interruptions, the share that fell back, the share that met the deadline (when one was
    given); with ``per_run``, the start ticks and every run's makespan and cost."""
    s = runs.summary()
    doc: dict[str, Any] = {
        "runs": s.runs,
        "makespan_hours": {"mean": float(s.mean_makespan_hours[0]),
                           "p10": float(s.makespan_p10_hours[0]),
                           "p50": float(s.makespan_p50_hours[0]),
                           "p90": float(s.makespan_p90_hours[0]),
                           "max": float(s.max_makespan_hours[0])},
        "cost_usd": {"mean": float(s.mean_cost_usd[0]), "p90": float(s.cost_p90_usd[0])},
        "spot_hours_mean": float(s.mean_spot_hours[0]),
        "interruptions_mean": float(s.mean_interruptions[0]),
        "fell_back": float(s.fell_back[0]),
    }
    if s.deadline_met is not None:
        doc["deadline_met"] = float(s.deadline_met[0])
    if per_run:
        doc["start_ticks"] = runs.start_ticks.tolist()
        doc["makespan_hours"]["per_run"] = runs.makespan_hours[0].tolist()
        doc["cost_usd"]["per_run"] = runs.cost_usd[0].tolist()
    return doc
