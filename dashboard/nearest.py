"""The clusters nearest to a job's limits when none meets them (Plan a job page; pure).

When a deadline and a budget both fail, the user needs both ends of the trade: the fastest
cluster (how far it misses the budget) and the cheapest (how far it misses the deadline)
(issue 20, item 18). Only clusters expected to finish are quoted.
"""

from __future__ import annotations

import pandas as pd

from deepvm_core.job.objectives import cheapest, fastest
from deepvm_core.pipeline.plan import JobPlanResult
from deepvm_core.text import duration, usd


def _against(value: float, limit: float | None, text: str) -> str:
    if limit is None:
        return "no limit"
    return "met" if value <= limit else f"missed by {text}"


def nearest_frame(result: JobPlanResult) -> pd.DataFrame:
    """Rows ``Fastest`` and ``Cheapest`` (one row when they are the same cluster): the
    configuration, its expected makespan and cost, and each limit met or missed by how much.
    Empty when no cluster is expected to finish or none was planned."""
    columns = ["", "Configuration", "Expected makespan", "Expected cost", "Deadline", "Budget"]
    if not result.size:
        return pd.DataFrame(columns=columns)
    cost, hours = result.expected_cost_usd, result.expected_makespan_hours
    done = result.finishes
    picks = [("Fastest", fastest(cost, hours, rank=result.rank, eligible=done)),
             ("Cheapest", cheapest(cost, hours, rank=result.rank, eligible=done))]
    rows: list[tuple[str, int, dict[str, str]]] = []
    for label, index in picks:
        if index is None or any(index == row[1] for row in rows):
            continue
        c, t = float(cost[index]), float(hours[index])
        deadline, budget = result.deadline_hours, result.budget_usd
        rows.append((label, index, {
            "": label,
            "Configuration": result.candidates.configuration(index).describe(),
            "Expected makespan": duration(t), "Expected cost": usd(c),
            "Deadline": _against(t, deadline, duration(t - deadline) if deadline else ""),
            "Budget": _against(c, budget, usd(c - budget) if budget else "")}))
    return pd.DataFrame([row for _, _, row in rows], columns=columns)
