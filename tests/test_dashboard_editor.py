"""AppTest tests of the catalog editor: edits, invalid cells, uploads, save, reset, bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from app_pages import APP, headline, no_errors
from streamlit.testing.v1 import AppTest

from deepvm_core.catalog.artifact import catalog_to_artifact_dict
from deepvm_core.catalog.catalog import catalog_to_dict
from deepvm_core.catalog.store import load_catalog
from tests.app_expectations import pinned

EDITOR = "views/catalog_editor.py"
RECOMMEND = "views/recommend.py"


@pytest.fixture
def user_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "user"
    monkeypatch.setenv("DEEPVM_USER_CATALOG_DIR", str(folder))
    return folder


@pytest.fixture
def editor(user_dir) -> AppTest:
    """The dashboard on the catalog editor page (AWS catalog)."""
    del user_dir  # requested for its set-up only (a temporary per-user folder)
    at = pinned(AppTest.from_file(str(APP), default_timeout=60)).run()
    return at.switch_page(EDITOR).run()


def edit(at: AppTest, table: int, *, edited=None, added=None, deleted=None) -> AppTest:
    """Apply a data-editor edit (as the browser would send it) to table ``table`` and rerun.

    Tables: 0 GPU VMs, 1 CPU VMs, 2 quotas, 3 network saturation.
    """
    key = at.data_editor[table].key
    at.session_state[key] = {"edited_rows": edited or {}, "added_rows": added or [],
                             "deleted_rows": deleted or []}
    return at.run()


def sidebar_catalog(at: AppTest) -> str:
    return next(m.value for m in at.sidebar.markdown if m.value.startswith("**")
                and "pricing" not in m.value)


def problems(at: AppTest) -> list[dict]:
    return [row for d in at.dataframe if "Problem" in d.value.columns
            for row in d.value.to_dict("records")]


def test_editor_shows_the_four_tables(editor: AppTest) -> None:
    no_errors(editor)
    assert [d.editing_mode for d in editor.data_editor] == ["dynamic"] * 4
    gpus = editor.data_editor[0].value
    assert list(gpus["name"]) == ["g3s.xlarge", "g4dn.xlarge", "g5.xlarge"]
    assert "scaling_b" in gpus.columns
    assert any(s.value.startswith("Valid:") for s in editor.success)


def test_editing_a_row_changes_the_result_on_every_page(editor: AppTest) -> None:
    edit(editor, 0, edited={1: {"spot_usd_per_hour": 0.5}})  # g4dn.xlarge spot price
    no_errors(editor)
    assert "(edited)" in sidebar_catalog(editor)
    editor.switch_page(RECOMMEND).run()
    no_errors(editor)
    assert "g4dn.xlarge" not in headline(editor)
    assert "aws-us-east-1-2023-10 (edited)" in sidebar_catalog(editor)
    # the edit survives leaving the editor and coming back
    editor.switch_page(EDITOR).run()
    assert editor.data_editor[0].value["spot_usd_per_hour"].tolist()[1] == "0.5"  # cells are text


def test_invalid_cell_shows_the_core_message_and_keeps_the_last_valid(editor: AppTest) -> None:
    edit(editor, 0, edited={1: {"spot_usd_per_hour": 0.5}})
    editor.switch_page(RECOMMEND).run()
    valid_headline = headline(editor)
    editor.switch_page(EDITOR).run()
    edit(editor, 0, edited={1: {"spot_usd_per_hour": -1.0}})
    no_errors(editor)
    assert any("stays in use" in e.value for e in editor.error)
    assert problems(editor) == [{"Table": "GPU VMs", "Row": 2, "Instance": "g4dn.xlarge",
                                 "Column": "Spot $/h", "Value": "-1.0",
                                 "Problem": "must be greater than 0"}]
    assert editor.button(key="ce_save").disabled
    editor.switch_page(RECOMMEND).run()
    assert headline(editor) == valid_headline
    # the invalid draft is still there when coming back, and fixing it applies it
    editor.switch_page(EDITOR).run()
    assert problems(editor)
    edit(editor, 0, edited={1: {"spot_usd_per_hour": 0.1578}})
    assert not problems(editor)
    assert "(edited)" not in sidebar_catalog(editor)


def draft_notice(at: AppTest) -> list[str]:
    return [w.value for w in at.sidebar.warning if "unsaved, invalid changes" in w.value]


def test_other_pages_say_the_editor_has_invalid_changes(editor: AppTest) -> None:
    edit(editor, 0, edited={1: {"spot_usd_per_hour": -1.0}})
    assert not draft_notice(editor)  # the editor itself lists the problems
    for page in (RECOMMEND, "views/instances.py", "views/simulate.py", "views/method.py"):
        editor.switch_page(page).run()
        no_errors(editor)
        assert draft_notice(editor) == [
            "The catalog editor has unsaved, invalid changes to aws-us-east-1-2023-10 "
            "(1 problem); the last valid catalog is in use."]
    editor.switch_page(EDITOR).run()
    editor.button(key="ce_reset").click().run()
    editor.switch_page(RECOMMEND).run()
    assert not draft_notice(editor)
    # another catalog's invalid draft says nothing while that catalog is not in use
    editor.switch_page(EDITOR).run()
    edit(editor, 0, edited={1: {"spot_usd_per_hour": -1.0}})
    editor.selectbox(key="sb_catalog").select("paper-simulated").run()
    editor.switch_page(RECOMMEND).run()
    assert not draft_notice(editor)


def test_added_row_and_duplicate_name(editor: AppTest) -> None:
    row = {"name": "g4dn.xlarge", "family": "G", "on_demand_usd_per_hour": 0.3,
           "spot_usd_per_hour": 0.05, "vcpus": 4, "memory_gib": 16, "network_gbps": 25,
           "eflops": 377}
    edit(editor, 0, added=[row])
    no_errors(editor)
    assert problems(editor) == [{"Table": "GPU VMs", "Row": 4, "Instance": "g4dn.xlarge",
                                 "Column": "Name", "Value": "g4dn.xlarge",
                                 "Problem": "duplicate name (also in GPU VMs)"}]
    edit(editor, 0, added=[{**row, "name": "cheap.xlarge"}])
    assert not editor.error
    assert any(s.value.startswith("Valid:") for s in editor.success)
    assert [p["Problem"] for p in problems(editor)] == [  # a warning, not an error
        "no scaling parameters: the scaling factor K is taken as 1"]
    editor.switch_page(RECOMMEND).run()
    assert "cheap.xlarge" in headline(editor)
    assert any("K = 1 assumed for: cheap.xlarge" in i.value for i in editor.info)


def test_a_catalog_without_gpu_vms_is_invalid(editor: AppTest) -> None:
    editor.switch_page(RECOMMEND).run()
    before = headline(editor)
    editor.switch_page(EDITOR).run()
    edit(editor, 0, deleted=[0, 1, 2])
    no_errors(editor)
    assert not any(s.value.startswith("Valid:") for s in editor.success)
    assert any("stays in use" in e.value for e in editor.error)
    assert problems(editor) == [{
        "Table": "GPU VMs", "Row": None, "Instance": "", "Column": "", "Value": "[]",
        "Problem": "no GPU VM: a catalog needs at least one, or no cluster can be built"}]
    assert editor.button(key="ce_save").disabled
    editor.switch_page(RECOMMEND).run()
    no_errors(editor)
    assert headline(editor) == before
    assert "(edited)" not in sidebar_catalog(editor)


def test_an_upload_without_gpu_vms_is_refused(editor: AppTest) -> None:
    data = catalog_to_dict(load_catalog("paper-simulated"))
    data["gpu_types"] = []
    editor.file_uploader(key="ce_upload").upload("no-gpus.json", json.dumps(data).encode())
    editor.run()
    no_errors(editor)
    assert any("no-gpus.json was not loaded" in e.value for e in editor.error)
    assert [p["Problem"] for p in problems(editor)] == [
        "no GPU VM: a catalog needs at least one, or no cluster can be built"]
    assert editor.session_state["sb_catalog"] == "aws-us-east-1-2023-10"


def test_a_saved_catalog_without_gpu_vms_explains_itself(user_dir: Path) -> None:
    """A file without GPU types is invalid by the core's one rule (issue 16: `deepvm catalog
    validate` says so too); every page still opens and says the file is invalid."""
    user_dir.mkdir(parents=True)
    data = catalog_to_dict(load_catalog("aws-us-east-1-2023-10"))
    data["gpu_types"] = []
    (user_dir / "no-gpus.json").write_text(json.dumps(data))
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params["catalog"] = "user:no-gpus"
    at.run()
    for page in ("views/instances.py", "views/simulate.py", "views/method.py", EDITOR,
                 RECOMMEND):
        at.switch_page(page).run()
        no_errors(at)
        assert any("no-gpus.json is invalid" in e.value for e in at.error)


def test_catalog_without_cpu_vms(editor: AppTest) -> None:
    edit(editor, 1, deleted=list(range(8)))
    no_errors(editor)
    for page in ("views/recommend.py", "views/instances.py", "views/simulate.py",
                 "views/method.py"):
        editor.switch_page(page).run()
        no_errors(editor)
    editor.switch_page(RECOMMEND).run()
    # no memory node: Single Anchor only
    assert headline(editor).startswith("### Single Anchor")
    assert any("no CPU VM types" in w.value for w in editor.main.warning)


def test_empty_catalog(editor: AppTest) -> None:
    edit(editor, 0, deleted=[0, 1, 2])
    edit(editor, 1, deleted=list(range(8)))
    no_errors(editor)
    assert any("no GPU VM" in p["Problem"] for p in problems(editor))
    editor.switch_page(RECOMMEND).run()
    no_errors(editor)
    assert headline(editor).startswith("### Tiering")  # the last valid catalog


def test_upload_artifact_format_is_accepted(editor: AppTest) -> None:
    artifact = catalog_to_artifact_dict(load_catalog("aws-us-east-1-2023-10"))
    for row in artifact["instances"]:  # the artifact keeps real instances' fits in code
        for key in ("a", "b", "c"):
            row.pop(key, None)
    artifact["instances"].append({"name": "new.xlarge", "type": "G", "ondemand_price": 9.0,
                                  "spot_price": 3.0, "vCPU": 4, "memory": 16,
                                  "network_bandwidth": 10, "flops": 100})
    data = json.dumps(artifact).encode()
    editor.file_uploader(key="ce_upload").upload("artifact_data.json", data, "application/json")
    editor.run()
    no_errors(editor)
    assert re.fullmatch(r"upload:[0-9a-f]{16}", editor.session_state["sb_catalog"])
    assert any("Loaded artifact_data.json" in s.value for s in editor.success)
    assert "artifact\\_data" in sidebar_catalog(editor)  # markdown: shown "artifact_data"
    assert list(editor.data_editor[0].value["name"]) == ["g3s.xlarge", "g4dn.xlarge", "g5.xlarge",
                                                         "new.xlarge"]
    editor.switch_page(RECOMMEND).run()
    no_errors(editor)
    assert headline(editor) == "### Tiering · 17 × g4dn.xlarge spot + 1 × c5.xlarge memory node"
    assert any("K = 1 assumed for: new.xlarge" in i.value for i in editor.info)


@pytest.mark.parametrize(("content", "message"), [
    (b"{not json", "malformed JSON"),
    (b"[1, 2]", "a catalog must be a JSON object"),
    (json.dumps({"instances": [{"name": "x", "type": "G", "ondemand_price": -1}]}).encode(),
     "must be greater than 0"),
    (b"[" * 100_000 + b"]" * 100_000, "the JSON nests 100,000 levels deep"),
])
def test_bad_upload_is_refused_and_keeps_the_active_catalog(editor: AppTest, content: bytes,
                                                           message: str) -> None:
    editor.file_uploader(key="ce_upload").upload("bad.json", content, "application/json")
    editor.run()
    no_errors(editor)
    assert any("bad.json was not loaded" in e.value for e in editor.error)
    assert any(message in p["Problem"] for p in problems(editor))
    assert editor.session_state["sb_catalog"] == "aws-us-east-1-2023-10"


def test_upload_our_format_round_trip(editor: AppTest) -> None:
    ours = catalog_to_dict(load_catalog("paper-simulated"))
    ours["name"] = "my-sim"
    editor.file_uploader(key="ce_upload").upload("x.json", json.dumps(ours).encode())
    editor.run()
    no_errors(editor)
    assert re.fullmatch(r"upload:[0-9a-f]{16}", editor.session_state["sb_catalog"])
    assert "my-sim" in sidebar_catalog(editor)
    assert len(editor.data_editor[0].value) == 10


def test_an_upload_survives_a_reconnect(editor: AppTest, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 9: a big upload made the browser reconnect into a new session, which lost it.
    The upload is stored on the server by its sha256 and its key is in the URL, so a new
    session (or a shared link) on the same URL finds and uses it."""
    uploads = tmp_path / "uploads"
    monkeypatch.setenv("DEEPVM_UPLOAD_CATALOG_DIR", str(uploads))
    ours = catalog_to_dict(load_catalog("paper-simulated"))
    ours["name"] = "rows10k-gpu"
    editor.file_uploader(key="ce_upload").upload("rows10k-gpu.json", json.dumps(ours).encode())
    editor.run()
    no_errors(editor)
    cid = editor.session_state["sb_catalog"]
    digest = load_catalog(next(uploads.glob("*.json"))).sha256
    assert cid == f"upload:{digest[:16]}"
    assert [p.name for p in uploads.glob("*.json")] == [f"{digest}.json"]
    assert editor.query_params["catalog"] == cid

    fresh = AppTest.from_file(str(APP), default_timeout=60)
    fresh.query_params["catalog"] = cid
    fresh.query_params["pw"] = "3"
    fresh.run()
    no_errors(fresh)
    assert not any("not a catalog available here" in w.value for w in fresh.warning)
    assert fresh.session_state["sb_catalog"] == cid
    assert "rows10k-gpu" in sidebar_catalog(fresh)
    assert headline(fresh).startswith("### ")

    unknown = AppTest.from_file(str(APP), default_timeout=60)
    unknown.query_params["catalog"] = "upload:0123456789abcdef"
    unknown.run()
    no_errors(unknown)
    assert any("not a catalog available here" in w.value for w in unknown.warning)


def test_save_as_named_user_catalog(editor: AppTest, user_dir: Path) -> None:
    edit(editor, 0, edited={1: {"spot_usd_per_hour": 0.5}})
    editor.text_input(key="ce_save_name").input("my-aws")
    editor.button(key="ce_save").click().run()
    no_errors(editor)
    saved = json.loads((user_dir / "my-aws.json").read_text())
    assert saved["name"] == "my-aws"
    assert saved["gpu_types"][1]["spot_usd_per_hour"] == 0.5
    assert editor.session_state["sb_catalog"] == "user:my-aws"
    assert "my-aws" in sidebar_catalog(editor)
    assert "(edited)" not in sidebar_catalog(editor)
    options = editor.selectbox(key="sb_catalog").options
    assert any(o.startswith("my-aws (saved) · prices of ") for o in options), options


def test_save_never_replaces_a_saved_catalog(editor: AppTest, user_dir: Path) -> None:
    edit(editor, 0, edited={1: {"spot_usd_per_hour": 0.5}})
    editor.text_input(key="ce_save_name").input("my-aws")
    editor.button(key="ce_save").click().run()
    first = (user_dir / "my-aws.json").read_text()
    edit(editor, 0, edited={1: {"spot_usd_per_hour": 0.25}})
    editor.text_input(key="ce_save_name").input("my-aws")
    editor.button(key="ce_save").click().run()
    no_errors(editor)
    assert (user_dir / "my-aws.json").read_text() == first
    assert any("Not saved: a saved catalog is already named 'my-aws'" in e.value
               for e in editor.error)
    assert editor.text_input(key="ce_save_name").value == "my-aws-2"  # a free name, offered
    assert "(edited)" in sidebar_catalog(editor)  # the edit is still there
    editor.button(key="ce_save").click().run()
    no_errors(editor)
    assert (user_dir / "my-aws.json").read_text() == first
    saved = json.loads((user_dir / "my-aws-2.json").read_text())
    assert saved["gpu_types"][1]["spot_usd_per_hour"] == 0.25
    assert editor.session_state["sb_catalog"] == "user:my-aws-2"


def test_save_refuses_a_bundled_name(editor: AppTest, user_dir: Path) -> None:
    editor.text_input(key="ce_save_name").input("paper-simulated")
    editor.button(key="ce_save").click().run()
    no_errors(editor)
    assert any("bundled catalog's" in e.value for e in editor.error)
    assert not (user_dir / "paper-simulated.json").exists()


def test_reset_discards_the_edits(editor: AppTest) -> None:
    edit(editor, 2, edited={0: {"spot_vcpus": 256}})  # G spot quota
    assert "(edited)" in sidebar_catalog(editor)
    editor.button(key="ce_reset").click().run()
    no_errors(editor)
    assert "(edited)" not in sidebar_catalog(editor)
    assert editor.data_editor[2].value["spot_vcpus"].tolist()[0] == "128"


def test_rows_are_numbered_in_the_grid_as_in_the_problems(editor: AppTest) -> None:
    assert editor.data_editor[1].value.index.tolist() == list(range(1, 9))
    # rows 1 and 2 go, the others keep their numbers; the grid counts edits in its original rows
    edit(editor, 1, deleted=[0, 1], edited={3: {"memory_gib": "-2"}})
    assert problems(editor) == [{"Table": "CPU VMs (memory nodes)", "Row": 4,
                                 "Instance": "c5.xlarge", "Column": "GiB", "Value": "-2.0",
                                 "Problem": "must be greater than 0"}]


def test_a_cpu_vm_named_like_a_gpu_vm(editor: AppTest) -> None:
    edit(editor, 1, edited={2: {"name": "g5.xlarge"}})
    assert [(p["Table"], p["Row"], p["Problem"]) for p in problems(editor)] == [
        ("CPU VMs (memory nodes)", 3, "duplicate name (also in GPU VMs)")]


def test_invalid_saturation_table(editor: AppTest) -> None:
    edit(editor, 3, deleted=list(range(8)))
    no_errors(editor)
    assert [(p["Table"], p["Row"], p["Column"]) for p in problems(editor)] == [
        ("Network saturation", None, "")]
    assert "non-empty list" in problems(editor)[0]["Problem"]
    edit(editor, 3, edited={2: {"bandwidth_gbps": 1.0}})
    assert any("must increase strictly" in p["Problem"] for p in problems(editor))


def test_invalid_saved_catalog_shows_its_problems_on_every_page(user_dir: Path) -> None:
    user_dir.mkdir(parents=True)
    broken = catalog_to_dict(load_catalog("aws-us-east-1-2023-10"))
    broken["gpu_types"][0]["vcpus"] = 0
    (user_dir / "broken.json").write_text(json.dumps(broken))
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params["catalog"] = "user:broken"
    at.run()
    for page in ("views/recommend.py", "views/instances.py", EDITOR, "views/simulate.py"):
        at.switch_page(page).run()
        no_errors(at)
        assert any("is invalid: 1 problem(s)" in e.value for e in at.main.error)
        assert problems(at)[0]["Problem"] == "must be greater than 0"
        assert any("is invalid" in e.value for e in at.sidebar.error)
    at.selectbox(key="sb_catalog").select("paper-simulated").run()
    no_errors(at)
    assert not at.error


def test_reset_discards_an_invalid_first_edit(editor: AppTest) -> None:
    assert editor.button(key="ce_reset").disabled
    edit(editor, 1, edited={0: {"memory_gib": None}})
    assert problems(editor)[0]["Problem"] == "missing (a number is required)"
    editor.button(key="ce_reset").click().run()
    no_errors(editor)
    assert not problems(editor)
    assert not editor.error
    assert editor.data_editor[1].value["memory_gib"].tolist()[0] == "7.5"
