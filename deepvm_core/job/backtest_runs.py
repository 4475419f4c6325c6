"""What a backtest returns: every run (:class:`BacktestRuns`, arrays of shape (configurations,
starts)) and their summary per configuration (:class:`BacktestSummary`, ``traces.md``, "Output
per policy"). The runs come from :func:`deepvm_core.job.backtest_replay.backtest`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from deepvm_core.arrays import BoolArray, FloatArray, IntArray
from deepvm_core.job.backtest import RecoveryPolicy

#: A run meets its deadline when its makespan is at most the deadline plus this, hours.
DEADLINE_TOLERANCE_HOURS: Final = 1e-9
#: Percentiles of the makespan reported (numpy's default linear interpolation).
PERCENTILES: Final = (10.0, 50.0, 90.0)


@dataclass(frozen=True)
class BacktestRuns:
    """Every run of a backtest, arrays of shape (configurations, starts).

    Attributes:
        policy: the recovery policy. deadline_hours: D, or ``None``.
        start_ticks: the start tick of each run (starts,).
        makespan_hours, cost_usd, spot_hours, wait_hours, on_demand_hours: per run.
        interruptions: per run. fell_back: per run, True when it finished on demand.
    """

    policy: RecoveryPolicy
    deadline_hours: float | None
    start_ticks: IntArray
    makespan_hours: FloatArray
    cost_usd: FloatArray
    spot_hours: FloatArray
    wait_hours: FloatArray
    on_demand_hours: FloatArray
    interruptions: IntArray
    fell_back: BoolArray

    def summary(self) -> BacktestSummary:
        """The output per configuration (``traces.md``, "Output per policy")."""
        mk = self.makespan_hours
        p10, p50, p90 = np.percentile(mk, PERCENTILES, axis=1)
        met = None if self.deadline_hours is None else np.mean(
            mk <= self.deadline_hours + DEADLINE_TOLERANCE_HOURS, axis=1)
        return BacktestSummary(
            runs=int(mk.shape[1]), mean_makespan_hours=mk.mean(axis=1),
            makespan_hours_p10=p10, makespan_hours_p50=p50, makespan_hours_p90=p90,
            max_makespan_hours=mk.max(axis=1), mean_cost_usd=self.cost_usd.mean(axis=1),
            cost_usd_p90=np.percentile(self.cost_usd, 90.0, axis=1),
            mean_spot_hours=self.spot_hours.mean(axis=1),
            mean_interruptions=self.interruptions.mean(axis=1),
            deadline_met=met, fell_back=self.fell_back.mean(axis=1))


@dataclass(frozen=True)
class BacktestSummary:
    """Per configuration (1-D arrays): the makespan's mean, P10, P50, P90 and max (hours), the
    cost's mean and P90 (USD), mean spot hours, mean interruptions, the share of runs that meet
    the deadline (``None`` without one) and the share that fell back."""

    runs: int
    mean_makespan_hours: FloatArray
    makespan_hours_p10: FloatArray
    makespan_hours_p50: FloatArray
    makespan_hours_p90: FloatArray
    max_makespan_hours: FloatArray
    mean_cost_usd: FloatArray
    cost_usd_p90: FloatArray
    mean_spot_hours: FloatArray
    mean_interruptions: FloatArray
    deadline_met: FloatArray | None
    fell_back: FloatArray

