"""Rolling-origin evaluation of the forecasts (issue 25): how well each model, fitted on the
days before an origin, predicts the backtest of the days after it, on every development trace.

Reads the development traces from ``$DEEPVM_DEV_TRACES`` (default: the shared folder) by path;
they are not part of the project. ``--write-data`` writes the cases to
``data/rolling-forecast.csv`` (results, not traces), which the Method page and docs/method.md
show through :func:`deepvm_core.job.rolling.rolling_tables`.

The design (:mod:`deepvm_core.job.rolling` holds its constants):

* **Jobs**: one spot VM, 5, 20 and 60 compute hours in segments of one hour plus a 36 s
  checkpoint, restart 6 min.
* **Origins**: every 2 days from day 7 to 7 days before the end; a trace shorter than two
  weeks: every day with at least 3 days on either side.
* **Forecast**: from the window before the origin (the last 7 days, the default window), each
  model of :mod:`deepvm_core.job.forecast` (closed form, renewal, replay), with its band (a
  mixture over sub-windows); and the plan's forecast without a trace (the >20 % bucket's
  defaults and spread, :mod:`deepvm_core.job.spread`), the same at every origin.
* **Truth**: the ``wait`` backtest (200 starts) of the next 7 days (cyclic within them); a case
  whose next days never let the job run is counted and left out.
* **Scores** per pool and overall: median |error| of the mean makespan, the share of cases
  within 15 %, and the coverage of the P10-P90 band: the share of the truth's runs inside it
  (nominal 80 %), averaged over cases.

``--windows`` also prints the replay's median |error| for windows of 3 and 7 days and the whole
past (``--window-days``'s choice). ``--plan`` only times ``deepvm plan --pool`` as a process for
each model.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from dev_traces import trace_files

from deepvm_core.job.backtest import BacktestJob
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.job.closed_form import expected_jobs
from deepvm_core.job.forecast import FORECAST_MODELS, forecast
from deepvm_core.job.inputs import JobInputs
from deepvm_core.job.rolling import (
    BUCKET_MODEL,
    CSV_COLUMNS,
    EVALUATION_BUCKET,
    JOB_HOURS,
    RESTART_HOURS,
    ROLLING_CSV,
    SEGMENT_HOURS,
    STALL_HOURS,
    TRUTH_STARTS,
    origins,
    rolling_tables,
)
from deepvm_core.job.spread import bucket_scenarios, simulate_scenarios
from deepvm_core.market.mtbi import ADVISOR_BUCKET_MTBI_HOURS, ADVISOR_BUCKET_WAIT_HOURS
from deepvm_core.market.trace import SpotTrace, TraceError, load_trace
from deepvm_core.market.window import DEFAULT_WINDOW_DAYS, SUB_WINDOW_DAYS, part
from deepvm_core.units import SECONDS_PER_DAY, SECONDS_PER_HOUR

#: Sub-window length in days for an experiment (``BENCH_SUB_WINDOW_DAYS``); the core's default
#: otherwise.
SUB_DAYS = float(os.environ.get("BENCH_SUB_WINDOW_DAYS", SUB_WINDOW_DAYS))
OUT = Path(__file__).resolve().parents[1] / "data" / ROLLING_CSV


def reference_job(hours: float) -> BacktestJob:
    """``hours`` of compute on one spot VM: full segments of one hour plus the stall, the
    rest last; price 1 USD/h, nothing on demand (the makespan is what is scored)."""
    full = int(np.ceil(hours / SEGMENT_HOURS - 1e-9)) - 1
    last = hours - full * SEGMENT_HOURS
    return BacktestJob(np.array([full]), np.array([[SEGMENT_HOURS + STALL_HOURS]]),
                       np.array([[last]]), np.array([[RESTART_HOURS]]), np.array([[1]]),
                       np.array([[1.0]]), np.array([[0.0]]), np.array([[1.0]]))


def bucket_forecast(job: BacktestJob, seed: int) -> tuple[float, float, float]:
    """Mean, P10 and P90 of the plan without a trace: the >20 % bucket's MTBI and W, its spread
    in the band (what ``plan`` shows for a p3.2xlarge with one spot VM)."""
    s = float(job.full_segment_hours[0, 0]) * SECONDS_PER_HOUR
    last = float(job.last_segment_hours[0, 0]) * SECONDS_PER_HOUR
    k = int(job.full_segments[0])
    plan = JobInputs(epoch_seconds=np.array([s]), compute_seconds=np.array([k * s + last]),
                     checkpoint_stall_seconds=np.zeros(1),
                     checkpoint_interval_seconds=np.array([s]),
                     checkpoints=np.array([k]), last_segment_seconds=np.array([last]),
                     interruption_rate_per_hour=np.array(
                         [1 / ADVISOR_BUCKET_MTBI_HOURS[EVALUATION_BUCKET]]),
                     restart_hours=np.array([RESTART_HOURS]),
                     wait_hours=np.array([ADVISOR_BUCKET_WAIT_HOURS[EVALUATION_BUCKET]]),
                     price_usd_per_hour=np.ones(1), on_demand_usd_per_hour=np.zeros(1))
    mean = float(expected_jobs(plan).expected_makespan_hours[0])
    rates, waits = bucket_scenarios(plan, [True], [True])
    mc = simulate_scenarios(plan, rates, waits, np.random.default_rng(seed), trials=4000)
    return mean, float(mc.makespan_hours_p10[0]), float(mc.makespan_hours_p90[0])


@dataclass(frozen=True)
class Case:
    trace: str
    origin_day: float
    job_hours: float
    model: str
    forecast_hours: float
    p10_hours: float
    p90_hours: float
    truth_hours: float
    coverage: float
    narrow_coverage: float

    def row(self) -> list[str]:
        return [self.trace, f"{self.origin_day:g}", f"{self.job_hours:g}", self.model,
                *(f"{v:.6g}" for v in (self.forecast_hours, self.p10_hours, self.p90_hours,
                                       self.truth_hours, self.coverage, self.narrow_coverage))]


def cases_of(path: Path, *, window_days: float | None = DEFAULT_WINDOW_DAYS,
             models: tuple[str, ...] = (*FORECAST_MODELS, BUCKET_MODEL),
             narrow: bool = True) -> tuple[list[Case], int]:
    """Every case of the trace at ``path`` (module docstring), and how many (origin, job)
    pairs were left out because the next days never let the job run."""
    trace = load_trace(path)
    name = f"{path.parent.name.split('-')[0]}/{path.stem}"
    per_day = SECONDS_PER_DAY / trace.gap_seconds
    out: list[Case] = []
    skipped = 0
    for day in origins(trace.days):
        at = round(day * per_day)
        lo = 0 if window_days is None else max(0, at - round(window_days * per_day))
        hi = min(trace.ticks, at + round(7 * per_day))
        window: SpotTrace = part(trace, lo, at, "window")
        future = part(trace, at, hi, "next days")
        for hours in JOB_HOURS:
            job = reference_job(hours)
            try:
                truth = backtest([future], job, policy="wait", starts=TRUTH_STARTS)
            except TraceError:
                skipped += 1
                continue
            runs = truth.makespan_hours[0]
            mean_truth = float(runs.mean())
            for model in models:
                if model == BUCKET_MODEL:
                    mean, p10, p90 = bucket_forecast(job, seed=round(day * 10 + hours))
                    narrow_cov = float("nan")
                else:
                    f = forecast(window, job, model, seed=round(day * 10 + hours),  # type: ignore[arg-type]
                                 sub_window_days=SUB_DAYS, sub_window_step_days=SUB_DAYS / 2)
                    mean, p10, p90 = (float(f.mean_makespan_hours[0]),
                                      float(f.makespan_hours_p10[0]),
                                      float(f.makespan_hours_p90[0]))
                    narrow_cov = float("nan")
                    if narrow:
                        g = forecast(window, job, model, seed=round(day * 10 + hours),  # type: ignore[arg-type]
                                     spread=False)
                        narrow_cov = float(np.mean((runs >= g.makespan_hours_p10[0])
                                                   & (runs <= g.makespan_hours_p90[0])))
                cover = float(np.mean((runs >= p10) & (runs <= p90)))
                out.append(Case(name, day, hours, model, mean, p10, p90, mean_truth, cover,
                                narrow_cov))
    return out, skipped


def window_sensitivity(files: list[Path]) -> None:
    print("\nWindow length (replay, median |error| over every case):")
    for days in (3.0, 7.0, None):
        errors = []
        for f in files:
            cases, _ = cases_of(f, window_days=days, models=("replay",), narrow=False)
            errors += [abs(c.forecast_hours / c.truth_hours - 1) for c in cases]
        label = "whole past" if days is None else f"last {days:g} days"
        print(f"  {label:<12} {np.median(errors):.1%} ({len(errors)} cases)")


def plan_as_a_process(files: list[Path]) -> None:
    """``deepvm plan --pool`` as a process (Python start-up included), best of 3, with the
    four preemption traces as pools of the bundled AWS catalog's three GPU types (the Table IV
    job at 3,000 epochs), for each model."""
    zones = [f for f in files if f.parent.name.startswith("preemption")]
    if len(zones) < 4:
        return
    pools = [f"g4dn.xlarge@us-east-1c={zones[0]}", f"g4dn.xlarge@us-east-1f={zones[1]}",
             f"g5.xlarge@us-east-1c={zones[2]}", f"g3s.xlarge@us-east-1c={zones[3]}"]
    base = [sys.executable, "-m", "deepvm_core.cli", "plan", "--catalog",
            "aws-us-east-1-2023-10", "--pw", "3", "--epochs", "3000", "--epoch-seconds",
            "61.16", "--ref-type", "g4dn.xlarge", "--trials", "2000"]
    for pool in pools:
        base += ["--pool", pool]
    print("\ndeepvm plan --pool as a process (4 pools, 3 GPU types), best of 3:")
    for model in FORECAST_MODELS:
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            subprocess.run([*base, "--model", model], check=True, capture_output=True)
            best = min(best, time.perf_counter() - t0)
        print(f"  --model {model:<12} {best:.1f} s")


def main() -> int:
    files = trace_files()
    if not files:
        return 1
    if "--plan" in sys.argv[1:]:
        plan_as_a_process(files)
        return 0
    t0 = time.perf_counter()
    everything: list[Case] = []
    skipped = 0
    for f in files:
        cases, left_out = cases_of(f)
        everything += cases
        skipped += left_out
    took = time.perf_counter() - t0
    print(f"Rolling-origin evaluation: {len(files)} traces, {len(everything)} cases "
          f"(trace x origin x job x model), {skipped} (origin, job) pairs left out (the next "
          f"days never let the job run); {took:.1f} s")
    for model in (*FORECAST_MODELS, BUCKET_MODEL):
        mine = [c for c in everything if c.model == model]
        width = np.median([c.p90_hours / c.truth_hours for c in mine])
        below = np.mean([c.p90_hours < c.truth_hours for c in mine])
        print(f"  {model:<12} median P90 / truth mean {width:.2f}; P90 below the truth's mean "
              f"in {below:.0%} of cases")
    narrow = [c.narrow_coverage for c in everything if c.narrow_coverage == c.narrow_coverage]
    print(f"coverage of the P10-P90 band of the whole window alone (no sub-windows), all "
          f"models: {np.mean(narrow):.0%}")
    rows = [",".join(CSV_COLUMNS), *(",".join(c.row()) for c in everything)]
    text = "\n".join(rows) + "\n"
    if "--write-data" in sys.argv[1:]:
        OUT.write_text(text, encoding="utf-8")
        print(f"written: {OUT}")
    for table in rolling_tables(list(csv.DictReader(text.splitlines()))):
        print(f"\n{table.title}\n\n{table.markdown()}\n\n{table.reading}")
    if "--windows" in sys.argv[1:]:
        window_sensitivity(files)
    return 0


if __name__ == "__main__":
    sys.exit(main())
