"""Clusters that are not expected to finish the job, and why, in words (issue 16).

The closed form (:mod:`deepvm_core.job.closed_form`) is finite for every finite input, but it
grows like ``e^{λ(R+s)}``: when interruptions come far more often than a segment of work
(plus the restart) lasts, the expected makespan is astronomically large or overflows to
infinity. Such a cluster is **not expected to finish**: the planner never chooses it, never
puts it on the frontier, does not simulate it, and its numbers are shown as a reason instead
(``does not finish: an interruption every 3.6 µs, but a retry needs 6 min without one``;
the durations as :func:`deepvm_core.text.duration` writes them).

A cluster finishes when its expected makespan T (hours) is finite and at most
:data:`FINISH_HORIZON_HOURS`.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from deepvm_core.arrays import BoolArray
from deepvm_core.text import duration

#: The longest expected makespan a plan accepts as finishing, hours (about 114 years): far
#: past any training job, and far below the astronomic values of a cluster whose segments
#: are almost never completed between two interruptions.
FINISH_HORIZON_HOURS: Final = 1e6


def finishes(makespan_hours: npt.ArrayLike) -> BoolArray:
    """Per configuration, True when the expected makespan T is finite and at most
    :data:`FINISH_HORIZON_HOURS` (NaN: False)."""
    t = np.asarray(makespan_hours, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.asarray(np.isfinite(t) & (t <= FINISH_HORIZON_HOURS), dtype=bool)


def unfinished_reason(*, mtbi_hours: float | None, restart_hours: float,
                      segment_hours: float, compute_hours: float) -> str:
    """Why a cluster is not expected to finish, in one line.

    Args:
        mtbi_hours: mean hours between interruptions of its spot VMs (after the scale), 0
            for a market that is never up (λ infinite), or ``None`` when it has no spot VM
            (never interrupted).
        restart_hours: R, hours.
        segment_hours: one segment's attempt length s (compute to the next checkpoint plus
            the checkpoint stall), hours.
        compute_hours: T_c, the job's compute hours.
    """
    if mtbi_hours is not None and not mtbi_hours > 0:  # λ infinite: a market never up
        return ("does not finish: its spot VMs are interrupted without pause (a mean time "
                "between interruptions of 0 h: a market that is never up)")
    if mtbi_hours is None:  # never interrupted: only the compute itself can be too long
        if compute_hours > FINISH_HORIZON_HOURS:
            return (f"does not finish: {duration(compute_hours)} of compute, beyond the "
                    f"{duration(FINISH_HORIZON_HOURS)} a plan accepts")
        return (f"does not finish: its expected time is beyond the "
                f"{duration(FINISH_HORIZON_HOURS)} a plan accepts")
    retry = restart_hours + segment_hours
    parts = ([f"restart {duration(restart_hours)}"] if restart_hours > 0 else []) + [
        f"{duration(segment_hours)} to the next checkpoint"]
    return (f"does not finish: an interruption every {duration(mtbi_hours)}, but a "
            f"retry needs {duration(retry)} without one ({' + '.join(parts)})")
