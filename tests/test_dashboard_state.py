"""The dashboard's defaults are the core's, its session keys are one registry, and the inputs
of a page survive a switch to another page and back (one mechanism: persist_state)."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import keys, url, url_plan
from deepvm_core.model import DEFAULT_MAX_NODES, DEFAULT_OBJECTIVE, MAX_NODES, Scenario
from deepvm_core.pipeline.plan import plan_job
from deepvm_core.recommend import recommendation
from deepvm_core.recommend.sweep import FIG3_PW_GRID
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import EXAMPLE_EPOCH_SECONDS, EXAMPLE_EPOCHS, Workload
from tests.app_expectations import pinned

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
PLAN = "views/plan.py"
RECOMMEND = "views/recommend.py"


def field(cls: type[Any], name: str) -> Any:
    """The core dataclass field's default, read here without the dashboard's helper."""
    (found,) = [f.default for f in dataclasses.fields(cls) if f.name == name]
    return found


def parameter(function: Any, name: str) -> Any:
    return inspect.signature(function).parameters[name].default


# ----------------------------------------------------------------------------- defaults


def test_scenario_url_defaults_are_the_cores() -> None:
    d = url.DEFAULTS
    assert d["ckpt"] == field(Scenario, "checkpoint_gb")  # 0.3 GB
    assert d["buffer"] == field(Scenario, "buffer_checkpoints")  # 2 checkpoints
    # the tools' default objective (the CLI's recommend --objective), not Scenario's field
    assert d["objective"] == DEFAULT_OBJECTIVE == "speed"
    assert d["quotas"] is field(Scenario, "use_quotas")  # on
    assert d["nodes"] == field(Scenario, "max_nodes") == DEFAULT_MAX_NODES  # 256
    assert d["top"] == parameter(recommendation.recommend, "top_k")  # 3
    assert d["solver"] == parameter(recommendation.recommend, "solver")  # "enumerate"
    assert (d["sweep_from"], d["sweep_to"], d["sweep_step"]) == FIG3_PW_GRID  # 0..10 by 0.1
    assert url.TOP_K_RANGE == recommendation.TOP_K_RANGE
    assert url.NODE_CAP_RANGE == (1, MAX_NODES)


def test_plan_url_defaults_are_the_cores() -> None:
    p = {param.name: param.default for param in url_plan.PLAN_PARAMS}
    assert (p["epochs"], p["epoch_s"]) == (EXAMPLE_EPOCHS, EXAMPLE_EPOCH_SECONDS)  # 30, 61.16 s
    assert p["restart_min"] == field(Workload, "restart_hours") * 60  # 0.1 h = 6 min
    # W: None in the core, each type's bucket default (issue 25), -1 in the URL
    assert field(Workload, "wait_hours") is None
    assert p["wait_min"] == url_plan.BUCKET_WAIT_MIN == -1.0
    assert p["disk_gbps"] == field(Workload, "disk_gb_per_second")  # 0.25 GB/s
    assert p["ckpt_fixed_s"] == field(Workload, "checkpoint_fixed_seconds")
    assert p["ckpt_every"] == field(Workload, "checkpoint_every_epochs")
    assert p["ref_nodes"] == field(Workload, "reference_nodes")
    assert p["mtbi_scale"] == field(Workload, "mtbi_scale")
    assert p["speedup"] == field(SpeedupModel, "name")  # "fitted"
    assert p["goal"] == parameter(plan_job, "goal")  # "cheapest"
    assert p["trials"] == parameter(plan_job, "trials")
    assert p["seed"] == parameter(plan_job, "seed")
    # The checkpoint size of a job is the sidebar's, whose default is Scenario's; Workload's
    # must agree, or a job planned with the defaults would contradict the scenario.
    assert field(Workload, "checkpoint_gb") == url.DEFAULTS["ckpt"]


def test_the_registry_holds_every_key_once_with_the_url_defaults() -> None:
    names = [k.name for k in keys.REGISTRY]
    assert len(names) == len(set(names))
    assert {c.key for c in url.CONTROLS} | {c.slider_key for c in url.CONTROLS} <= keys.NAMES
    assert {p.key for p in url_plan.PLAN_PARAMS} <= keys.NAMES
    for c in url.CONTROLS:
        assert keys.NUMBERS[c.name].default == c.default
    for p in url_plan.PLAN_PARAMS:
        assert keys.PLAN[p.name].default == p.default
    assert keys.TOP_K.default == url.DEFAULTS["top"]


def test_a_new_session_gets_fresh_mutable_defaults() -> None:
    first, second = keys.EDITS.initial(), keys.EDITS.initial()
    assert first == {}
    assert first is not second


def test_number_controls_take_keywords_only() -> None:
    c = url.CONTROLS[0]
    with pytest.raises(TypeError):
        url.NumberControl(c.name, c.label, c.help, 1.0, 0.0, 2.0, 0.0, 2.0, 0.1, 0.1,  # type: ignore[misc]
                          "%.1f")


# ----------------------------------------------------------------------------- page switches


@pytest.fixture
def app(tmp_path, monkeypatch) -> AppTest:
    monkeypatch.setenv("DEEPVM_USER_CATALOG_DIR", str(tmp_path / "user"))
    return pinned(AppTest.from_file(str(APP), default_timeout=60))


def test_plan_inputs_survive_a_page_switch(app: AppTest) -> None:
    app.run()
    app.switch_page(PLAN).run()
    app.number_input(key="plan_epochs").set_value(45.0).run()
    app.select_slider(key="plan_mtbi_scale").set_value(2.0).run()
    app.switch_page(RECOMMEND).run()
    assert not app.exception
    assert app.query_params["epochs"] == "45"  # the job stays in the link on every page
    app.switch_page(PLAN).run()
    assert not app.exception
    assert app.number_input(key="plan_epochs").value == 45.0
    assert app.select_slider(key="plan_mtbi_scale").value == 2.0
    assert any(m.value.startswith("### 45 epochs of your job") for m in app.markdown)


def test_the_url_is_written_once_per_run_from_the_registry(app: AppTest) -> None:
    app.query_params.update({"pw": "4.5", "quotas": "off"})
    app.run()
    assert not app.exception
    assert keys.PW.name == "sb_pw"
    assert app.session_state["sb_pw"] == 4.5
    assert app.slider(key="sb_pw_slider").value == 4.5
    assert (app.query_params["pw"], app.query_params["quotas"]) == ("4.5", "off")
    app.switch_page("views/simulate.py").run()
    assert app.query_params["pw"] == "4.5"
    assert app.query_params["page"] == "simulate"


def test_the_url_is_synced_once_per_run(app: AppTest, monkeypatch) -> None:
    from dashboard import state

    calls: list[str] = []
    sync = state.sync_query_params
    monkeypatch.setattr(state, "sync_query_params",
                        lambda page: (calls.append(page), sync(page))[1])
    app.run()
    assert calls == ["recommend"]
    app.switch_page(PLAN).run()  # a page whose own inputs are in the URL
    assert calls == ["recommend", "plan"]
    app.number_input(key="plan_epochs").set_value(12.0).run()
    assert calls == ["recommend", "plan", "plan"]
    assert app.query_params["epochs"] == "12"
