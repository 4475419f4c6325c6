"""A deadline policy offered where a plan's deadline is at risk (issue 26, item 5).

When a plan has a deadline and its chosen cluster's chance to meet it is under a target
(:data:`DEADLINE_TARGET`), the deadline policies of :mod:`deepvm_core.job.recovery`
(:data:`~deepvm_core.job.recovery.DEADLINE_POLICIES`) are replayed by the backtest
(:func:`~deepvm_core.job.backtest_replay.backtest`, the one driver of their rules) and priced
(:class:`PolicyPrice`: the share of runs that meet the deadline, the mean and P90 cost, the share
of the cluster's hours bought on demand). The offer is the **cheapest** (least mean cost) of
those whose share meets the target (:func:`best_policy`; ties: the order of
``DEADLINE_POLICIES``), or none.

The runs are replays on the plan's spot traces where it has them, else on availability paths
drawn from the job model's assumptions (:func:`model_traces`: exponential up times of mean MTBI
and capacity waits of mean W, the scenarios of the plan's Monte Carlo, rounded to ticks of
:func:`model_tick_hours`), so that no rule is copied: the same policies, the same backtest.
:mod:`deepvm_core.pipeline.deadline_offer` makes an offer from a plan. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from deepvm_core.arrays import FloatArray
from deepvm_core.job.backtest import DEFAULT_STARTS, BacktestJob
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.job.backtest_runs import DEADLINE_TOLERANCE_HOURS, BacktestRuns
from deepvm_core.job.recovery import DEADLINE_POLICIES, DEADLINE_POLICY_WORDS, RecoveryPolicy
from deepvm_core.market.synthetic import renewal_paths
from deepvm_core.market.trace import SpotTrace
from deepvm_core.text import duration, usd
from deepvm_core.units import SECONDS_PER_HOUR

#: The chance to meet a deadline under which a plan is offered a deadline policy (and which the
#: offered policy must reach), a share of runs.
DEADLINE_TARGET: Final = 0.95
#: Runs per policy: start times on traces, or paths drawn from the job model.
OFFER_RUNS: Final = DEFAULT_STARTS
#: Job-model paths: ticks per shortest mean spell (MTBI, W, R, the deadline), so that rounding
#: spells up to whole ticks moves the figures little...
TICKS_PER_SPELL: Final = 20
#: ... and at most this many ticks per path (a long deadline takes longer ticks).
MAX_PATH_TICKS: Final = 4_000


@dataclass(frozen=True)
class PolicyPrice:
    """One deadline policy's runs, priced.

    Attributes:
        policy: the recovery policy.
        runs: runs replayed.
        deadline_met: share of the runs that meet the deadline.
        mean_cost_usd, cost_usd_p90: the runs' mean and P90 cost, USD.
        on_demand_share: the share of the cluster's running hours (spot and on demand, restarts
            and lost work included) bought on demand, over all runs.
        mean_makespan_hours: the runs' mean makespan, hours.
    """

    policy: RecoveryPolicy
    runs: int
    deadline_met: float
    mean_cost_usd: float
    cost_usd_p90: float
    on_demand_share: float
    mean_makespan_hours: float


def policy_price(runs: BacktestRuns) -> PolicyPrice:
    """The price of the first configuration's runs (a backtest with a deadline)."""
    if runs.deadline_hours is None:
        raise ValueError("policy_price: the runs need a deadline")
    mk = runs.makespan_hours[0]
    od, spot = runs.on_demand_hours[0], runs.spot_hours[0]
    running = float(np.sum(od) + np.sum(spot))
    return PolicyPrice(
        policy=runs.policy, runs=int(mk.size),
        deadline_met=float(np.mean(mk <= runs.deadline_hours + DEADLINE_TOLERANCE_HOURS)),
        mean_cost_usd=float(np.mean(runs.cost_usd[0])),
        cost_usd_p90=float(np.percentile(runs.cost_usd[0], 90.0)),
        on_demand_share=float(np.sum(od)) / running if running > 0 else 0.0,
        mean_makespan_hours=float(np.mean(mk)))


def best_policy(prices: Sequence[PolicyPrice], target: float) -> PolicyPrice | None:
    """The least mean cost among ``prices`` that meet the deadline in at least ``target`` of
    their runs (ties: the earlier in ``prices``), or ``None``."""
    meeting = [p for p in prices if p.deadline_met >= target]
    return min(meeting, key=lambda p: p.mean_cost_usd) if meeting else None


def price_deadline_policies(traces: Sequence[SpotTrace], job: BacktestJob, deadline_hours: float,
                            starts: int = OFFER_RUNS) -> tuple[PolicyPrice, ...]:
    """Every deadline policy replayed on ``traces`` (failover order) from ``starts`` start times,
    priced (the first configuration of ``job``), in the order of ``DEADLINE_POLICIES``."""
    return tuple(policy_price(backtest(list(traces), job, policy=policy,
                                       deadline_hours=deadline_hours, starts=starts))
                 for policy in DEADLINE_POLICIES)


def model_tick_hours(mtbi_hours: FloatArray, wait_hours: FloatArray, restart_hours: float,
                     deadline_hours: float) -> float:
    """The tick of job-model paths: the shortest of the mean up time, the mean wait (when
    > 0), R (when > 0) and the deadline, over :data:`TICKS_PER_SPELL`; at least the deadline
    over :data:`MAX_PATH_TICKS`."""
    spells = [float(np.min(mtbi_hours)), deadline_hours]
    waits = np.asarray(wait_hours, dtype=np.float64)
    if np.any(waits > 0):
        spells.append(float(np.min(waits[waits > 0])))
    if restart_hours > 0:
        spells.append(restart_hours)
    return max(min(spells) / TICKS_PER_SPELL, deadline_hours / MAX_PATH_TICKS)


def model_traces(mtbi_hours: FloatArray, wait_hours: FloatArray, restart_hours: float,
                 deadline_hours: float, rng: np.random.Generator,
                 runs: int = OFFER_RUNS) -> SpotTrace:
    """Availability paths drawn from the job model, as one trace of ``runs`` paths (a backtest
    of ``runs`` starts runs one on each, :func:`~deepvm_core.market.synthetic.renewal_paths`):
    the scenarios ``(MTBI_s, W_s)`` (equally likely; a plan's Monte Carlo scenarios) take the
    paths in turn. A path is as long as the deadline and a tick, in ticks of
    :func:`model_tick_hours`: a deadline policy's run ends by then (one that cannot meet the
    deadline goes on demand at once)."""
    mtbi = np.asarray(mtbi_hours, dtype=np.float64).ravel()
    waits = np.asarray(wait_hours, dtype=np.float64).ravel()
    tick = model_tick_hours(mtbi, waits, restart_hours, deadline_hours)
    which = np.arange(runs) % mtbi.size
    return renewal_paths(mtbi[which], waits[which],
                         path_ticks=math.ceil(deadline_hours / tick) + 1,
                         gap_seconds=tick * SECONDS_PER_HOUR, rng=rng)


@dataclass(frozen=True)
class DeadlineOffer:
    """A plan whose deadline is at risk, and the deadline policy offered.

    Attributes:
        deadline_hours: D, hours. target: the share of runs to meet it.
        chance: the plan's chance to meet it (under ``target``).
        on_traces: the policies were replayed on the plan's spot traces (``pools``, failover
            order, their recent window); else on paths drawn from the job model.
        pools: the pools replayed (``TYPE@ZONE``), empty on job-model paths.
        mtbi_hours, wait_hours: the job model's MTBI and W of the chosen cluster (its central
            scenario; NaN on traces).
        considered: every deadline policy, priced, in the order of ``DEADLINE_POLICIES``.
        offer: the cheapest of them that meets the target, or ``None``.
        on_demand_cost_usd, on_demand_makespan_hours: the same cluster on demand (the plan's
            baseline).
    """

    deadline_hours: float
    target: float
    chance: float
    on_traces: bool
    pools: tuple[str, ...]
    mtbi_hours: float
    wait_hours: float
    considered: tuple[PolicyPrice, ...]
    offer: PolicyPrice | None
    on_demand_cost_usd: float
    on_demand_makespan_hours: float

    def runs_in_words(self) -> str:
        """Where the runs come from: ``200 replays on p3.2xlarge@us-west-2a`` or ``200 runs on
        availability drawn from the job model (MTBI 1.9 h, W 66 min)``."""
        runs = self.considered[0].runs if self.considered else 0
        if self.on_traces:
            return f"{runs} replays on {', '.join(self.pools)}"
        return (f"{runs} runs on availability drawn from the job model (MTBI "
                f"{duration(self.mtbi_hours)}, W {duration(self.wait_hours)})")

    def sentence(self) -> str:
        """The offer in one sentence, priced (the Plan card's and ``deepvm plan``'s)."""
        risk = (f"The {self.deadline_hours:g} h deadline is at risk: a {self.chance:.0%} chance, "
                f"under the {self.target:.0%} target.")
        o = self.offer
        if o is not None:
            return (f"{risk} The {o.policy} policy ({DEADLINE_POLICY_WORDS[o.policy]}) meets "
                    f"it in {o.deadline_met:.0%} of {self.runs_in_words()}: about "
                    f"{usd(o.mean_cost_usd)} (P90 {usd(o.cost_usd_p90)}), "
                    f"{o.on_demand_share:.0%} of the hours on demand.")
        best = max(self.considered, key=lambda p: p.deadline_met)
        return (f"{risk} No deadline policy meets it in {self.target:.0%} of "
                f"{self.runs_in_words()} (at best {best.policy}, {best.deadline_met:.0%}); the "
                f"same cluster on demand takes {duration(self.on_demand_makespan_hours)} and "
                f"costs {usd(self.on_demand_cost_usd)}.")

    def lines(self) -> tuple[str, ...]:
        """Each policy considered, priced, one line each."""
        return tuple(f"{p.policy}: meets it in {p.deadline_met:.0%}, about "
                     f"{usd(p.mean_cost_usd)} (P90 {usd(p.cost_usd_p90)}), "
                     f"{p.on_demand_share:.0%} of the hours on demand"
                     for p in self.considered)
