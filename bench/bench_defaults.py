"""The job model's defaults without a trace (issue 25): MTBI and W per Spot Advisor bucket, and
their spread, derived from the development traces. Prints the derivation (docs/method.md,
"Interruptions, waits and their defaults" quotes it); ``--check`` exits 1 when the core's
constants (:mod:`deepvm_core.market.mtbi`) differ from it.

Reads the development traces from ``$DEEPVM_DEV_TRACES`` (default: the shared folder) by path;
they are not part of the project.

1. **Which traces.** The V100 traces: p3.2xlarge (``*_v100_1``) and p3.16xlarge
   (``*_v100_8``), both in the Spot Advisor's ">20 %" bucket in us-west-2 and us-east-1 (the
   bundled catalogs' buckets). The K80 types (p2) have no bucket today and are left out (the
   test of the defaults still covers them, out of sample).
2. **Windows.** Every 7-day window starting every 2 days (a trace of 7 to 9 days: its first 7
   days), one spot VM: MTBI and W (``traces.md``'s statistics).
3. **Defaults.** MTBI of ">20 %" = the median window MTBI, W = the median window W, each
   rounded to 0.1 h. The traces say nothing about the other buckets: MTBI doubles per bucket
   below ">20 %" (the rule of ``job-model.md``) and W is the same.
4. **Spread.** The windows ordered by how slow they make a job (the expected wall hours of one
   hour of compute with a 6-minute restart, ``E0(1 h)``, closed form); the window at each
   decile's middle (5 %, 15 %, ..., 95 %) gives one scenario, its MTBI and W divided by the
   medians (two decimals). A plan without a trace draws its Monte Carlo runs equally from the
   ten scenarios (:mod:`deepvm_core.job.spread`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from dev_traces import TRACES

from deepvm_core.job.closed_form import segment_expectations
from deepvm_core.market.mtbi import (
    ADVISOR_BUCKET_MTBI_HOURS,
    ADVISOR_BUCKET_WAIT_HOURS,
    BUCKET_SPREAD,
)
from deepvm_core.market.trace import SpotTrace, load_trace
from deepvm_core.market.trace_stats import pool_statistics
from deepvm_core.units import SECONDS_PER_DAY

WINDOW_DAYS = 7.0
STEP_DAYS = 2.0
#: The ordering job: one hour of compute, restart 6 min (the workload's default R).
ORDER_SEGMENT_HOURS = 1.0
ORDER_RESTART_HOURS = 0.1
DECILES = 10


@dataclass(frozen=True)
class Window:
    trace: str
    start_day: float
    mtbi_hours: float
    wait_hours: float
    availability: float


@dataclass(frozen=True)
class Derivation:
    """Steps 2-4 of the module docstring: the windows, their medians, and the window at each
    decile's middle; the defaults and the spread follow from them (properties)."""

    windows: tuple[Window, ...]
    median_mtbi_hours: float
    median_wait_hours: float
    scenarios: tuple[Window, ...]

    @property
    def mtbi_hours(self) -> float:
        """The ">20 %" bucket's default MTBI: the median, rounded to 0.1 h."""
        return round(self.median_mtbi_hours, 1)

    @property
    def wait_hours(self) -> float:
        """Every bucket's default W: the median, rounded to 0.1 h."""
        return round(self.median_wait_hours, 1)

    @property
    def spread(self) -> tuple[tuple[float, float], ...]:
        """Each scenario's MTBI and W over the medians, two decimals."""
        return tuple((round(w.mtbi_hours / self.median_mtbi_hours, 2),
                      round(w.wait_hours / self.median_wait_hours, 2)) for w in self.scenarios)


def bucket_traces(root: Path) -> list[Path]:
    """The development traces of ">20 %" types (p3.2xlarge and p3.16xlarge: ``*_v100_*``)."""
    return sorted(f for f in root.glob("*/*.json") if "_v100_" in f.stem)


def windows(path: Path) -> list[Window]:
    """Every 7-day window of the trace at ``path``, starting every 2 days (one spot VM)."""
    t = load_trace(path)
    per_day = SECONDS_PER_DAY / t.gap_seconds
    length, step = round(WINDOW_DAYS * per_day), round(STEP_DAYS * per_day)
    starts = range(0, max(t.ticks - length, 0) + 1, step)
    out = []
    for s in starts:
        part = SpotTrace(f"{path.stem}[{s}]", t.gap_seconds, t.counts[s:s + length])
        st = pool_statistics(part, 1)
        out.append(Window(f"{path.parent.name.split('-')[0]}/{path.stem}", s / per_day,
                          st.mtbi_hours, st.mean_wait_hours, st.availability))
    return out


def derive(root: Path) -> Derivation:
    """The derivation of the module docstring on the traces under ``root``."""
    found = [w for f in bucket_traces(root) for w in windows(f)]
    mtbi = np.array([w.mtbi_hours for w in found])
    wait = np.array([w.wait_hours for w in found])
    med_m, med_w = float(np.median(mtbi)), float(np.median(wait))
    slow = segment_expectations(ORDER_SEGMENT_HOURS, 1.0 / mtbi, ORDER_RESTART_HOURS,
                                wait).makespan_hours
    order = np.argsort(slow, kind="stable")
    n = len(found)
    picks = [found[int(order[round((k + 0.5) / DECILES * n - 0.5)])]
             for k in range(DECILES)]
    return Derivation(tuple(found), med_m, med_w, tuple(picks))


def main() -> int:
    if not bucket_traces(TRACES):
        print(f"no development traces under {TRACES}; set DEEPVM_DEV_TRACES")
        return 1
    d = derive(TRACES)
    print(f"Windows of {WINDOW_DAYS:g} days every {STEP_DAYS:g} days, one spot VM, on the "
          f">20 % traces ({len(bucket_traces(TRACES))} files, {len(d.windows)} windows):")
    print("| trace | start day | MTBI h | W h | availability |")
    print("|---|---:|---:|---:|---:|")
    for w in d.windows:
        print(f"| {w.trace} | {w.start_day:.0f} | {w.mtbi_hours:.2f} | {w.wait_hours:.2f} | "
              f"{w.availability:.2f} |")
    q = np.percentile([w.mtbi_hours for w in d.windows], (10, 90))
    r = np.percentile([w.wait_hours for w in d.windows], (10, 90))
    print(f"\nMTBI: median {d.median_mtbi_hours:.4f} h (P10-P90 {q[0]:.2f}-{q[1]:.2f}) -> "
          f"default {d.mtbi_hours:g} h for >20 %, doubling per bucket below")
    print(f"W:    median {d.median_wait_hours:.4f} h (P10-P90 {r[0]:.2f}-{r[1]:.2f}) -> "
          f"default {d.wait_hours:g} h ({d.wait_hours * 60:g} min) for every bucket")
    print("\nSpread: the window at the middle of each decile of E0(1 h) (slowest last):")
    print("| decile | window | MTBI h | W h | MTBI factor | W factor |")
    print("|---:|---|---:|---:|---:|---:|")
    for k, (w, (fm, fw)) in enumerate(zip(d.scenarios, d.spread, strict=True)):
        print(f"| {k + 1} | {w.trace} day {w.start_day:.0f} | {w.mtbi_hours:.2f} | "
              f"{w.wait_hours:.2f} | {fm:.2f} | {fw:.2f} |")
    mtbi = tuple(round(d.mtbi_hours * 2.0 ** (4 - r), 6) for r in range(5))
    same = (mtbi == ADVISOR_BUCKET_MTBI_HOURS
            and all(w == d.wait_hours for w in ADVISOR_BUCKET_WAIT_HOURS)
            and d.spread == BUCKET_SPREAD)
    print(f"\nderived MTBI per bucket {mtbi}, W {d.wait_hours:g} h, spread {d.spread}")
    print("the core's constants (deepvm_core/market/mtbi.py) "
          + ("match." if same else "DIFFER: update them."))
    if "--check" in sys.argv[1:] and not same:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
