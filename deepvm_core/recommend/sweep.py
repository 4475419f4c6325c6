"""PW sweeps: every policy over a range of pricing willingness (the paper's Fig. 3).

The candidates are enumerated once (they do not depend on PW), sorted by price once, and each
policy's choice at every PW is read off a running best (see
:func:`deepvm_core.search.solvers.enumeration.best_by_pw`): a 101-point sweep of five policies
costs a few milliseconds instead of the artifact's minutes.

Normalisation (``model.md``): performance divided by DeepVM's (paper objective) performance at
the largest PW of the sweep.

:meth:`SweepResult.findings` checks the paper's Fig. 3 claims on a sweep (the dashboard's
Simulate and Method pages show them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from deepvm_core.catalog import Catalog
from deepvm_core.errors import InputError
from deepvm_core.model import Configuration, Objective, Scenario
from deepvm_core.recommend.policies import (
    POLICY_LABELS,
    SPEED_POLICY,
    SWEEP_POLICIES,
    single_anchor_baselines,
)
from deepvm_core.search.candidates import build_candidates
from deepvm_core.search.solvers.enumeration import best_by_pw

#: The order of a sweep's rows (:meth:`SweepResult.rows`: its JSON and CSV, a published format
#: pinned by ``tests/golden/sweep-*.json``): the paper's Fig. 3 policies, then DeepVM with the
#: performance objective, then with the speed objective (the tools' default, issue 27).
#: Everything else, :attr:`SweepResult.configurations` included, lists the policies in the one
#: order of :data:`~deepvm_core.recommend.policies.SWEEP_POLICIES`.
ROW_ORDER = ("deepvm", "deepvm_noscale", "cost_first", "performance_first",
             "deepvm_performance", SPEED_POLICY)
MAX_SWEEP_POINTS = 100_000
#: The paper's Fig. 3 PW grid, USD per hour: (start, stop, step), the sweep's default.
FIG3_PW_GRID = (0.0, 10.0, 0.1)

#: A span of the PW grid: its first and last grid point, USD per hour (inclusive).
Span = tuple[float, float]


@dataclass(frozen=True)
class SweepFindings:
    """What a sweep says about the paper's Fig. 3 claims (computed, not hard-coded).

    Attributes:
        pf_beats_deepvm: PW spans (inclusive, USD/hour) where Performance-First has more
            performance than DeepVM (paper objective); the paper claims there are none.
        noscale_below_cost_first: PW spans where DeepVM-NoScale has less performance than
            Cost-First; the paper claims beyond about PW 2.5.
        mean_gain: mean of perf(performance objective) / perf(paper objective) - 1 where both
            exist (a fraction: 0.19 is 19 %).
        max_ratio: largest perf(performance objective) / perf(paper objective) (1 when DeepVM
            finds nothing at any PW).
    """

    pf_beats_deepvm: tuple[Span, ...]
    noscale_below_cost_first: tuple[Span, ...]
    mean_gain: float
    max_ratio: float


@dataclass(frozen=True)
class SweepResult:
    """Each policy's configuration at each PW.

    Attributes:
        pws: the PW values, USD per hour, ascending.
        configurations: per policy of :data:`~deepvm_core.recommend.policies.SWEEP_POLICIES`
            (in that order), one configuration (or ``None``) per PW.
        normaliser: DeepVM's performance at the largest PW (0 when it has none).
    """

    pws: tuple[float, ...]
    configurations: dict[str, tuple[Configuration | None, ...]]
    normaliser: float

    def performance(self, policy: str) -> np.ndarray:
        """Performance per PW (0 where the policy finds nothing)."""
        return np.array([c.performance if c else 0.0 for c in self.configurations[policy]])

    def hourly_price(self, policy: str) -> np.ndarray:
        """Hourly price per PW, USD per hour (NaN where the policy finds nothing)."""
        return np.array([c.hourly_price_usd if c else np.nan for c in self.configurations[policy]])

    def normalised(self, policy: str) -> np.ndarray:
        """Performance per PW divided by :attr:`normaliser` (0 where undefined)."""
        perf = self.performance(policy)
        return perf / self.normaliser if self.normaliser > 0 else np.zeros_like(perf)

    def mean_gain_performance_over_paper(self) -> float:
        """Mean of perf(performance objective) / perf(paper objective) - 1 where both exist."""
        a, b = self.performance("deepvm_performance"), self.performance("deepvm")
        ok = b > 0
        return float(np.mean(a[ok] / b[ok] - 1.0)) if np.any(ok) else 0.0

    def max_ratio_performance_over_paper(self) -> float:
        """Largest perf(performance objective) / perf(paper objective) where DeepVM (paper
        objective) finds something; 1 when it finds nothing at any PW."""
        a, b = self.performance("deepvm_performance"), self.performance("deepvm")
        ok = b > 0
        ratio = a[ok] / b[ok]
        return float(ratio.max()) if ratio.size else 1.0

    def intervals_where(self, policy_a: str, policy_b: str,
                        tolerance: float = 1e-9) -> tuple[Span, ...]:
        """PW spans where ``policy_a``'s performance exceeds ``policy_b``'s by more than
        ``tolerance`` (a policy that finds nothing counts 0), as (first, last) grid points,
        USD per hour."""
        return intervals(self.pws, self.performance(policy_a) > self.performance(policy_b)
                         + tolerance)

    def findings(self, tolerance: float = 1e-9) -> SweepFindings:
        """Compare the policies the way ``model.md`` does (see :class:`SweepFindings`);
        performance differences up to ``tolerance`` count as ties."""
        return SweepFindings(
            pf_beats_deepvm=self.intervals_where("performance_first", "deepvm", tolerance),
            noscale_below_cost_first=self.intervals_where("cost_first", "deepvm_noscale",
                                                          tolerance),
            mean_gain=self.mean_gain_performance_over_paper(),
            max_ratio=self.max_ratio_performance_over_paper(),
        )

    def rows(self) -> list[dict[str, Any]]:
        """One row per (PW, policy), policies in :data:`ROW_ORDER`: for CSV, JSON and data
        frames."""
        out = []
        for policy in ROW_ORDER:
            configs = self.configurations[policy]
            norm = self.normalised(policy)
            for i, (pw, c) in enumerate(zip(self.pws, configs, strict=True)):
                out.append({
                    "pw_usd_per_hour": round(pw, 10),
                    "policy": policy,
                    "policy_label": POLICY_LABELS[policy],
                    "architecture": c.architecture if c else None,
                    "gpu": c.gpu if c else None,
                    "gpu_spot": c.gpu_spot if c else 0,
                    "gpu_on_demand": c.gpu_on_demand if c else 0,
                    "cpu": c.cpu if c else None,
                    "cpu_on_demand": c.memory_nodes if c else 0,
                    "hourly_price_usd": round(c.hourly_price_usd, 10) if c else None,
                    "performance": c.performance if c else 0.0,
                    "normalised_performance": float(norm[i]),
                    "z_paper": c.z_paper if c else None,
                    "configuration": c.describe() if c else "none feasible",
                })
        return out


def intervals(pws: Sequence[float], mask: Sequence[bool] | np.ndarray) -> tuple[Span, ...]:
    """Maximal runs of consecutive grid points where ``mask`` holds, as (first, last) PW.

    ``pws`` and ``mask`` are parallel (one flag per grid point); a run of one point gives
    ``(p, p)``.
    """
    if len(pws) != len(mask):
        raise ValueError(f"pws has {len(pws)} points but mask has {len(mask)}")
    out: list[Span] = []
    start = None
    for i, flag in enumerate(mask):
        if flag and start is None:
            start = i
        if start is not None and (not flag or i == len(mask) - 1):
            end = i if flag else i - 1
            out.append((float(pws[start]), float(pws[end])))
            start = None
    return tuple(out)


def pw_grid(start: float, stop: float, step: float) -> np.ndarray:
    """PW values start, start + step, ... <= stop (inclusive, robust to float steps).

    Raises:
        InputError: a negative start, stop below start, a step <= 0 or too many points.
    """
    for name, value in (("pw_start", start), ("pw_stop", stop), ("pw_step", step)):
        if not np.isfinite(value):
            raise InputError(name, value, "must be a finite number")
    if start < 0:
        raise InputError("pw_start", start, "must not be negative")
    if stop < start:
        raise InputError("pw_stop", stop, f"must be >= pw_start ({start:g})")
    if step <= 0:
        raise InputError("pw_step", step, "must be greater than 0")
    count = int(np.floor((stop - start) / step + 1e-9)) + 1
    if count > MAX_SWEEP_POINTS:
        raise InputError("pw_step", step, f"gives {count} points; at most {MAX_SWEEP_POINTS}")
    return np.round(start + step * np.arange(count), 10)


def sweep(catalog: Catalog, scenario: Scenario, pws: np.ndarray) -> SweepResult:
    """Every policy of :data:`~deepvm_core.recommend.policies.SWEEP_POLICIES` at every PW of
    ``pws`` (the speed objective with the example job's speed basis).

    ``scenario.pw_usd_per_hour`` and ``scenario.objective`` are ignored (the sweep sets PW and
    runs both objectives); f, s, quotas and the node cap apply.
    """
    pws = np.sort(np.asarray(pws, dtype=np.float64))
    # nothing priced above the largest PW is ever chosen: cut the table there
    table = build_candidates(catalog, scenario, memory_node_choices=1,
                             pw_usd_per_hour=float(pws[-1]) if pws.size else 0.0)

    def by(objective: Objective, noscale: bool = False) -> tuple[Configuration | None, ...]:
        idx = best_by_pw(table, pws, objective, noscale=noscale)
        configs = {int(i): table.configuration(int(i)) for i in np.unique(idx[idx >= 0])}
        return tuple(configs.get(int(i)) for i in idx)

    cost_first, performance_first = single_anchor_baselines(table, pws)
    found = {
        "deepvm": by("paper"),
        "deepvm_performance": by("performance"),
        "deepvm_noscale": by("paper", noscale=True),
        "cost_first": tuple(cost_first),
        "performance_first": tuple(performance_first),
        SPEED_POLICY: by("speed"),
    }
    configurations = {name: found[name] for name in SWEEP_POLICIES}
    last = configurations["deepvm"][-1] if pws.size else None
    return SweepResult(
        pws=tuple(float(p) for p in pws),
        configurations=configurations,
        normaliser=last.performance if last else 0.0,
    )
