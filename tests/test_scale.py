"""The core at the catalog size limit (``data/README.md``, Limits): a catalog of
``MAX_GPU_TYPES`` GPU and ``MAX_CPU_TYPES`` CPU types is answered in full.

How long each call takes is a figure of ``bench/run_all.py`` (section 6), not an assert here:
measured on 2 shared cores (issue 9), quotas off, 256 nodes, recommend with the enumeration
took 0.25-0.85 s (top-3 to top-100, any PW), the Fig. 3 sweep 0.3 s, FLOPP 5 ms; before, the
same calls took 25 s (top-3), 41 s and 5 GB (top-100) and 7 s (sweep).
"""

from __future__ import annotations

import pytest

from bench.synthetic import synthetic_catalog
from deepvm_core.catalog import MAX_CPU_TYPES, MAX_GPU_TYPES, Catalog
from deepvm_core.model import Scenario, flopp_ranking
from deepvm_core.recommend.recommendation import recommend
from deepvm_core.recommend.sweep import pw_grid, sweep


@pytest.fixture(scope="module")
def largest() -> Catalog:
    return synthetic_catalog(MAX_GPU_TYPES, MAX_CPU_TYPES)


@pytest.mark.parametrize(("pw", "top_k"), [(3.0, 3), (100.0, 3), (1e6, 100)])
def test_recommend_at_the_size_limit_answers_in_full(largest: Catalog, pw: float,
                                                     top_k: int) -> None:
    scenario = Scenario(pw, 0.3, 2.0, "paper", use_quotas=False)
    rec = recommend(largest, scenario, "enumerate", top_k=top_k)
    assert len(rec.deepvm) == top_k
    assert rec.solved_by == "enumerate"
    assert all(c.hourly_price_usd <= pw + 1e-9 for c in rec.deepvm)
    z = [c.z_paper for c in rec.deepvm]
    assert z == sorted(z, reverse=True)  # best first


def test_sweep_and_flopp_at_the_size_limit_answer_in_full(largest: Catalog) -> None:
    scenario = Scenario(0.0, 0.3, 2.0, use_quotas=False)
    pws = pw_grid(0.0, 10.0, 0.1)
    result = sweep(largest, scenario, pws)
    assert result.pws == tuple(pws)
    assert all(len(configs) == len(pws) for configs in result.configurations.values())
    ranking = flopp_ranking(largest)
    assert len(ranking) == len(largest.solvable_gpu_types) == MAX_GPU_TYPES
    spfp = [r.spot_flopp for r in ranking]
    assert spfp == sorted(spfp, reverse=True)
    assert [r.spot_rank for r in ranking] == list(range(1, MAX_GPU_TYPES + 1))
