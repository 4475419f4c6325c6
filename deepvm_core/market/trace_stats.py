"""Statistics of a pool for a cluster of n spot VMs (``traces.md``, "Statistics").

* **Up or down.** A trace whose largest count M is at most 1 records the state of the market:
  tick k is **up** when ``data[k] >= 1``, whatever n (one event takes every spot VM). A trace
  with M > 1 counts VMs: tick k is up when ``data[k] >= n``; a cluster of n > M spot VMs on it
  is refused. n counts the spot GPU VMs only (Single Anchor: n - 1; Tiering: n).
* ``availability`` = up ticks / L.
* ``interruptions`` = #{k >= 1 : tick k - 1 up and tick k down} (not cyclic).
* ``mtbi_hours`` = up hours / interruptions (infinite when there are none).
* ``mean_wait_hours`` = the mean length, in hours, of the maximal runs of down ticks, the runs
  at either end included (0 when there are none).
* ``days`` = L g / 86,400.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from deepvm_core.arrays import BoolArray, IntArray
from deepvm_core.market.trace import SpotTrace, TraceError


def up_threshold(trace: SpotTrace, spot_vms: int) -> int:
    """The count a tick needs to be up for ``spot_vms`` spot VMs: 1 on a state trace
    (M <= 1), else n.

    Raises:
        TraceError: ``spot_vms`` < 1, or n > M on a count trace.
    """
    if isinstance(spot_vms, bool) or int(spot_vms) != spot_vms or spot_vms < 1:
        raise TraceError("spot_vms", f"{spot_vms!r}: a cluster on a trace needs >= 1 spot VM")
    top = trace.max_count
    if top <= 1:
        return 1
    if spot_vms > top:
        raise TraceError(trace.source, f"a cluster of {spot_vms} spot VMs is larger than the "
                                       f"trace's largest count ({top}): it never fits")
    return int(spot_vms)


def up_ticks(trace: SpotTrace, spot_vms: int) -> BoolArray:
    """Per tick, True when the pool is up for a cluster of ``spot_vms`` spot VMs."""
    return np.asarray(trace.counts >= up_threshold(trace, spot_vms), dtype=bool)


def down_run_lengths(up: BoolArray) -> IntArray:
    """Lengths in ticks of the maximal runs of down ticks (runs at either end included)."""
    edges = np.diff(np.concatenate(([0], (~up).astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return (ends - starts).astype(np.int64)


def up_run_lengths(up: BoolArray) -> IntArray:
    """Lengths in ticks of the maximal runs of up ticks (runs at either end included)."""
    return down_run_lengths(~up)


def longest_up_hours(trace: SpotTrace, spot_vms: int) -> float:
    """The longest time the pool stays up for ``spot_vms`` spot VMs, hours, the trace read in a
    loop as a replay reads it (its last up run joined to its first); ``inf`` when it is always
    up, 0 when never.

    Raises:
        TraceError: as :func:`up_threshold`.
    """
    up = up_ticks(trace, spot_vms)
    if up.all():
        return float("inf")
    if not up.any():
        return 0.0
    return float(up_run_lengths(np.concatenate((up, up))).max()) * trace.gap_hours


@dataclass(frozen=True)
class PoolStatistics:
    """A pool's trace statistics for one cluster size (module docstring).

    Attributes:
        gap_seconds: g. ticks: L. days: L g / 86,400.
        availability: up ticks / L.
        interruptions: up -> down transitions.
        mtbi_hours: up hours / interruptions (``inf`` without interruptions).
        mean_wait_hours: mean down run, hours (0 without down ticks).
    """

    gap_seconds: float
    ticks: int
    days: float
    availability: float
    interruptions: int
    mtbi_hours: float
    mean_wait_hours: float


def pool_statistics(trace: SpotTrace, spot_vms: int = 1) -> PoolStatistics:
    """The statistics of ``trace`` for a cluster of ``spot_vms`` spot VMs.

    Raises:
        TraceError: see :func:`up_threshold`.
    """
    up = up_ticks(trace, spot_vms)
    g = trace.gap_hours
    events = int(np.count_nonzero(up[:-1] & ~up[1:]))
    up_hours = float(np.count_nonzero(up)) * g
    downs = down_run_lengths(up)
    return PoolStatistics(
        gap_seconds=trace.gap_seconds,
        ticks=trace.ticks,
        days=trace.days,
        availability=float(np.count_nonzero(up)) / trace.ticks,
        interruptions=events,
        mtbi_hours=up_hours / events if events else float("inf"),
        mean_wait_hours=float(downs.mean()) * g if downs.size else 0.0,
    )
