"""The core at the catalog size limit (``data/README.md``, Limits): a catalog of
``MAX_GPU_TYPES`` GPU and ``MAX_CPU_TYPES`` CPU types stays interactive.

Measured on 2 shared cores (issue 9), quotas off, 256 nodes: recommend with the enumeration
0.25-0.85 s (top-3 to top-100, any PW), the Fig. 3 sweep 0.3 s, FLOPP 5 ms. The bounds below
leave a wide margin for a loaded machine; before, the same calls took 25 s (top-3), 41 s and
5 GB (top-100) and 7 s (sweep).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from bench.synthetic import synthetic_catalog
from deepvm_core.catalog import MAX_CPU_TYPES, MAX_GPU_TYPES, Catalog
from deepvm_core.model import Scenario, flopp_ranking
from deepvm_core.recommend.recommendation import recommend
from deepvm_core.recommend.sweep import pw_grid, sweep


@pytest.fixture(scope="module")
def largest() -> Catalog:
    return synthetic_catalog(MAX_GPU_TYPES, MAX_CPU_TYPES)


def seconds(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


@pytest.mark.parametrize("pw, top_k", [(3.0, 3), (100.0, 3), (1e6, 100)])
def test_recommend_at_the_size_limit_is_interactive(largest: Catalog, pw: float,
                                                    top_k: int) -> None:
    scenario = Scenario(pw, 0.3, 2.0, use_quotas=False)
    assert seconds(lambda: recommend(largest, scenario, "enumerate", top_k=top_k)) < 5.0


def test_sweep_and_flopp_at_the_size_limit_are_interactive(largest: Catalog) -> None:
    scenario = Scenario(0.0, 0.3, 2.0, use_quotas=False)
    assert seconds(lambda: sweep(largest, scenario, pw_grid(0.0, 10.0, 0.1))) < 5.0
    assert seconds(lambda: flopp_ranking(largest)) < 1.0
