"""What a budget holder reads first: the on-demand baseline, the savings, the confidence in
words, and the warning when interruptions stretch the job (``job-model.md``, "The on-demand
baseline").

**The on-demand baseline** of a configuration is the same cluster with every VM bought on
demand: nothing is interrupted, so its makespan is the segments without failures,

    T_od = Σ s = T_c + checkpoints · δ      (hours; the checkpoints' τ and the last segment add
                                             up to the compute time T_c),

and its cost ``C_od = P_all_od · T_od`` with ``P_all_od = P_od + n_spot · OD(v)``: the
on-demand part as it is (the anchor, or the memory nodes) plus every spot GPU VM at its
on-demand rate (Single Anchor: ``n · OD(v)``; Tiering: ``n · OD(v) + m · OD(w)``). The savings
are ``C_od - C`` USD and ``100 (C_od - C) / C_od`` %.

**When spot loses**: a plan whose expected cost C is above C_od is worse than the same cluster
on demand on both counts (T >= T_od always), and :func:`on_demand_offer` says so and offers the
on-demand plan instead.

**The 1.5x warning**: the expected makespan T is more than :data:`SLOW_FACTOR` times the
uninterrupted one (T_od): interruptions and restarts eat the time, and the on-demand cluster
(its cost C_od) is the alternative to weigh.
"""

from __future__ import annotations

import math
from typing import Final

from deepvm_core.job.closed_form import JobEstimates
from deepvm_core.model import Arch
from deepvm_core.search.tables import CandidateTable
from deepvm_core.text import duration, usd
from deepvm_core.units import SECONDS_PER_HOUR

#: Warn when the expected makespan exceeds this many times the uninterrupted makespan.
SLOW_FACTOR: Final = 1.5


def on_demand_baseline_at(table: CandidateTable, estimates: JobEstimates,
                          index: int) -> tuple[float, float]:
    """``(T_od hours, C_od USD)`` of configuration ``index`` alone (module doc)."""
    i = int(index)
    spot_vms = int(table.n[i]) - (1 if table.architecture[i] == Arch.SINGLE_ANCHOR else 0)
    price = (float(table.on_demand_usd_per_hour[i])
             + spot_vms * table.gpus[int(table.gpu[i])].on_demand_usd_per_hour)
    hours = (float(estimates.compute_hours[i]) + int(estimates.checkpoints[i])
             * float(estimates.checkpoint_stall_seconds[i]) / SECONDS_PER_HOUR)
    return hours, price * hours


def savings(cost_usd: float, on_demand_cost_usd: float) -> tuple[float, float | None]:
    """``(C_od - C, 100 (C_od - C) / C_od)``: USD and percent (``None`` when C_od is 0)."""
    saved = on_demand_cost_usd - cost_usd
    return saved, (100.0 * saved / on_demand_cost_usd if on_demand_cost_usd > 0 else None)


def confidence_in_words(makespan_hours_p90: float, cost_usd_p90: float,
                        mean_makespan_hours: float, mean_cost_usd: float) -> str:
    """The Monte Carlo P90s in words: "9 runs in 10 finish within X and cost under Y", and,
    when the mean is above the P90 (a few very long runs pull it up) and reads above it once
    rounded, that too."""
    text = (f"9 runs in 10 finish within {duration(makespan_hours_p90)} and cost under "
            f"{usd(cost_usd_p90)}")
    above = []  # only where the words differ too: "0.4 h ... the mean, 0.4 h, is above" reads wrong
    if (mean_makespan_hours > makespan_hours_p90
            and duration(mean_makespan_hours) != duration(makespan_hours_p90)):
        above.append(f"the mean time, {duration(mean_makespan_hours)}")
    if mean_cost_usd > cost_usd_p90 and usd(mean_cost_usd) != usd(cost_usd_p90):
        above.append(f"the mean cost, {usd(mean_cost_usd)}")
    if above:
        text += (f"; {' and '.join(above)}, {'are' if len(above) > 1 else 'is'} above that: a "
                 "few runs hit many interruptions and take far longer")
    return text + "."


def on_demand_offer(cost_usd: float, on_demand_cost_usd: float,
                    on_demand_makespan_hours: float) -> str | None:
    """When the spot plan's expected cost is above the same cluster on demand (C > C_od), the
    sentence that says so and offers the on-demand plan; ``None`` otherwise."""
    if not (math.isfinite(on_demand_cost_usd) and cost_usd > on_demand_cost_usd):
        return None
    return (f"Spot loses here: the same cluster bought on demand costs "
            f"{usd(cost_usd - on_demand_cost_usd)} less ({usd(on_demand_cost_usd)}) and "
            f"finishes in {duration(on_demand_makespan_hours)} with no interruption risk. "
            "Run it on demand.")


def slow_warning(expected_makespan_hours: float, on_demand_makespan_hours: float,
                 on_demand_cost_usd: float) -> str | None:
    """The warning when T > :data:`SLOW_FACTOR` · T_od, with the on-demand alternative and its
    cost; ``None`` otherwise."""
    if not expected_makespan_hours > SLOW_FACTOR * on_demand_makespan_hours:
        return None
    ratio = expected_makespan_hours / on_demand_makespan_hours
    return (f"Interruptions stretch this job to {ratio:.1f}x its uninterrupted time "
            f"({duration(expected_makespan_hours)} expected, {duration(on_demand_makespan_hours)} "
            f"without interruptions). The same cluster on demand takes "
            f"{duration(on_demand_makespan_hours)} and costs {usd(on_demand_cost_usd)}.")
