"""deepvm_core.recommend.sweep: PW spans where one policy beats another, and the Fig. 3 findings."""

from __future__ import annotations

import numpy as np
import pytest

from deepvm_core.catalog import Catalog
from deepvm_core.model import Configuration, Objective, Scenario
from deepvm_core.recommend.policies import PAPER_POLICIES
from deepvm_core.recommend.sweep import SweepResult, intervals, pw_grid, sweep


@pytest.fixture(scope="module")
def fig3(sim_catalog: Catalog) -> SweepResult:
    """The paper's Fig. 3 setup: simulated catalog, quotas off, PW 0..10 step 0.1."""
    return sweep(sim_catalog, Scenario(0.0, use_quotas=False), pw_grid(0.0, 10.0, 0.1))


def config(performance: float) -> Configuration:
    """A single-anchor cluster with the given performance (the other numbers do not matter)."""
    return Configuration(
        architecture="single_anchor", gpu="g", gpu_spot=0, gpu_on_demand=1, cpu=None,
        memory_nodes=0, hourly_price_usd=1.0, z_paper=1.0, z_noscale=1.0,
        performance=performance, scaling_factor=1.0, eflops_per_gpu=performance)


def hand_made(performances: dict[str, list[float | None]]) -> SweepResult:
    """A sweep over PW 0, 1, ..., with the given performance per policy (``None``: nothing
    feasible); policies not given have nothing feasible anywhere."""
    count = len(next(iter(performances.values())))
    configurations = {
        p: tuple(None if v is None else config(v)
                 for v in performances.get(p, [None] * count))
        for p in PAPER_POLICIES
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


def test_findings_on_a_hand_made_sweep() -> None:
    result = hand_made({
        "deepvm": [None, 2.0, 4.0, 5.0],
        "deepvm_performance": [1.0, 3.0, 4.0, 10.0],
        "performance_first": [1.0, 2.0, 4.5, 5.0],
        "cost_first": [0.0, 2.0, 4.0, 4.0],
        "deepvm_noscale": [0.0, 1.0, 4.0, 4.0],
    })
    found = result.findings()
    assert (found.pf_beats_deepvm, found.noscale_below_cost_first, found.max_ratio) == (
        ((0.0, 0.0), (2.0, 2.0)), ((1.0, 1.0),), 2.0)
    assert found.mean_gain == pytest.approx((0.5 + 0.0 + 1.0) / 3)  # where DeepVM has one


def test_findings_when_deepvm_finds_nothing() -> None:
    result = hand_made({"deepvm_performance": [1.0, 2.0]})
    found = result.findings()
    assert (found.mean_gain, found.max_ratio) == (0.0, 1.0)
    assert found.pf_beats_deepvm == ()
    assert found.noscale_below_cost_first == ()


# ----------------------------------------------------------------------------- Fig. 3


def test_fig3_findings(fig3: SweepResult) -> None:
    """model.md, "Known results": Performance-First beats DeepVM (paper Z) at PW 0.8-1.3 and
    9.5-10.0, NoScale never falls below Cost-First, and the performance objective gains about
    19 % on average and up to 2.2x."""
    found = fig3.findings()
    assert found.pf_beats_deepvm == ((0.8, 1.3), (9.5, 10.0))
    assert found.noscale_below_cost_first == ()
    assert found.mean_gain == pytest.approx(0.19, abs=0.01)
    assert found.max_ratio == pytest.approx(2.2, abs=0.05)
    assert fig3.normalised("deepvm")[-1] == pytest.approx(1.0)


def test_fig3_performance_objective_is_never_beaten(fig3: SweepResult) -> None:
    """model.md: the baselines' configurations lie in the DeepVM search space, so maximising
    performance is >= every policy at every PW."""
    for policy in PAPER_POLICIES:
        assert fig3.intervals_where(policy, "deepvm_performance") == (), policy


def test_fig3_curves_rise_in_steps(fig3: SweepResult) -> None:
    """Each DeepVM variant maximises its objective over a set that grows with PW, so that
    objective is a non-decreasing step function; so is the performance objective's (and
    Cost-First's) performance."""
    runs: tuple[tuple[str, Objective, bool], ...] = (("deepvm", "paper", False),
                                                     ("deepvm_noscale", "paper", True),
                                                     ("deepvm_performance", "performance", False))
    for policy, objective, noscale in runs:
        values = np.array([c.objective_value(objective, noscale=noscale) if c else 0.0
                           for c in fig3.configurations[policy]])
        assert np.all(np.diff(values) >= -1e-9), policy
        assert len(np.unique(values)) < len(values)  # steps, not a smooth curve
    for policy in ("deepvm_performance", "cost_first"):
        assert np.all(np.diff(fig3.performance(policy)) >= -1e-9), policy


def test_fig3_paper_objective_performance_can_drop(fig3: SweepResult) -> None:
    """Z is a proxy (model.md), so the paper objective's performance can fall as PW rises.

    By hand, with the cheapest memory node t3.xlarge (0.1664 USD/h; no K below n = b = 10):
    at PW 0.5, 2 x D (SP 0.165) costs 0.4964 with Z = 2 x 700 / 0.165 x 3600 = 30.5e6, while
    H (SP 0.0756) affords only 4 x H, Z = 4 x 150 / 0.0756 x 3600 = 28.6e6; at PW 0.6, 5 x H
    (0.5444) has Z = 35.7e6 and D still only 2. Performance falls from 2 x 700 to 5 x 150.
    """
    at = {pw: c for pw, c in zip(fig3.pws, fig3.configurations["deepvm"], strict=True)}
    before, after = at[0.5], at[0.6]
    assert before is not None
    assert after is not None
    assert (before.gpu, before.gpu_spot, before.cpu, before.performance) == (
        "D", 2, "t3.xlarge", 1400)
    assert (after.gpu, after.gpu_spot, after.cpu, after.performance) == ("H", 5, "t3.xlarge", 750)
