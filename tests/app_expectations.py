"""Expected values of the dashboard's AppTest tests, from the model.md oracle (``tests/oracle.py``,
plain loops over the catalog's raw fields), never from ``deepvm_core``'s solvers.

Each figure a page shows (a configuration, a price, a throughput ratio, a PW range) is checked
twice in the tests: the page's text against a literal, and the literal against these functions.
"""

from __future__ import annotations

import math
from functools import cache

from streamlit.testing.v1 import AppTest

from deepvm_core.catalog.store import PAPER_CATALOG, load_catalog
from deepvm_core.model import Scenario
from tests import oracle
from tests.oracle import OracleConfiguration

AWS = PAPER_CATALOG
SIM = "paper-simulated"


def best(catalog: str, pw: float, **scenario: object) -> OracleConfiguration:
    """The oracle's DeepVM (Z) choice at ``pw`` (the paper's objective unless ``scenario``
    names another)."""
    scenario = {"objective": "paper", **scenario}
    (found,) = oracle.top_k(load_catalog(catalog), Scenario(pw, **scenario), 1)  # type: ignore
    return found


def baselines(catalog: str, pw: float) -> tuple[OracleConfiguration, OracleConfiguration]:
    """The oracle's Cost-First and Performance-First at ``pw`` (quotas on)."""
    cost_first, performance_first = oracle.baselines(load_catalog(catalog), Scenario(pw))
    assert cost_first is not None
    assert performance_first is not None
    return cost_first, performance_first


def cheapest(catalog: str) -> OracleConfiguration:
    """The cheapest configuration with no price bound (quotas on)."""
    found = oracle.configurations(load_catalog(catalog), Scenario(1.0), math.inf)
    return min(found, key=lambda c: c.price)


@cache
def fig3_findings() -> tuple[list[float], list[float]]:
    """The paper's Fig. 3 sweep (PW 0..10 step 0.1, paper-simulated, quotas off, f 0.3 GB,
    buffer 2): the PWs where Performance-First's throughput beats DeepVM (Z)'s, and where
    DeepVM-NoScale's is below Cost-First's."""
    catalog = load_catalog(SIM)
    beats, below = [], []
    for step in range(101):
        pw = step / 10
        scenario = Scenario(pw, 0.3, 2.0, use_quotas=False)
        found = oracle.configurations(catalog, scenario, pw)
        deepvm = oracle.ranked(found, "paper")[:1]
        noscale = oracle.ranked(found, "paper", noscale=True)[:1]
        cost_first, performance_first = oracle.baselines(catalog, scenario, found)
        if deepvm and performance_first and performance_first.performance > deepvm[0].performance:
            beats.append(pw)
        if noscale and cost_first and noscale[0].performance < cost_first.performance:
            below.append(pw)
    return beats, below


def pinned(at: AppTest, catalog: str = AWS) -> AppTest:
    """``at`` opened on ``catalog`` (the paper's by default): the figures of these tests are
    the 2023-10 catalog's, the dashboard's default catalog is today's (``DEFAULT_CATALOG``)."""
    at.query_params["catalog"] = catalog
    return at
