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
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np

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
        run = max(1, math.ceil(rng.exponential(mean) / gap_hours))
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
