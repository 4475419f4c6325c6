"""A naive exhaustive loop over (v, w, n, m), in the style of the research artifact's search.

For scale only: it evaluates the same model as ``deepvm_core`` (paper objective, quotas off) by
visiting every (GPU type, CPU type, n, m) with plain Python loops, as the artifact does, so the
benchmark can show what "think in sorted prefixes" buys. It returns the best Z at one PW.
"""

from __future__ import annotations

from deepvm_core.catalog import Catalog
from deepvm_core.model import (
    PRICE_TOLERANCE_USD,
    holds_checkpoints,
    on_demand_flopp,
    pair_bandwidth_gbps,
    saturation_limit,
    scaling_factor_at,
    spot_flopp,
)


def best_z_naive(catalog: Catalog, pw: float, f_gb: float, s: float, cap: int = 256) -> float:
    """Best paper-objective Z over every (v, w, n, m) with n, m <= cap (quotas off)."""
    best = 0.0
    budget = pw + PRICE_TOLERANCE_USD
    for v in catalog.solvable_gpu_types:
        spfp, odfp = spot_flopp(v), on_demand_flopp(v)
        for n in range(2, cap + 2):  # Single Anchor
            if v.on_demand_usd_per_hour + (n - 1) * v.spot_usd_per_hour <= budget:
                best = max(best, ((n - 1) * spfp + odfp) * scaling_factor_at(v.scaling, n))
        for w in catalog.cpu_types:  # Tiering
            if not holds_checkpoints(w, f_gb, s):
                continue
            nsat = saturation_limit(catalog.saturation, pair_bandwidth_gbps(v, w))
            for n in range(1, cap + 1):
                for m in range(1, cap + 1):
                    price = n * v.spot_usd_per_hour + m * w.on_demand_usd_per_hour
                    if price <= budget and n / m < nsat:
                        best = max(best, n * spfp * scaling_factor_at(v.scaling, n))
    return best
