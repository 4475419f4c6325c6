"""A seeded synthetic spot market: example traces for a demo without the public ones.

The public spot traces carry no licence and are not shipped; until they are fetched
(:mod:`deepvm_core.market.trace_fetch`), the Spot markets page shows this market, labelled
:data:`SYNTHETIC_LABEL` on every chart. It is **not data**: three availability traces of one
GPU type (:data:`SYNTHETIC_ZONES`), each an alternating renewal process whose up and down spells
are exponential, rounded up to whole ticks, with means chosen inside the range the public
p3.2xlarge traces show (``traces.md``: mean uptime 0.7 to 10.5 h, mean outage 0.8 to 3.6 h):

=========  ==============  ===============
zone       mean up, hours  mean down, hours
=========  ==============  ===============
a          10.0            0.8
b          3.0             1.5
c          0.8             3.5
=========  ==============  ===============

45 days of 300 s ticks, seed :data:`SYNTHETIC_SEED` (one market for everyone). Pure.

The same process makes the **job model's availability paths** (:func:`renewal_paths`, issue 26):
where a plan has no traces, the recovery policies are replayed on paths drawn from its
assumptions (``job-model.md``: up times exponential with mean MTBI, capacity waits exponential
with mean W), begun in the stationary state as the job model's Monte Carlo begins a run (inside
an outage with probability ``W / (MTBI + W)``).
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np

from deepvm_core.arrays import FloatArray, IntArray
from deepvm_core.market.trace import SpotTrace
from deepvm_core.units import SECONDS_PER_DAY, SECONDS_PER_HOUR

#: What every chart of the synthetic market says.
SYNTHETIC_LABEL: Final = "SYNTHETIC MARKET: seeded example data, not real availability"
SYNTHETIC_SEED: Final = 25
SYNTHETIC_GAP_SECONDS: Final = 300.0
SYNTHETIC_DAYS: Final = 45
#: Zone suffix, mean up and mean down hours (module docstring).
SYNTHETIC_ZONES: Final = (("a", 10.0, 0.8), ("b", 3.0, 1.5), ("c", 0.8, 3.5))
#: The synthetic zones' names (``synthetic-1a``...): plainly not AWS zones, so no catalog
#: region is looked up for them.
SYNTHETIC_ZONE_PREFIX: Final = "synthetic-1"


def spell_ticks(hours: FloatArray, gap_hours: float) -> IntArray:
    """Spells of ``hours`` in whole ticks of ``gap_hours``, rounded up, at least one tick (a
    market is down for a tick at least when it is lost). An exponential spell so rounded is
    geometric: ``P(ticks > k) = e^{-k g / mean}``, the exponential seen at tick boundaries."""
    return np.maximum(1, np.ceil(np.asarray(hours, dtype=np.float64) / gap_hours)).astype(
        np.int64)


def synthetic_trace(mean_up_hours: float, mean_down_hours: float, *, seed: int,
                    gap_seconds: float = SYNTHETIC_GAP_SECONDS,
                    days: float = SYNTHETIC_DAYS, source: str = "synthetic") -> SpotTrace:
    """One state trace (counts 0 or 1): up first, then alternating spells (module
    docstring)."""
    rng = np.random.default_rng(seed)
    ticks = max(1, math.ceil(days * SECONDS_PER_DAY / gap_seconds))
    gap_hours = gap_seconds / SECONDS_PER_HOUR
    counts = np.zeros(ticks, dtype=np.int64)
    k, up = 0, True
    while k < ticks:
        mean = mean_up_hours if up else mean_down_hours
        run = int(spell_ticks(np.array([rng.exponential(mean)]), gap_hours)[0])
        if up:
            counts[k:k + run] = 1
        k += run
        up = not up
    counts.flags.writeable = False
    return SpotTrace(source=source, gap_seconds=gap_seconds, counts=counts)


def synthetic_market(seed: int = SYNTHETIC_SEED) -> tuple[tuple[str, SpotTrace], ...]:
    """The synthetic market: (zone name, trace) per zone of :data:`SYNTHETIC_ZONES`."""
    return tuple((f"{SYNTHETIC_ZONE_PREFIX}{suffix}",
                  synthetic_trace(up, down, seed=seed + i,
                                  source=f"synthetic ({SYNTHETIC_ZONE_PREFIX}{suffix})"))
                 for i, (suffix, up, down) in enumerate(SYNTHETIC_ZONES))


def renewal_paths(mean_up_hours: FloatArray, mean_down_hours: FloatArray, *, path_ticks: int,
                  gap_seconds: float, rng: np.random.Generator,
                  source: str = "job model") -> SpotTrace:
    """One state trace of ``len(mean_up_hours)`` independent paths of ``path_ticks`` ticks each,
    one after the other (path j is ticks ``j path_ticks`` to ``(j + 1) path_ticks - 1``; a
    backtest of as many starts as paths starts one run at the beginning of each).

    Path j is an alternating renewal process with exponential up spells of mean
    ``mean_up_hours[j]`` and down spells of mean ``mean_down_hours[j]`` (0: the shortest
    outage, one tick), each rounded up to whole ticks (:func:`spell_ticks`, as
    :func:`synthetic_trace`), begun in its stationary state: down first with probability
    ``W / (MTBI + W)``, the first spell a whole one (exponential spells have no memory).

    Raises:
        ValueError: means that are not finite and > 0 (up) or >= 0 (down), arrays of
            different lengths, or ``path_ticks`` < 1.
    """
    up_mean = np.asarray(mean_up_hours, dtype=np.float64).ravel()
    down_mean = np.asarray(mean_down_hours, dtype=np.float64).ravel()
    if up_mean.shape != down_mean.shape or path_ticks < 1 or not (
            np.all(np.isfinite(up_mean) & (up_mean > 0))
            and np.all(np.isfinite(down_mean) & (down_mean >= 0))):
        raise ValueError("renewal_paths: means must be finite, up > 0 and down >= 0, of one "
                         "length, and path_ticks >= 1")
    paths = up_mean.size
    gap_hours = gap_seconds / SECONDS_PER_HOUR
    up = rng.random(paths) >= down_mean / (up_mean + down_mean)
    at = np.zeros(paths, dtype=np.int64)
    # +1 where an up spell begins, -1 where it ends (a difference array, summed at the end)
    edges = np.zeros((paths, path_ticks + 1), dtype=np.int64)
    rows = np.arange(paths)
    while rows.size:
        mean = np.where(up[rows], up_mean[rows], down_mean[rows])
        end = np.minimum(at[rows] + spell_ticks(rng.exponential(mean), gap_hours), path_ticks)
        lit = up[rows]
        np.add.at(edges, (rows[lit], at[rows][lit]), 1)
        np.add.at(edges, (rows[lit], end[lit]), -1)
        at[rows] = end
        up[rows] = ~lit
        rows = rows[end < path_ticks]
    counts = np.cumsum(edges[:, :path_ticks], axis=1).ravel()
    counts.flags.writeable = False
    return SpotTrace(source=source, gap_seconds=gap_seconds, counts=counts)
