"""The candidate table (:mod:`deepvm_core.search.candidates`) against hand computations and the
oracle."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deepvm_core.catalog import Catalog
from deepvm_core.errors import InputError
from deepvm_core.model import Arch, Configuration, Scenario
from deepvm_core.search.candidates import build_candidates, build_domain
from deepvm_core.search.ranking import rank_configurations
from deepvm_core.search.selection import top_indices
from deepvm_core.search.solvers.enumeration import top_configurations
from tests import oracle
from tests.factories import catalogs, cpu_row, gpu_row, make_catalog, scenarios


def identity(c: Configuration) -> tuple[str, str, int, str | None, int]:
    return c.architecture, c.gpu, c.gpu_vms, c.cpu, c.memory_nodes


def test_prices_and_objectives_by_hand() -> None:
    """One GPU type (OD 1.0, SP 0.3, 100 eFLOPS, no fit: K = 1) and one memory node type
    (OD 0.2, 10 Gbps: n_sat 20)."""
    cat = make_catalog(gpus=[gpu_row("g", scaling=None)], cpus=[cpu_row("w")])
    table = build_candidates(cat, Scenario(0.0, use_quotas=False, max_nodes=30),
                             memory_node_choices=None)
    rows = {(Arch(int(a)).key, int(n)): i
            for i, (a, n) in enumerate(zip(table.architecture, table.n, strict=True))}
    sa = table.configuration(rows[("single_anchor", 5)])
    assert (sa.gpu_on_demand, sa.gpu_spot, sa.cpu, sa.memory_nodes) == (1, 4, None, 0)
    assert sa.hourly_price_usd == pytest.approx(1.0 + 4 * 0.3)
    assert sa.z_paper == pytest.approx(4 * 100 / 0.3 * 3600 + 100 / 1.0 * 3600)
    assert sa.performance == 500
    i = rows[("tiering", 25)]
    tr = table.configuration(i)
    # m = 25 // n_sat + 1 = 2
    assert (tr.gpu_on_demand, tr.gpu_spot, tr.cpu, tr.memory_nodes) == (0, 25, "w", 2)
    assert tr.hourly_price_usd == pytest.approx(25 * 0.3 + 2 * 0.2)
    assert table.on_demand_usd_per_hour[i] == pytest.approx(2 * 0.2)
    assert table.spot_usd_per_hour[i] == pytest.approx(25 * 0.3)
    assert tr.z_paper == pytest.approx(25 * 100 / 0.3 * 3600)
    assert tr.cluster_flopp == pytest.approx(2500 / tr.hourly_price_usd * 3600)
    # n - 1 <= 30 spot VMs for Single Anchor, n <= 30 for Tiering
    assert max(n for a, n in rows if a == "single_anchor") == 31
    assert max(n for a, n in rows if a == "tiering") == 30


def test_budget_arguments() -> None:
    cat = make_catalog()
    s = Scenario(0.0)
    assert len(build_candidates(cat, s, pw_usd_per_hour=math.inf)) == len(
        build_candidates(cat, s))
    assert len(build_candidates(cat, s, pw_usd_per_hour=0.0)) == 0
    for bad in (-1.0, math.nan, "3"):
        with pytest.raises(InputError) as info:
            build_candidates(cat, s, pw_usd_per_hour=bad)  # type: ignore[arg-type]
        assert info.value.field == "pw_usd_per_hour"
    with pytest.raises(InputError):
        build_candidates(cat, s, memory_node_choices=0)


def assert_same_configurations(table_configs: list[Configuration],
                               want: list[oracle.OracleConfiguration]) -> None:
    """Same configurations in the same order, with the same numbers."""
    assert [identity(c) for c in table_configs] == [o.identity for o in want]
    for c, o in zip(table_configs, want, strict=True):
        assert c.hourly_price_usd == pytest.approx(o.price, rel=1e-12)
        assert c.z_paper == pytest.approx(o.z, rel=1e-12)
        assert c.z_noscale == pytest.approx(o.z_noscale, rel=1e-12)
        assert c.performance == pytest.approx(o.performance, rel=1e-12)


# Spot = on-demand makes the paper's Z of Single Anchor and Tiering equal on paper; the oracle's
# K (math.exp) and the table's (numpy) may then order them differently in the last bit.
exact_catalogs = catalogs(spot_may_equal_on_demand=False)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cat=exact_catalogs, s=scenarios(), budget=st.booleans())
def test_unpruned_table_is_every_configuration_of_the_oracle(cat: Catalog, s: Scenario,
                                                             budget: bool) -> None:
    """``memory_node_choices=None``: every (v, w, n) with its cheapest valid m, priced within PW
    or, with no budget, within quotas and the node cap only."""
    pw = s.pw_usd_per_hour if budget else None
    table = build_candidates(cat, s, pw_usd_per_hour=pw, memory_node_choices=None)
    want = oracle.ranked(oracle.configurations(cat, s, math.inf if pw is None else pw),
                         s.objective)
    assert_same_configurations(
        [table.configuration(i) for i in table.rank_order(s.objective)], want)
    assert np.array_equal(table.on_demand_usd_per_hour + table.spot_usd_per_hour,
                          table.price_usd_per_hour)


@settings(max_examples=60, deadline=None)
@given(cat=exact_catalogs, s=scenarios(), seed=st.integers(0, 2**16),
       noscale=st.booleans())
def test_rank_configurations_is_the_oracles_order(cat: Catalog, s: Scenario, seed: int,
                                                  noscale: bool) -> None:
    table = build_candidates(cat, s, pw_usd_per_hour=s.pw_usd_per_hour, memory_node_choices=None)
    configs = [table.configuration(i) for i in range(len(table))]
    random.Random(seed).shuffle(configs)
    got = [identity(configs[i]) for i in rank_configurations(configs, s.objective,
                                                             noscale=noscale)]
    want = oracle.ranked(oracle.configurations(cat, s, s.pw_usd_per_hour), s.objective, noscale)
    assert got == [o.identity for o in want]


def test_domain_under_a_budget_keeps_only_rows_that_can_be_afforded() -> None:
    """PW 1.0, one GPU type (SP 0.3, OD 1.0) and memory nodes at 0.2 and 0.9: Tiering rows up to
    n = 2 (2 x 0.3 + 0.2 <= 1); Single Anchor rows none (1.0 + 0.3 > 1); the 0.9 memory node is
    dropped (0.9 + 0.3 > 1)."""
    cat = make_catalog(cpus=[cpu_row("cheap"), cpu_row("dear", on_demand_usd_per_hour=0.9)])
    domain = build_domain(cat, Scenario(0.0), pw_usd_per_hour=1.0)
    assert [w.name for w in domain.cpus] == ["cheap"]
    assert list(domain.architecture) == [Arch.TIERING] * 2
    assert list(domain.n) == [1, 2]


@st.composite
def catalogs_with_many_memory_nodes(draw: st.DrawFn) -> Catalog:
    """1-3 GPU types and up to 14 CPU types from few bandwidths, prices and families, so that
    many memory-node types share n_sat and node limit with a GPU type (and prices tie).

    Prices are whole hundredths of a cent (catalog prices have 4 decimals), so two prices
    either tie exactly or differ by at least 1e-4 USD/h: the solver treats prices within
    ``PRICE_TOLERANCE_USD`` as equal, which an exact (price, m, name) sort would not (a
    float 0.05000000000000001 against 0.05 was such a pair)."""
    gpus = [gpu_row(f"g{i}", family=draw(st.sampled_from(["G", "X"])),
                    spot_usd_per_hour=draw(st.sampled_from([0.1, 0.3, 0.45])),
                    network_gbps=draw(st.sampled_from([1.0, 5.0, 10.0, 25.0])),
                    vcpus=draw(st.sampled_from([2, 4])))
            for i in range(draw(st.integers(1, 3)))]
    cpus = [cpu_row(f"w{i:02d}", family=draw(st.sampled_from(["C", "M", "X"])),
                    on_demand_usd_per_hour=draw(st.one_of(
                        st.sampled_from([0.1, 0.2, 0.25]),
                        st.floats(0.05, 0.5).map(lambda p: round(p, 4)))),
                    vcpus=draw(st.sampled_from([1, 2, 4])),
                    memory_gib=draw(st.sampled_from([0.5, 4.0, 16.0])),
                    network_gbps=draw(st.sampled_from([0.3, 1.7, 5.0, 10.0, 25.0, 40.0])))
            for i in draw(st.permutations(range(draw(st.integers(1, 14)))))]
    quotas = [{"family": f, "on_demand_vcpus": draw(st.integers(0, 24)),
               "spot_vcpus": draw(st.integers(0, 64))}
              for f in ("G", "C", "M") if draw(st.booleans())]
    return make_catalog(gpus, cpus, quotas)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cat=catalogs_with_many_memory_nodes(), s=scenarios(pw_max=8.0, nodes_max=60),
       k=st.integers(1, 4), budget=st.booleans())
def test_memory_node_shortlist_keeps_the_best_of_every_pair(cat: Catalog, s: Scenario, k: int,
                                                            budget: bool) -> None:
    """``memory_node_choices=k`` keeps, per Tiering (v, n), the k best memory-node types by
    (price, m, name) of every pairing, though it pairs each GPU type with a shortlist only."""
    pw = s.pw_usd_per_hour if budget else None
    every = build_candidates(cat, s, pw_usd_per_hour=pw, memory_node_choices=None)
    names = [w.name for w in every.cpus]
    by_row: dict[int, list[tuple[float, int, str, int]]] = {}
    for i in np.flatnonzero(every.architecture == Arch.TIERING):
        by_row.setdefault(int(every.row[i]), []).append(
            (float(every.price_usd_per_hour[i]), int(every.m[i]), names[every.cpu[i]],
             int(every.cpu[i])))
    want = {(row, cpu) for row, pairs in by_row.items() for *_, cpu in sorted(pairs)[:k]}
    want |= {(int(r), -1) for r, a in zip(every.row, every.architecture, strict=True)
             if a == Arch.SINGLE_ANCHOR}
    pruned = build_candidates(cat, s, pw_usd_per_hour=pw, memory_node_choices=k)
    got = list(zip(pruned.row.tolist(), pruned.cpu.tolist(), strict=True))
    assert len(got) == len(set(got))
    assert set(got) == want


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cat=catalogs_with_many_memory_nodes(), s=scenarios(pw_max=8.0, nodes_max=60),
       k=st.integers(1, 12), noscale=st.booleans(), arch=st.sampled_from([None, *Arch]))
def test_top_configurations_from_one_memory_node_per_row_is_the_full_top_k(
        cat: Catalog, s: Scenario, k: int, noscale: bool, arch: Arch | None) -> None:
    """The top-k of the table with every pairing equals :func:`top_configurations` on the table
    with the best memory node of each (v, n) only."""
    pw = s.pw_usd_per_hour
    every = build_candidates(cat, s, pw_usd_per_hour=pw, memory_node_choices=None)
    want = [every.configuration(int(i)) for i in top_indices(
        every, pw, s.objective, k, noscale=noscale, architecture=arch)]
    one = build_candidates(cat, s, pw_usd_per_hour=pw, memory_node_choices=1)
    assert top_configurations(one, pw, s.objective, k, noscale=noscale,
                              architecture=arch) == want
