"""What a ledger says (``deepvm ledger PLAN``, the dashboard's Running jobs page): the job's cost
so far, spot and on-demand hours, reclaims, progress and the counterfactuals, as one
:class:`LedgerSummary`, a table and a JSON document. Pure: it reads a
:class:`~deepvm_core.cloud.fleet.ledger.Ledger`, never AWS."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from deepvm_core.cloud.fleet.ledger import Ledger
from deepvm_core.cloud.fleet.ledger_figures import (
    Counterfactual,
    cost_usd,
    observations,
    on_demand_counterfactual,
    policy_counterfactuals,
    reclaims,
    worker_hours,
)
from deepvm_core.cloud.fleet.ledger_file import record_to_dict
from deepvm_core.cloud.fleet.watch_state import fold


@dataclass(frozen=True)
class LedgerSummary:
    """A ledger's figures.

    Attributes:
        plan_id, policy, summary: the plan, its policy and configuration.
        elapsed_hours: from the start to the last observation (or the job's end).
        cost_usd: the cost so far. spot_hours, on_demand_hours: hours the workers ran there.
        reclaims: spot reclaims seen. interruptions: attempts lost (the backtest's count).
        work_done_hours, job_hours: progress (checkpointed work) and the job's hours.
        progress_source: ``file`` when a progress file said it, else ``estimate``.
        done: the job ended. makespan_hours: when (``None`` while it runs).
        deadline_hours: D or ``None``. fell_back: it went on demand.
        plan_makespan_hours, plan_cost_usd: the plan's P10-P90 (``None`` where not given).
        counterfactuals: on demand first, then each policy on the observed availability.
    """

    plan_id: str
    policy: str
    summary: str
    elapsed_hours: float
    cost_usd: float
    spot_hours: float
    on_demand_hours: float
    reclaims: int
    interruptions: int
    work_done_hours: float
    job_hours: float
    progress_source: str
    done: bool
    makespan_hours: float | None
    deadline_hours: float | None
    fell_back: bool
    plan_makespan_hours: tuple[float | None, float | None]
    plan_cost_usd: tuple[float | None, float | None]
    counterfactuals: tuple[Counterfactual, ...]

    @property
    def progress(self) -> float:
        """Work done as a share of the job, 0 to 1."""
        return min(self.work_done_hours / self.job_hours, 1.0) if self.job_hours else 1.0


def summarize(ledger: Ledger) -> LedgerSummary:
    """Every figure of ``ledger`` (module docstring)."""
    setup = ledger.setup
    run = fold(ledger).stepper
    obs = observations(ledger)
    last = obs[-1].time if obs else setup.started_at
    done = ledger.done
    elapsed = ledger.hours(done.time if done else last)
    from_file = any(o.progress_hours is not None for o in obs)
    return LedgerSummary(
        plan_id=setup.plan_id, policy=setup.policy, summary=setup.summary,
        elapsed_hours=elapsed, cost_usd=cost_usd(ledger),
        spot_hours=worker_hours(ledger, "spot"),
        on_demand_hours=worker_hours(ledger, "on-demand"), reclaims=reclaims(ledger),
        interruptions=run.interruptions, work_done_hours=run.work_done_hours,
        job_hours=setup.job_hours, progress_source="file" if from_file else "estimate",
        done=run.done_at is not None, makespan_hours=run.done_at,
        deadline_hours=setup.deadline_hours, fell_back=run.fell_back,
        plan_makespan_hours=(setup.plan_makespan_p10_hours, setup.plan_makespan_p90_hours),
        plan_cost_usd=(setup.plan_cost_p10_usd, setup.plan_cost_p90_usd),
        counterfactuals=(on_demand_counterfactual(setup), *policy_counterfactuals(ledger)))


def _hours(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} h"


def _usd(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} USD"


def summary_lines(s: LedgerSummary) -> list[str]:
    """The summary as text (``deepvm ledger PLAN``)."""
    state = (f"done in {s.makespan_hours:.2f} h" if s.done and s.makespan_hours is not None
             else f"running for {s.elapsed_hours:.2f} h")
    lines = [f"Plan {s.plan_id}: {s.summary}; policy {s.policy}"
             + (f", deadline {s.deadline_hours:g} h" if s.deadline_hours is not None else "")
             + f"; {state}",
             f"Cost so far {s.cost_usd:.2f} USD; workers on spot {s.spot_hours:.2f} h, on "
             f"demand {s.on_demand_hours:.2f} h; {s.reclaims} reclaim(s), "
             f"{s.interruptions} interruption(s)"
             + ("; fell back to on demand" if s.fell_back else ""),
             f"Progress {s.progress:.0%} ({s.work_done_hours:.2f} of {s.job_hours:.2f} h, "
             + ("from the progress file)" if s.progress_source == "file"
                else "estimated from running time: no progress file)")]
    lo, hi = s.plan_makespan_hours
    clo, chi = s.plan_cost_usd
    if lo is not None and hi is not None:
        lines.append(f"Plan: makespan P10-P90 {lo:.2f}-{hi:.2f} h"
                     + (f", cost {clo:.2f}-{chi:.2f} USD" if clo is not None
                        and chi is not None else ""))
    rows = [("counterfactual", "makespan", "cost", "note")]
    rows += [(c.name, _hours(c.makespan_hours), _usd(c.cost_usd), c.note)
             for c in s.counterfactuals]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines.append("")
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
              for r in rows]
    lines.append("(the policies replayed by the backtest on the availability the controller "
                 "observed)")
    return lines


def record_rows(ledger: Ledger) -> list[tuple[str, ...]]:
    """One row per record: hours, kind, what, type, zone, market, USD/hour."""
    rows: list[tuple[str, ...]] = []
    for r in ledger.records:
        d = record_to_dict(r)
        t = f"{ledger.hours(r.time):.3f}"
        if d["kind"] == "observe":
            running = [i for i in d["instances"] if i["state"] in ("pending", "running")]
            price = sum(i["price_usd_per_hour"] for i in running)
            types = sorted({f"{i['instance_type']} {i['market']}" for i in running})
            zones = sorted({i["zone"] for i in running})
            rows.append((t, "observe", f"{len(running)} running", ", ".join(types),
                         ", ".join(zones), "", f"{price:.4f}"))
        elif d["kind"] == "act":
            rows.append((t, "act", d["outcome"], d["instance_type"], d["zone"], d["market"],
                         f"{d['count'] * d['price_usd_per_hour']:.4f}" if d["count"] else ""))
        else:
            rows.append((t, d["kind"], d.get("source", ""), "", "", "", ""))
    return rows


def ledger_table(ledger: Ledger) -> list[str]:
    """The records as a table."""
    rows = [("hours", "kind", "what", "type", "zone", "market", "USD/h"), *record_rows(ledger)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in rows]


def summary_to_dict(s: LedgerSummary) -> dict[str, Any]:
    """The summary as JSON."""
    return {
        "plan_id": s.plan_id, "policy": s.policy, "summary": s.summary,
        "elapsed_hours": s.elapsed_hours, "cost_usd": s.cost_usd, "spot_hours": s.spot_hours,
        "on_demand_hours": s.on_demand_hours, "reclaims": s.reclaims,
        "interruptions": s.interruptions, "work_done_hours": s.work_done_hours,
        "job_hours": s.job_hours, "progress_source": s.progress_source, "done": s.done,
        "makespan_hours": s.makespan_hours, "deadline_hours": s.deadline_hours,
        "fell_back": s.fell_back,
        "plan_makespan_hours_p10_p90": list(s.plan_makespan_hours),
        "plan_cost_usd_p10_p90": list(s.plan_cost_usd),
        "counterfactuals": [{"name": c.name, "makespan_hours": c.makespan_hours,
                             "cost_usd": c.cost_usd, "note": c.note}
                            for c in s.counterfactuals]}


def ledger_to_dict(ledger: Ledger) -> dict[str, Any]:
    """``deepvm ledger PLAN --format json``: the summary and every record."""
    return {"kind": "ledger", "summary": summary_to_dict(summarize(ledger)),
            "records": [record_to_dict(ledger.setup)]
            + [record_to_dict(r) for r in ledger.records]}
