"""The dashboard's "Launch on AWS" panel (``dashboard/launch_panel.py``), with AppTest."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from deepvm_core.cli import main
from deepvm_core.cloud.fleet import validate_request

REPO = Path(__file__).resolve().parent.parent


def panel_app(export: dict, export_text: str | None) -> None:
    """The panel alone. AppTest runs this function's source as a script, without this
    module's imports: annotations must evaluate on their own."""
    import streamlit as st

    from dashboard import launch_panel

    bundle = launch_panel.render_launch_panel(export, export_text=export_text)
    st.session_state["test_files"] = None if bundle is None else {
        name: data.decode() for name, data in bundle.files.items()}
    st.session_state["test_zip_size"] = None if bundle is None else len(bundle.zip_bytes())


@pytest.fixture(scope="module")
def table4_text() -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["recommend", "--catalog", "aws-us-east-1-2023-10", "--pw", "3",
                     "--format", "json"]) == 0
    return buffer.getvalue()


def app_for(export: dict[str, Any], export_text: str | None = None) -> AppTest:
    at = AppTest.from_function(panel_app, args=(export, export_text), default_timeout=60)
    return at.run()


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def test_panel_shows_the_requests_and_never_launches(table4_text: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    at = app_for(json.loads(table4_text), table4_text)
    no_exception(at)
    assert any("The dashboard never launches: a shared dashboard must not spend the server's "
               "credentials." in c.value for c in at.caption)
    assert at.info
    assert "GPU launch template" in at.info[0].value
    assert at.session_state["test_files"] is None

    at.text_input(key="launch_gpu_template").input("gpu-workers").run()
    at.text_input(key="launch_cpu_template").input("memory-nodes:2").run()
    at.text_input(key="launch_subnets").input(
        "subnet-0aaaaaaaaaaaaaaaa, subnet-0bbbbbbbbbbbbbbbb").run()
    no_exception(at)
    assert not at.error
    files = at.session_state["test_files"]
    assert sorted(files) == ["launch.txt", "on-demand.json", "spot-workers.json"]
    spot = json.loads(files["spot-workers.json"])
    validate_request(spot)
    assert spot["TargetCapacitySpecification"]["SpotTargetCapacity"] == 17
    assert len(spot["LaunchTemplateConfigs"][0]["Overrides"]) == 2
    codes = [c.value for c in at.code]
    assert any(c.startswith("deepvm launch export.json --gpu-template gpu-workers "
                            "--cpu-template memory-nodes:2 --subnet subnet-0aaaaaaaaaaaaaaaa")
               for c in codes)
    assert any('"SpotTargetCapacity": 17' in c for c in codes)
    assert at.session_state["test_zip_size"] > 0
    plan_id = hashlib.sha256(table4_text.encode()).hexdigest()[:12]
    assert any(f"Plan `{plan_id}`: TR: 17 x g4dn.xlarge" in m.value for m in at.markdown)


def test_panel_errors_are_shown_not_raised(table4_text: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    at = app_for(json.loads(table4_text))
    at.text_input(key="launch_gpu_template").input("gpu-workers").run()
    no_exception(at)
    assert at.error
    assert "1 x c5.xlarge on-demand (memory-node)" in at.error[0].value
    at.text_input(key="launch_cpu_template").input("memory-nodes").run()
    at.text_input(key="launch_subnets").input("not-a-subnet").run()
    no_exception(at)
    assert at.error
    assert "is not a subnet id" in at.error[0].value

    nothing = json.loads(table4_text)
    nothing["chosen"] = None
    nothing["deepvm"] = []
    at = app_for(nothing)
    no_exception(at)
    assert at.warning
    assert "Nothing to launch" in at.warning[0].value
