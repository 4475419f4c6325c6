"""What a backtest replays (``traces.md``, "Backtest"): the job on each configuration in each
pool's cluster (:class:`BacktestJob`) and how many start times; the recovery policies are
:mod:`deepvm_core.job.recovery` (re-exported here).

**The job** (``job-model.md``): ``K`` full segments of ``s = τ + δ`` hours, then a last segment
of ``s_last`` hours (no checkpoint after it); a restart of R hours after an interruption or a
move. Segment i spans the same epochs in every pool; its hours, R and prices follow the pool's
cluster (arrays of shape (configurations, pools) in :class:`BacktestJob`). Remaining hours of a
run at segment i in pool p: ``rem = (K - i) s_p + s_last,p`` (the current segment in full).

The replay itself (the rules of the contract, vectorised over start times and configurations)
is :func:`deepvm_core.job.backtest_replay.backtest`; what it returns, every run and their
summary per configuration, is :mod:`deepvm_core.job.backtest_runs`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields
from typing import Final

import numpy as np

from deepvm_core.arrays import FloatArray, IntArray
from deepvm_core.errors import DeepVMError
from deepvm_core.job.recovery import RECOVERY_POLICIES, RecoveryPolicy
from deepvm_core.market.trace import TraceError

__all__ = ["BACKTEST_BUDGET_SECONDS", "DEFAULT_STARTS", "MAX_STARTS", "RECOVERY_POLICIES",
           "BacktestBudgetError", "BacktestJob", "RecoveryPolicy", "TimeBudget", "starts_note"]
#: Start times per backtest by default, and the most accepted.
DEFAULT_STARTS: Final = 200
MAX_STARTS: Final = 100_000
#: The time budget of each stage of backtests in one request of the dashboard, seconds: the
#: plan's backtests of the candidates (past it the plan uses the closed form, and says so), and
#: the Spot markets page's replay of every policy (past it the page says what was stopped), so
#: a page run spends at most twice this in backtests. A backtest still going when it is spent
#: stops with :class:`BacktestBudgetError`; the pages cache that answer like any other (issue
#: 27). The CLI has none (its user waits for their own command).
BACKTEST_BUDGET_SECONDS: Final = 4.0


def starts_note(asked: int, done: int) -> str | None:
    """The sentence when fewer runs were replayed (``done``) than start times ``asked``: a
    trace has fewer ticks than that, and each tick starts one run at most; ``None`` otherwise
    (the CLI's warning and the Spot markets page's caption)."""
    if done >= asked:
        return None
    return (f"{asked:,} start times were asked; the traces have {done:,} ticks, and each tick "
            f"starts one run at most: {done:,} runs")


@dataclass(frozen=True)
class TimeBudget:
    """A time budget started at ``started`` (``time.monotonic()``), ``seconds`` long."""

    seconds: float
    started: float = field(default_factory=time.monotonic)

    def spent(self) -> bool:
        """True once the budget is used up."""
        return time.monotonic() - self.started > self.seconds


class BacktestBudgetError(DeepVMError):
    """A backtest stopped because its request's :class:`TimeBudget` was spent; the message
    says what was cut.

    Attributes:
        seconds: the budget, seconds. what: the backtest that was stopped, in words.
    """

    def __init__(self, seconds: float, what: str) -> None:
        self.seconds = seconds
        self.what = what
        super().__init__(f"{what} was stopped after {seconds:g} s, the time budget of the "
                         "backtests of one request")


@dataclass(frozen=True)
class BacktestJob:
    """The job on each configuration (rows) in each pool's cluster (columns).

    Attributes:
        full_segments: K, segments that end in a checkpoint (configurations,), >= 0.
        full_segment_hours: s = τ + δ, hours (configurations, pools), > 0.
        last_segment_hours: the last segment's compute hours (configurations, pools), > 0.
        restart_hours: R, hours (configurations, pools), >= 0.
        spot_vms: n, spot GPU VMs of the cluster (configurations, pools), >= 1.
        price_usd_per_hour: P, the cluster with spot VMs at the pool's price.
        on_demand_usd_per_hour: P_od, its on-demand part (billed while waiting).
        fallback_usd_per_hour: P_fallback, the spot VMs at on-demand price plus P_od.

    Raises:
        TraceError: shapes that differ or values out of range.
    """

    full_segments: IntArray
    full_segment_hours: FloatArray
    last_segment_hours: FloatArray
    restart_hours: FloatArray
    spot_vms: IntArray
    price_usd_per_hour: FloatArray
    on_demand_usd_per_hour: FloatArray
    fallback_usd_per_hour: FloatArray

    def __post_init__(self) -> None:
        k = np.atleast_1d(np.asarray(self.full_segments, dtype=np.int64))
        object.__setattr__(self, "full_segments", k)
        for f in fields(self)[1:]:
            dtype = np.int64 if f.name == "spot_vms" else np.float64
            value = np.asarray(getattr(self, f.name), dtype=dtype)
            if value.ndim < 2:
                value = np.broadcast_to(value.reshape(-1, 1) if value.ndim == 1 else value,
                                        (k.size, 1))
            object.__setattr__(self, f.name, np.array(value))
        shape = self.full_segment_hours.shape
        for f in fields(self)[1:]:
            if getattr(self, f.name).shape != shape:
                raise TraceError(f.name, f"shape {getattr(self, f.name).shape}, expected "
                                         f"{shape} (configurations, pools)")
        if shape[0] != k.size:
            raise TraceError("full_segments", f"{k.size} configurations, the arrays {shape[0]}")
        checks = (("full_segments", k >= 0), ("full_segment_hours",
                                              self.full_segment_hours > 0),
                  ("last_segment_hours", self.last_segment_hours > 0),
                  ("restart_hours", self.restart_hours >= 0), ("spot_vms", self.spot_vms >= 1),
                  ("price_usd_per_hour", self.price_usd_per_hour >= 0),
                  ("on_demand_usd_per_hour", self.on_demand_usd_per_hour >= 0),
                  ("fallback_usd_per_hour", self.fallback_usd_per_hour >= 0))
        for name, ok in checks:
            value = getattr(self, name)
            bad = ~ok | (~np.isfinite(value) if value.dtype.kind == "f" else False)
            if np.any(bad):
                where = np.argwhere(bad)[0]
                raise TraceError(name, f"{value[tuple(where)]!r} at {tuple(int(i) for i in where)}"
                                       ": out of range (finite, > 0 for hours, >= 0 else)")

    @property
    def configurations(self) -> int:
        """Number of configurations (rows)."""
        return int(self.full_segments.size)

    @property
    def pools(self) -> int:
        """Number of pools (columns)."""
        return int(self.full_segment_hours.shape[1])

    def first_pools(self, count: int) -> BacktestJob:
        """The first ``count`` pools only (``wait`` replays the first pool alone)."""
        return BacktestJob(**{f.name: getattr(self, f.name) if f.name == "full_segments"
                              else getattr(self, f.name)[:, :count] for f in fields(self)})

    def rows(self, which: IntArray) -> BacktestJob:
        """The configurations ``which`` only."""
        return BacktestJob(**{f.name: getattr(self, f.name)[which] for f in fields(self)})

