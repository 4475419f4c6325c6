"""Interruptions that grow with the cluster: whole-market reclaims and per-VM reclaims
(issue 25; docs/method.md, "Interruptions, waits and their defaults").

**The model.** Reclaims of one spot market come in two kinds, each a Poisson process:

* **whole-market events**, rate ``λ_m`` per hour: every spot VM of the market goes at once;
* **per-VM reclaims**, rate ``λ_v`` per hour for each spot VM, independently.

A data-parallel job stops at the first reclaim of any of its n spot VMs, so its interruptions
form a Poisson process of rate ``λ(n) = λ_m + n λ_v`` (the superposition of independent Poisson
processes), while its spot VMs are up. The closed form and the Monte Carlo of
:mod:`deepvm_core.job` stay exact with λ = λ(n).

**Parameters.** The MTBI of one spot VM (``MTBI(g)``, the Spot Advisor default or the user's,
:mod:`deepvm_core.market.mtbi`) and the per-VM share ρ of one VM's reclaims:
``λ_v = ρ / MTBI`` and ``λ_m = (1 - ρ) / MTBI``, so ``λ(1) = 1 / MTBI`` (one VM is unchanged)
and ``λ(n) = (1 + ρ (n - 1)) / MTBI``: the MTBI of n VMs is ``MTBI / (1 + ρ (n - 1))``. ρ = 0 is
the all-or-none market (one event takes every spot VM); ρ = 1 makes every VM independent.

**Default ρ** (:data:`~deepvm_core.workload.workload.DEFAULT_PER_VM_SHARE`, 0.06): public count
traces of p3.2xlarge (2023) put the MTBI of one VM at 1.2-2.7 times that of 4 VMs (3 zones) and
0.9-2.1 times that of 16 VMs (3 other zones). Those are ``traces.md``'s statistics of a trace
that counts M VMs: with n = 1 a tick is up while some VM can be had, which under this model
ends (nearly) only with a whole-market event, rate ``λ_m``; with n = M it is up while all M
are, which ends at ``λ_m + M λ_v``. So the ratio is ``r = MTBI(1) / MTBI(M) = 1 + M λ_v / λ_m
= 1 + M ρ / (1 - ρ)``, and ``ρ = (r - 1) / (r - 1 + M)``:

* 4 VMs: ρ = 0.2 / 4.2 = 0.048 to 1.7 / 5.7 = 0.298;
* 16 VMs: r = 0.9 gives ρ < 0, i.e. 0, to 1.1 / 17.1 = 0.064.

The two ranges overlap in 0.048-0.064; ρ = 0.06 gives r = 1 + 4 (0.06 / 0.94) = 1.26 at 4 VMs
and 1 + 16 (0.06 / 0.94) = 2.02 at 16 VMs, inside both. (Reading "one VM's" as a single-VM
market instead, ``r = 1 + ρ (n - 1)``, the ranges are 0.067-0.567 and 0-0.073, and 0.06 gives
1.18x and 1.9x.) It is an assumption (the sensitivity control is ``Workload.per_vm_share``,
0 to 1); a count trace gives its own estimate (:func:`estimate_per_vm_share`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from deepvm_core.arrays import FloatArray
from deepvm_core.market.trace import SpotTrace
from deepvm_core.market.trace_stats import pool_statistics


def cluster_interruption_rate(mtbi_hours: npt.ArrayLike, per_vm_share: npt.ArrayLike,
                              spot_vms: npt.ArrayLike) -> FloatArray:
    """``λ(n) = (1 + ρ (n - 1)) / MTBI`` events per hour for n >= 1 spot VMs, 0 for n = 0
    (broadcast; ``mtbi_hours`` is one VM's, infinite MTBI gives 0)."""
    mtbi = np.asarray(mtbi_hours, dtype=np.float64)
    rho = np.asarray(per_vm_share, dtype=np.float64)
    n = np.asarray(spot_vms, dtype=np.float64)
    with np.errstate(divide="ignore"):
        rate = (1.0 + rho * (n - 1.0)) / mtbi
    return np.asarray(np.where(n > 0, rate, 0.0), dtype=np.float64)


def market_and_vm_rates(mtbi_hours: float, per_vm_share: float) -> tuple[float, float]:
    """``(λ_m, λ_v)`` per hour: ``((1 - ρ) / MTBI, ρ / MTBI)``."""
    return (1.0 - per_vm_share) / mtbi_hours, per_vm_share / mtbi_hours


@dataclass(frozen=True)
class PerVmShareEstimate:
    """One VM's MTBI and ρ estimated from a count trace of M VMs (module docstring).

    Attributes:
        per_vm_share: ρ in [0, 1], or ``None`` when the trace cannot say (a state trace, whose
            largest count is 1, or no interruption with n = 1 or n = M).
        mtbi_hours: one VM's MTBI, ``1 / (λ_m + λ_v)``, hours (``None`` with ρ).
        market_mtbi_hours: MTBI(1) of the trace, ``1 / λ_m``, hours.
        cluster_mtbi_hours: MTBI(M) of the trace, ``1 / (λ_m + M λ_v)``, hours.
        vms: M, the largest count.
    """

    per_vm_share: float | None
    mtbi_hours: float | None
    market_mtbi_hours: float
    cluster_mtbi_hours: float
    vms: int


def estimate_per_vm_share(trace: SpotTrace) -> PerVmShareEstimate:
    """ρ and one VM's MTBI from a trace that counts M >= 2 VMs: ``λ_m = 1 / MTBI(1)``,
    ``λ_v = max(0, 1 / MTBI(M) - λ_m) / M``, ``ρ = λ_v / (λ_m + λ_v)`` (module docstring;
    ``traces.md``'s MTBI with n = 1 and n = M). ``None`` when the trace cannot say.
    """
    top = trace.max_count
    if top <= 1:
        return PerVmShareEstimate(None, None, float("nan"), float("nan"), top)
    market = pool_statistics(trace, 1).mtbi_hours
    cluster = pool_statistics(trace, top).mtbi_hours
    if not (np.isfinite(market) and np.isfinite(cluster) and market > 0 and cluster > 0):
        return PerVmShareEstimate(None, None, market, cluster, top)
    lam_m = 1.0 / market
    lam_v = max(0.0, 1.0 / cluster - lam_m) / top
    return PerVmShareEstimate(lam_v / (lam_m + lam_v), 1.0 / (lam_m + lam_v), market, cluster,
                              top)
