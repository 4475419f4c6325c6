"""Build once, hand down (issue 23): one candidate domain and one speed basis per scenario.

``recommend`` (either solver), ``plan_job`` and the dashboard's Recommend page build the
scenario's candidate domain once and hand it to the solvers, the explanations, the top-k, the
by-accelerator table and the card's job estimate; the job's one-VM times are derived once (one
``check_workload``). The builders are counted by wrapping them in every loaded module that holds
them; nothing of the results is compared here (the golden files and the oracles do that).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import deepvm_core.search.candidates as candidates
import deepvm_core.workload.speed as speed
import deepvm_core.workload.workload as workload
from deepvm_core.catalog import Catalog
from deepvm_core.catalog.store import DEFAULT_CATALOG, load_catalog
from deepvm_core.model import Scenario
from deepvm_core.pipeline.plan import plan_job
from deepvm_core.recommend.recommendation import recommend
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import example_workload
from tests.factories import make_catalog

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
#: What is counted: the candidate domain, a job's speed basis, and the workload check.
BUILDERS: dict[str, Callable[..., Any]] = {
    "build_domain": candidates.build_domain,
    "speed_basis": speed.speed_basis,
    "check_workload": workload.check_workload,
}


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Calls of each builder, counted wherever a loaded module of the project holds it (a
    module imported later takes the wrapped one from its home module)."""
    counts: Counter[str] = Counter()

    def counting(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return real(*args, **kwargs)
        return wrapper

    for name, real in BUILDERS.items():
        wrapped = counting(name, real)
        for module in list(sys.modules.values()):
            if (getattr(module, "__name__", "").startswith(("deepvm_core", "dashboard"))
                    and getattr(module, name, None) is real):
                monkeypatch.setattr(module, name, wrapped)
    return counts


@pytest.fixture(scope="module")
def today() -> Catalog:
    """The dashboard's default catalog (47 GPU types): several accelerator models have nothing
    within PW 3, so the by-accelerator table needs the cheapest clusters beyond it."""
    return load_catalog(DEFAULT_CATALOG)


@pytest.mark.parametrize("solver", ["enumerate", "ilp"])
@pytest.mark.parametrize("pw", [0.1, 3.0])  # nothing feasible at 0.1: explanations beyond PW
def test_recommend_builds_one_domain(builds: Counter[str], today: Catalog, solver: str,
                                     pw: float) -> None:
    rec = recommend(today, Scenario(pw), solver)  # type: ignore[arg-type]
    assert (rec.best is None) == (pw < 1)
    assert rec.by_accelerator  # the table beyond PW was needed
    # was 2 with the enumeration and 4 to 5 with the integer program (one per call)
    assert builds["build_domain"] == 1
    assert builds["speed_basis"] == 1  # the example job's, without a job


def test_recommend_with_a_job_hands_its_basis_down(builds: Counter[str],
                                                   today: Catalog) -> None:
    basis = speed.speed_basis(today, example_workload(epochs=30))
    builds.clear()
    recommend(today, Scenario(3.0, objective="speed"), "ilp", speed=basis)
    assert builds == Counter({"build_domain": 1})


def test_binding_quotas_build_the_scenario_without_them(builds: Counter[str]) -> None:
    """The one second build: when quotas allow nothing at any price, the explanations (of both
    architectures and of the whole) name the cheapest cluster without them, from one domain of
    another scenario (quotas off)."""
    catalog = make_catalog(quotas=[{"family": "G", "on_demand_vcpus": 0, "spot_vcpus": 0}])
    rec = recommend(catalog, Scenario(100.0, 0.3, 2.0))
    assert rec.explanation is not None
    assert rec.explanation.binding == ("quota",)
    assert builds["build_domain"] == 2


def test_plan_derives_the_job_once(builds: Counter[str], today: Catalog) -> None:
    plan_job(today, Scenario(3.0), example_workload(), pw_usd_per_hour=3.0,
             speedup=SpeedupModel(), trials=100)
    # were 2 domains, 3 derivations of the one-VM times and 5 workload checks
    assert builds == Counter({"build_domain": 1, "speed_basis": 1, "check_workload": 1})


def test_recommend_page_builds_one_domain(builds: Counter[str],
                                          monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    """The default page (today's catalog, PW 3, the example job): one domain and one speed basis
    for the card, its job estimate, the top-k, the policy comparison, the architectures and
    the accelerator table (it was four domains: recommend's two, a one-point sweep for the
    policy comparison, and the job estimate's)."""
    monkeypatch.setenv("DEEPVM_USER_CATALOG_DIR", str(tmp_path / "user"))
    st.cache_data.clear()
    st.cache_resource.clear()
    app = AppTest.from_file(str(APP), default_timeout=120)
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    assert any("RECOMMENDED CONFIGURATION" in c.value for c in app.main.caption)
    assert builds == Counter({"build_domain": 1, "speed_basis": 1, "check_workload": 1})
    builds.clear()
    app.run()  # a rerun reads the caches
    assert builds == Counter()
