"""Reproducible exports (issue 9, item 4): the rows an export's configurations use, an edited
catalog's changes, the file name, and ``deepvm recommend --replay``."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli as run
from hypothesis import HealthCheck, given, settings

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.schema import instance_row
from deepvm_core.catalog.store import load_catalog, save_catalog, save_user_catalog
from deepvm_core.cli import main
from deepvm_core.errors import InputError
from deepvm_core.io.export import export_file_name, recommendation_to_dict
from deepvm_core.io.replay import ExportError, rebuild_catalog, replay
from deepvm_core.model import Scenario
from deepvm_core.recommend.recommendation import recommend
from tests.factories import catalogs, scenarios

AWS = "aws-us-east-1-2023-10"


def with_spot(catalog: Catalog, name: str, price: float) -> Catalog:
    """``catalog`` with the spot price of GPU type ``name`` edited."""
    return replace(catalog, gpu_types=tuple(
        replace(g, spot_usd_per_hour=price) if g.name == name else g for g in catalog.gpu_types))


def export(catalog: Catalog, scenario: Scenario, base: Catalog | None = None,
           **kwargs: Any) -> dict[str, Any]:
    rec = recommend(catalog, scenario, **kwargs)
    return recommendation_to_dict(rec, catalog, base=base)


def write(tmp_path: Path, doc: object, name: str = "plan.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc, indent=2))
    return str(path)


# ----------------------------------------------------------------------------- the export


def test_the_export_holds_the_rows_its_configurations_use(aws_catalog: Catalog) -> None:
    doc = export(aws_catalog, Scenario(3.0))
    record = doc["catalog"]
    used = {c["gpu"]["name"] for c in doc["deepvm"]} | {
        c["cpu"]["name"] for c in doc["deepvm"] if c["cpu"]} | {
        doc[k]["gpu"]["name"] for k in ("cost_first", "performance_first")}
    rows = record["instance_types"]
    assert {r["name"] for r in rows["gpu_types"] + rows["cpu_types"]} == used | {
        c["gpu"]["name"] for c in doc["best_per_architecture"].values()}
    g4dn = rows["gpu_types"][0]
    assert g4dn == {**instance_row(aws_catalog.instance("g4dn.xlarge")),
                    "source": f"{AWS}, prices 2023-10-01"}
    assert {q["family"] for q in record["quotas"]} == {
        r["family"] for kind in rows.values() for r in kind} & {
        q.family for q in aws_catalog.quotas}
    assert len(record["network_saturation"]) == len(aws_catalog.saturation)
    assert record["source"] == aws_catalog.source
    assert record["edited"] is False
    assert "changes" not in record
    assert "base" not in record


def test_an_edited_price_is_in_the_export_with_what_changed(aws_catalog: Catalog) -> None:
    """Issue 9: after editing a price the export said only the base catalog's name."""
    edited = with_spot(aws_catalog, "g4dn.xlarge", 0.2)
    record = export(edited, Scenario(3.0), base=aws_catalog)["catalog"]
    assert record["name"] == AWS
    assert record["sha256"] == edited.sha256
    assert record["edited"] is True
    assert record["changes"] == ["gpu_types[g4dn.xlarge].spot_usd_per_hour: 0.1578 -> 0.2"]
    assert record["base"] == {"name": AWS, "sha256": aws_catalog.sha256,
                              "prices_date": "2023-10-01"}
    g4dn = next(r for r in record["instance_types"]["gpu_types"] if r["name"] == "g4dn.xlarge")
    assert g4dn["spot_usd_per_hour"] == 0.2
    assert g4dn["source"] == f"edited from {AWS} (prices 2023-10-01): spot_usd_per_hour"
    unedited = export(aws_catalog, Scenario(3.0), base=aws_catalog)["catalog"]
    assert unedited["edited"] is False
    assert "changes" not in unedited


def test_the_export_refuses_a_catalog_other_than_the_recommendations(
        aws_catalog: Catalog, sim_catalog: Catalog) -> None:
    with pytest.raises(InputError):
        recommendation_to_dict(recommend(aws_catalog, Scenario(3.0)), sim_catalog)


def test_the_file_name_names_the_edited_catalog(aws_catalog: Catalog) -> None:
    edited = with_spot(aws_catalog, "g4dn.xlarge", 0.2)
    assert export_file_name(aws_catalog) == f"deepvm-{AWS}.json"
    assert export_file_name(aws_catalog, base=aws_catalog, pw_usd_per_hour=2.5) == (
        f"deepvm-{AWS}-pw2_5.json")
    assert export_file_name(edited, base=aws_catalog) == (
        f"deepvm-{AWS}-edited-{edited.sha256[:8]}.json")
    odd = replace(aws_catalog, name="my catalog/../x")
    assert export_file_name(odd, pw_usd_per_hour=3) == "deepvm-my-catalog-..-x-pw3.json"


# ----------------------------------------------------------------------------- replay


def test_replay_of_a_bundled_catalogs_export_matches(capsys: pytest.CaptureFixture[str],
                                                     tmp_path: Path) -> None:
    code, out, _ = run(capsys, "recommend", "--catalog", AWS, "--pw", "3", "--format", "json")
    path = write(tmp_path, json.loads(out))
    code, out, err = run(capsys, "recommend", "--replay", path)
    assert (code, err) == (0, "")
    assert f"catalog bundled catalog {AWS} (sha256 matches)" in out
    assert ("matches: the same 3 configurations and prices; chosen: TR: 17 x g4dn.xlarge spot "
            "+ 1 x c5.xlarge, 2.8526 USD/h") in out
    code, out, _ = run(capsys, "recommend", "--replay", path, "--format", "json")
    result = json.loads(out)
    assert code == 0
    assert result["matches"] is True
    assert result["differences"] == []


def test_replay_of_an_edited_catalog_rebuilds_it_from_the_export(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, aws_catalog: Catalog) -> None:
    edited = with_spot(aws_catalog, "g4dn.xlarge", 0.2)
    doc = export(edited, Scenario(3.0), base=aws_catalog, solver="ilp")
    code, out, _ = run(capsys, "recommend", "--replay", write(tmp_path, doc))
    assert code == 0
    assert "catalog rebuilt from the export's " in out
    assert f"{AWS}: edited)" in out
    assert "matches:" in out


def test_replay_says_what_differs_and_exits_1(capsys: pytest.CaptureFixture[str],
                                             tmp_path: Path, aws_catalog: Catalog) -> None:
    doc = export(aws_catalog, Scenario(3.0))
    tampered = copy.deepcopy(doc)
    tampered["deepvm"][1]["hourly_price"] = 2.5
    tampered["chosen"]["gpu"]["spot"] = 16
    code, out, _ = run(capsys, "recommend", "--replay", write(tmp_path, tampered))
    assert code == 1
    assert "differs: 2 configuration(s)" in out
    assert ("deepvm[1]: exported TR: 17 x g4dn.xlarge spot + 1 x m6i.xlarge, 2.8746 USD/h; now "
            "TR: 17 x g4dn.xlarge spot + 1 x m6i.xlarge, 2.8746 USD/h") in out
    assert "chosen: exported TR: 17 x g4dn.xlarge spot + 1 x c5.xlarge" in out
    # prices that changed in the catalog since the export: found by name, sha256 differs
    moved = copy.deepcopy(doc)
    moved["catalog"]["sha256"] = "0" * 64
    moved["catalog"]["instance_types"]["gpu_types"][0]["spot_usd_per_hour"] = 0.3
    code, out, _ = run(capsys, "recommend", "--replay", write(tmp_path, moved))
    assert code == 1
    assert "not on this machine unchanged" in out


def test_replay_finds_a_saved_catalog_by_name_and_hash(capsys: pytest.CaptureFixture[str],
                                                       tmp_path: Path,
                                                       sim_catalog: Catalog) -> None:
    mine = load_catalog(save_user_catalog(sim_catalog, "my-sim"))
    doc = export(mine, Scenario(5.0, use_quotas=False), top_k=5)
    code, out, _ = run(capsys, "recommend", "--replay", write(tmp_path, doc))
    assert code == 0
    assert "catalog user catalog my-sim (sha256 matches)" in out
    assert "the same 5 configurations" in out


@pytest.mark.parametrize(("content", "needle"), [
    ("{not json", "not readable JSON"),
    ("[" * 50_000 + "]" * 50_000, "nests 50,000 levels deep"),
    ('{"inputs": {}}', "not an export"),
    ('{"inputs": {"pw_usd_per_hour": 3}, "catalog": {}}', "inputs have no"),
])
def test_replay_of_a_bad_file_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str],
                                                     tmp_path: Path, content: str,
                                                     needle: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, out, err = run(capsys, "recommend", "--replay", str(path))
    assert code == 2
    assert out == ""
    assert needle in err
    assert len(err.strip().splitlines()) == 1


def test_replay_without_rows_of_an_unknown_catalog_is_exit_2(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, aws_catalog: Catalog) -> None:
    """An export from before issue 9 (no rows) of a catalog this machine does not have."""
    doc = export(aws_catalog, Scenario(3.0))
    doc["catalog"] = {k: doc["catalog"][k] for k in ("name", "sha256", "provider", "region",
                                                      "prices_date")}
    doc["catalog"]["sha256"] = "f" * 64
    code, _, err = run(capsys, "recommend", "--replay", write(tmp_path, doc))
    assert code == 2
    assert "holds no instance rows to rebuild it from" in err
    doc["catalog"]["sha256"] = aws_catalog.sha256  # but the bundled one is unchanged: found
    assert run(capsys, "recommend", "--replay", write(tmp_path, doc))[0] == 0


def test_replay_and_scenario_arguments_do_not_mix(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["recommend", "--replay", "x.json", "--pw", "3"])
    assert info.value.code == 2
    assert "drop --pw" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:  # --catalog has a default, --pw has none
        main(["recommend", "--catalog", "paper-simulated"])
    assert info.value.code == 2
    assert "needs --pw (or --replay" in capsys.readouterr().err


def test_a_bad_export_raises_export_error(aws_catalog: Catalog) -> None:
    doc = export(aws_catalog, Scenario(3.0))
    doc["inputs"]["max_nodes"] = 10**6
    with pytest.raises(ExportError, match="max_nodes"):
        replay(doc)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cat=catalogs(), s=scenarios(pw_max=6.0))
def test_the_rows_an_export_holds_decide_the_same_recommendation(cat: Catalog,
                                                                 s: Scenario) -> None:
    """Rebuilt from the export's rows alone, the catalog gives every configuration of the
    export again (the types it leaves out can only lose to those it holds)."""
    doc = export(cat, s, top_k=4)
    doc["catalog"]["sha256"] = "rebuild"  # never the stored catalog's
    result = replay(doc)
    assert result.matches, result.differences
    assert result.catalog.gpu_types == rebuild_catalog(doc["catalog"]).gpu_types


def test_an_edited_export_replayed_from_a_file_catalog(capsys: pytest.CaptureFixture[str],
                                                       tmp_path: Path,
                                                       aws_catalog: Catalog) -> None:
    """A catalog given by path is not on this machine by name: the rows rebuild it."""
    path = tmp_path / "mine.json"
    save_catalog(with_spot(aws_catalog, "g5.xlarge", 0.25), path)
    code, out, _ = run(capsys, "recommend", "--catalog", str(path), "--pw", "3", "--top", "5",
                       "--format", "json", "--solver", "enumerate")
    code, out, _ = run(capsys, "recommend", "--replay", write(tmp_path, json.loads(out)))
    assert code == 0
    assert "rebuilt from the export's" in out
