"""deepvm_core.sweep: PW spans where one policy beats another, and the Fig. 3 findings."""

from __future__ import annotations

import numpy as np
import pytest

from deepvm_core.model import Configuration, Scenario
from deepvm_core.sweep import SWEEP_POLICIES, SweepFindings, SweepResult, intervals, pw_grid, sweep


@pytest.fixture(scope="module")
def fig3(sim_catalog) -> SweepResult:
    """The paper's Fig. 3 setup: simulated catalog, quotas off, PW 0..10 step 0.1."""
    return sweep(sim_catalog, Scenario(0.0, use_quotas=False), pw_grid(0.0, 10.0, 0.1))


def config(performance: float) -> Configuration:
    """A single-anchor cluster with the given performance (the other numbers do not matter)."""
    return Configuration(
        architecture="single_anchor", gpu="g", gpu_spot=0, gpu_on_demand=1, cpu=None,
        cpu_on_demand=0, hourly_price_usd=1.0, z_paper=1.0, z_noscale=1.0,
        performance=performance, scaling_factor=1.0, eflops_per_gpu=performance)


def hand_made(performances: dict[str, list[float | None]]) -> SweepResult:
    """A sweep over PW 0, 1, ..., with the given performance per policy (``None``: nothing
    feasible); policies not given have nothing feasible anywhere."""
    count = len(next(iter(performances.values())))
    configurations = {
        p: tuple(None if v is None else config(v)
                 for v in performances.get(p, [None] * count))
        for p in SWEEP_POLICIES
    }
    return SweepResult(pws=tuple(float(i) for i in range(count)),
                       configurations=configurations, normaliser=1.0)


# ----------------------------------------------------------------------------- intervals


def test_intervals_are_maximal_runs_of_grid_points() -> None:
    pws = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
    assert intervals(pws, np.array([False, True, True, False, False, True])) == (
        (0.1, 0.2), (0.5, 0.5))
    assert intervals(pws, [True] * 6) == ((0.0, 0.5),)
    assert intervals(pws, [False] * 6) == ()
    assert intervals([], []) == ()
    with pytest.raises(ValueError, match="mask"):
        intervals(pws, [True])


def test_intervals_where_on_a_hand_made_sweep() -> None:
    result = hand_made({
        "performance_first": [5.0, 3.0, 3.0, 1.0, None, 2.0],
        "deepvm": [4.0, 3.0, 2.0, 2.0, 1.0, None],
    })
    # strictly more: ties (PW 1) do not count; nothing feasible counts 0 (PW 4 and 5)
    assert result.intervals_where("performance_first", "deepvm") == (
        (0.0, 0.0), (2.0, 2.0), (5.0, 5.0))
    assert result.intervals_where("deepvm", "performance_first") == ((3.0, 4.0),)
    # a difference within the tolerance is a tie
    assert result.intervals_where("performance_first", "deepvm", tolerance=1.0) == (
        (5.0, 5.0),)
    assert result.intervals_where("deepvm", "deepvm") == ()


def test_findings_on_a_hand_made_sweep() -> None:
    result = hand_made({
        "deepvm": [None, 2.0, 4.0, 5.0],
        "deepvm_performance": [1.0, 3.0, 4.0, 10.0],
        "performance_first": [1.0, 2.0, 4.5, 5.0],
        "cost_first": [0.0, 2.0, 4.0, 4.0],
        "deepvm_noscale": [0.0, 1.0, 4.0, 4.0],
    })
    assert result.findings() == SweepFindings(
        pf_beats_deepvm=((0.0, 0.0), (2.0, 2.0)),
        noscale_below_cost_first=((1.0, 1.0),),
        mean_gain=pytest.approx((0.5 + 0.0 + 1.0) / 3),  # only where DeepVM finds something
        max_ratio=2.0,
    )


def test_findings_when_deepvm_finds_nothing() -> None:
    result = hand_made({"deepvm_performance": [1.0, 2.0]})
    found = result.findings()
    assert (found.mean_gain, found.max_ratio) == (0.0, 1.0)
    assert found.pf_beats_deepvm == () and found.noscale_below_cost_first == ()


# ----------------------------------------------------------------------------- Fig. 3


def test_fig3_intervals_where(fig3: SweepResult) -> None:
    """model.md: Performance-First beats DeepVM (paper Z) at PW 0.8-1.3 and 9.5-10.0."""
    assert fig3.intervals_where("performance_first", "deepvm") == ((0.8, 1.3), (9.5, 10.0))
    assert fig3.intervals_where("cost_first", "deepvm_noscale") == ()  # NoScale never below
    # the performance objective is never beaten by any policy
    for policy in SWEEP_POLICIES:
        assert fig3.intervals_where(policy, "deepvm_performance") == (), policy


def test_fig3_findings(fig3: SweepResult) -> None:
    found = fig3.findings()
    assert found.pf_beats_deepvm == ((0.8, 1.3), (9.5, 10.0))
    assert found.noscale_below_cost_first == ()
    assert found.mean_gain == pytest.approx(0.19, abs=0.01)  # "about 19 % on average"
    assert found.mean_gain == fig3.mean_gain_performance_over_paper()
    assert found.max_ratio == pytest.approx(2.17, abs=0.01)  # "up to 2.2x"
    assert found.max_ratio == fig3.max_ratio_performance_over_paper()
