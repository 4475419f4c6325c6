"""The records of a watched plan's ledger (issue 28), and the ledger read back
(:class:`Ledger`). The file they are written to and read from is
:mod:`~deepvm_core.cloud.fleet.ledger_file`; what is read from a ledger (cost, hours, reclaims,
the observed availability and the counterfactuals) is
:mod:`~deepvm_core.cloud.fleet.ledger_figures`.

**Records** (one JSON object a line, ``kind`` first, ``time`` in seconds since the epoch):

* ``start``: what ``deepvm watch`` controls, written once (:class:`WatchSetup`): the plan, the
  region, the policy and deadline, the polling interval, the pools' zones (failover order), the
  job the plan priced (segments, R) and its prices (USD/hour), the plan's P10-P90.
* ``observe``: what ``DescribeInstances`` showed at a step (:class:`Observation`): every
  instance of the plan with its type, zone, market, state, state reason and hourly price; which
  pools are known up or down; the work done from the progress file (hours), when there is one.
* ``act``: an action (:class:`Action`): spot in a zone, on demand, wait or keep, with the type,
  zone, market, count, hourly price per VM and its outcome (``launched``, ``refused``: no
  capacity, ``kept``, ``waiting``, ``dry-run``).
* ``done``: the job finished (by the progress file or the estimate).

**Steps.** Step k is at ``start + k * interval`` (:func:`step_of`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from deepvm_core.units import SECONDS_PER_HOUR

if TYPE_CHECKING:
    from deepvm_core.job.backtest import BacktestJob

#: The state reason of a reclaimed spot instance.
SPOT_RECLAIM_REASON: Final = "Server.SpotInstanceTermination"


@dataclass(frozen=True)
class WatchSetup:
    """The ``start`` record: what is watched and what the plan priced.

    Attributes:
        plan_id, region, plan_file: the plan.
        policy: the recovery policy; deadline_hours: D or ``None``.
        interval_seconds: the polling interval (the tick g of the policies).
        started_at: seconds since the epoch; step k is at ``started_at + k * interval``.
        instance_type, spot_vms: the workers. pools: their zones, failover order.
        full_segments, segment_hours, last_segment_hours, restart_hours: the job (hours).
        spot_usd_per_hour: the whole cluster on spot, per pool, USD/hour.
        on_demand_part_usd_per_hour: the anchor or memory nodes (billed while waiting).
        fallback_usd_per_hour: the cluster with its workers on demand.
        on_demand_part: ``(role, type, count)`` of the on-demand part, or ``None``.
        plan_makespan_p10_hours ... plan_cost_p90_usd: the plan's range (``None``: not given).
        summary: the configuration in words.
    """

    plan_id: str
    region: str
    plan_file: str
    policy: str
    deadline_hours: float | None
    interval_seconds: float
    started_at: float
    instance_type: str
    spot_vms: int
    pools: tuple[str, ...]
    full_segments: int
    segment_hours: float
    last_segment_hours: float
    restart_hours: float
    spot_usd_per_hour: tuple[float, ...]
    on_demand_part_usd_per_hour: float
    fallback_usd_per_hour: float
    on_demand_part: tuple[str, str, int] | None = None
    plan_makespan_p10_hours: float | None = None
    plan_makespan_p90_hours: float | None = None
    plan_cost_p10_usd: float | None = None
    plan_cost_p90_usd: float | None = None
    summary: str = ""

    @property
    def tick_hours(self) -> float:
        """The interval, hours."""
        return self.interval_seconds / SECONDS_PER_HOUR

    @property
    def job_hours(self) -> float:
        """Every segment's hours: ``K s + s_last``."""
        return self.full_segments * self.segment_hours + self.last_segment_hours

    def spot_vm_usd_per_hour(self, pool: int) -> float:
        """One spot worker in ``pool``."""
        return (self.spot_usd_per_hour[pool] - self.on_demand_part_usd_per_hour) / self.spot_vms

    @property
    def on_demand_vm_usd_per_hour(self) -> float:
        """One worker on demand."""
        return (self.fallback_usd_per_hour - self.on_demand_part_usd_per_hour) / self.spot_vms

    def backtest_job(self) -> BacktestJob:
        """The job as the backtest replays it: one configuration, the same segments and R in
        every pool, each pool at its spot price."""
        import numpy as np

        from deepvm_core.job.backtest import BacktestJob

        width = len(self.pools)
        return BacktestJob(
            full_segments=np.array([self.full_segments]),
            full_segment_hours=np.full((1, width), self.segment_hours),
            last_segment_hours=np.full((1, width), self.last_segment_hours),
            restart_hours=np.full((1, width), self.restart_hours),
            spot_vms=np.full((1, width), self.spot_vms, dtype=np.int64),
            price_usd_per_hour=np.array([self.spot_usd_per_hour]),
            on_demand_usd_per_hour=np.full((1, width), self.on_demand_part_usd_per_hour),
            fallback_usd_per_hour=np.full((1, width), self.fallback_usd_per_hour))


@dataclass(frozen=True)
class Seen:
    """One instance in an observation (``market``: ``spot`` or ``on-demand``; ``reason``: the
    state reason code, ``""`` when none)."""

    instance_id: str
    role: str
    instance_type: str
    zone: str
    market: str
    state: str
    price_usd_per_hour: float
    reason: str = ""

    @property
    def running(self) -> bool:
        """Billed as running (pending or running)."""
        return self.state in ("pending", "running")

    @property
    def reclaimed(self) -> bool:
        """A spot instance AWS took back."""
        return self.state in ("terminated", "stopped", "shutting-down", "stopping") and \
            self.reason == SPOT_RECLAIM_REASON


@dataclass(frozen=True)
class Observation:
    """An ``observe`` record: the plan's instances at ``time``; ``pools_up`` per pool (``None``:
    not known at this step); ``progress_hours``: work done from the progress file, else
    ``None``."""

    time: float
    instances: tuple[Seen, ...]
    pools_up: tuple[bool | None, ...]
    progress_hours: float | None = None


@dataclass(frozen=True)
class Action:
    """An ``act`` record. ``action``: a pool index, -1 on demand, -2 wait (the policies'
    numbers); ``outcome``: ``launched``, ``refused``, ``kept``, ``waiting``, ``terminated``,
    ``dry-run``."""

    time: float
    action: int
    outcome: str
    zone: str = ""
    instance_type: str = ""
    market: str = ""
    count: int = 0
    price_usd_per_hour: float = 0.0
    instance_ids: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class Done:
    """A ``done`` record: the job ended at ``time`` (``source``: ``file`` or ``estimate``)."""

    time: float
    source: str


Record = WatchSetup | Observation | Action | Done


@dataclass(frozen=True)
class Ledger:
    """A ledger read back: its setup and the records after it, in order."""

    setup: WatchSetup
    records: tuple[Observation | Action | Done, ...] = field(default=())

    def hours(self, time: float) -> float:
        """``time`` as hours since the watch started."""
        return (time - self.setup.started_at) / SECONDS_PER_HOUR

    @property
    def done(self) -> Done | None:
        """The ``done`` record, if any."""
        return next((r for r in self.records if isinstance(r, Done)), None)


def step_of(ledger: Ledger, time: float) -> int:
    """The step a time belongs to (the nearest grid point at or before it)."""
    return math.floor((time - ledger.setup.started_at) / ledger.setup.interval_seconds
                          + 1e-6)
