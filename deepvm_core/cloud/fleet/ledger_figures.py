"""What is read from a watched plan's ledger (issue 28), pure functions of a
:class:`~deepvm_core.cloud.fleet.ledger.Ledger` that
:func:`~deepvm_core.cloud.fleet.ledger_report.summarize` puts together with the job's progress
(:class:`~deepvm_core.cloud.fleet.watch_state.JobTracker` folded over the records): the cost so
far (each observation's running instances at their hourly prices until the next observation,
the last one until the job's end when it is done), the spot and on-demand worker hours, the
reclaims seen (observations where a spot worker is newly ``terminated`` or ``stopped`` with
``Server.SpotInstanceTermination``), and the counterfactuals: the same cluster on demand from
the start, and every other policy replayed by the backtest on the availability the controller
observed (:func:`observed_up`).

**Observed availability** (steps: :func:`~deepvm_core.cloud.fleet.ledger.step_of`). A pool is
up at step k when the plan's workers ran there or a launch there succeeded, down when they were
reclaimed under the job or a launch there was refused; a step where nothing was learnt about a
pool keeps its last known state, and a pool never seen is down (a counterfactual cannot use a
pool no one saw up).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from deepvm_core.cloud.fleet.ledger import Action, Ledger, Observation, WatchSetup, step_of
from deepvm_core.units import SECONDS_PER_HOUR

#: The roles of the workers (spot, or on demand after a fallback); the others are the plan's
#: on-demand part.
WORKER_ROLES: Final = ("spot-worker", "fallback-worker")


def observations(ledger: Ledger) -> list[Observation]:
    """The observations, in order."""
    return [r for r in ledger.records if isinstance(r, Observation)]


def actions(ledger: Ledger) -> list[Action]:
    """The actions, in order."""
    return [r for r in ledger.records if isinstance(r, Action)]


def _billed_spans(ledger: Ledger) -> Iterable[tuple[Observation, float]]:
    """Each observation with the hours until the next one (the last: until the job's end when
    it is done, else 0)."""
    obs = observations(ledger)
    done = ledger.done
    for i, o in enumerate(obs):
        if done is not None and o.time >= done.time:
            break
        end = obs[i + 1].time if i + 1 < len(obs) else (done.time if done else o.time)
        if done is not None:
            end = min(end, done.time)
        yield o, max(end - o.time, 0.0) / SECONDS_PER_HOUR


def cost_usd(ledger: Ledger) -> float:
    """The cost so far: every running instance at its hourly price, span by span."""
    return sum(sum(i.price_usd_per_hour for i in o.instances if i.running) * hours
               for o, hours in _billed_spans(ledger))


def worker_hours(ledger: Ledger, market: str) -> float:
    """Hours during which the workers ran on ``market`` (``spot`` or ``on-demand``)."""
    return sum(hours for o, hours in _billed_spans(ledger)
               if any(i.running and i.market == market and i.role in WORKER_ROLES
                      for i in o.instances))


def reclaims(ledger: Ledger) -> int:
    """Observations at which a spot worker was newly seen reclaimed."""
    seen: set[str] = set()
    count = 0
    for o in observations(ledger):
        new = {i.instance_id for i in o.instances if i.reclaimed} - seen
        count += bool(new)
        seen |= new
    return count


def observed_up(ledger: Ledger) -> list[list[bool]]:
    """Per pool, per step from 0 to the last step observed: up or down as observed (module
    docstring: the last known state carried forward, never seen: down)."""
    setup = ledger.setup
    obs = observations(ledger)
    if not obs:
        return [[] for _ in setup.pools]
    steps = step_of(ledger, obs[-1].time) + 1
    known: list[list[bool | None]] = [[None] * steps for _ in setup.pools]
    for r in ledger.records:
        k = step_of(ledger, r.time)
        if k >= steps:
            continue
        if isinstance(r, Observation):
            for p, up in enumerate(r.pools_up):
                if up is not None:
                    known[p][k] = up
        elif isinstance(r, Action) and r.action >= 0 and r.outcome in ("refused", "launched"):
            known[r.action][k] = r.outcome == "launched"
    out: list[list[bool]] = []
    for row in known:
        last = False
        filled = []
        for value in row:
            last = last if value is None else value
            filled.append(last)
        out.append(filled)
    return out


@dataclass(frozen=True)
class Counterfactual:
    """What another way of running the job would have made of the same market.

    Attributes:
        name: ``on demand`` or a policy's name.
        makespan_hours, cost_usd: its result, ``None`` when it did not finish within the
            observed window (or could not run: ``note`` says why).
        note: a few words (``""`` when none).
    """

    name: str
    makespan_hours: float | None
    cost_usd: float | None
    note: str = ""


def on_demand_counterfactual(setup: WatchSetup) -> Counterfactual:
    """The same cluster on demand from the start: every segment once, at the fallback price."""
    return Counterfactual("on demand", setup.job_hours,
                          setup.job_hours * setup.fallback_usd_per_hour)


def policy_counterfactuals(ledger: Ledger,
                           policies: Sequence[str] | None = None) -> list[Counterfactual]:
    """Every policy (``policies``, default all) replayed by the backtest on the observed
    availability (:func:`observed_up`, one start at step 0); a run that ends after the last
    observed step is reported as not finished (the backtest's traces repeat)."""
    import numpy as np

    from deepvm_core.job.backtest_replay import backtest
    from deepvm_core.job.recovery import DEADLINE_POLICIES, RECOVERY_POLICIES
    from deepvm_core.market.trace import SpotTrace, TraceError

    setup = ledger.setup
    up = observed_up(ledger)
    steps = len(up[0]) if up else 0
    names = list(RECOVERY_POLICIES if policies is None else policies)
    if steps == 0:
        return [Counterfactual(p, None, None, "nothing observed yet") for p in names]
    width = len(setup.pools)
    job = setup.backtest_job()
    traces = [SpotTrace(source=f"observed {zone}", gap_seconds=setup.interval_seconds,
                        counts=np.asarray(row, dtype=np.int64))
              for zone, row in zip(setup.pools, up, strict=True)]
    window = steps * setup.tick_hours
    out = []
    for name in names:
        if name in DEADLINE_POLICIES and setup.deadline_hours is None:
            out.append(Counterfactual(name, None, None, "needs a deadline"))
            continue
        used = 1 if name == "wait" else width
        try:
            runs = backtest(traces[:used], job.first_pools(used), policy=name,  # type: ignore[arg-type]
                            deadline_hours=setup.deadline_hours, starts=1)
        except TraceError as exc:
            out.append(Counterfactual(name, None, None, exc.reason))
            continue
        makespan = float(runs.makespan_hours[0, 0])
        if makespan > window + 1e-9:
            out.append(Counterfactual(name, None, None, "not finished within the "
                                      f"{window:.2f} h observed"))
        else:
            out.append(Counterfactual(name, makespan, float(runs.cost_usd[0, 0])))
    return out
