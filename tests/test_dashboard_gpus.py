"""Issue 19's dashboard: the default catalog is today's us-east-1, the paper's scenario is one
click away, ages and eFLOPS sources are shown, the Method page shows the estimator's errors.

Expected figures come from the model.md oracle (``tests/app_expectations.py``) or by hand."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from app_pages import headline, new_app, no_errors, opened
from streamlit.testing.v1 import AppTest

from deepvm_core.catalog.store import load_catalog, save_user_catalog
from deepvm_core.model import Scenario
from tests import app_expectations as expect
from tests import oracle

TODAY_CATALOG = "aws-us-east-1-2025-h1"


@pytest.fixture
def app(tmp_path, monkeypatch) -> AppTest:
    return new_app(tmp_path, monkeypatch)


def test_the_oracle_agrees_with_the_literals() -> None:
    best = expect.best(TODAY_CATALOG, 3.0)
    # 19 x 0.1422 (g5g.xlarge spot) + 0.085 (c5.large on demand) = 2.7018 + 0.085 = 2.7868
    assert (best.architecture, best.gpu, best.n, best.cpu, best.m) == (
        "tiering", "g5g.xlarge", 19, "c5.large", 1)
    assert best.price == pytest.approx(2.7868)
    paper = expect.best(expect.AWS, 3.0)
    assert (paper.gpu, paper.n, paper.cpu, paper.m) == ("g4dn.xlarge", 17, "c5.xlarge", 1)


def test_default_page_ranks_todays_catalog_by_speed(app: AppTest) -> None:
    """The default page: today's catalog, the default objective (speed, issue 18); its headline
    is the independent brute force's (``tests/oracle.py``) best by speed at PW 3."""
    app.run()
    no_errors(app)
    assert app.query_params["catalog"] == TODAY_CATALOG
    assert app.query_params["objective"] == "speed"
    (best,) = oracle.top_k(load_catalog(TODAY_CATALOG), Scenario(3.0, objective="speed"), 1)
    assert best.architecture == "tiering"
    assert headline(app) == (f"### Tiering · {best.n} × {best.gpu} spot + {best.m} × {best.cpu} "
                             "memory node")


def test_default_page_is_todays_catalog(app: AppTest) -> None:
    app.query_params["objective"] = "paper"  # the figures below are Z's (the oracle's 2.7868)
    app.run()
    no_errors(app)
    assert app.query_params["catalog"] == TODAY_CATALOG
    assert headline(app) == "### Tiering · 19 × g5g.xlarge spot + 1 × c5.large memory node"
    assert app.main.metric[0].value == "2.79"  # USD/h: 2.7868 (the oracle's) to 2 decimals
    captions = " ".join(c.value for c in app.caption)
    # prices of 2025-H1 (to 2025-06-30): their age in months depends on today, so only the form
    assert f"Catalog **{TODAY_CATALOG}** (us-east-1, prices of 2025-H1, " in captions
    assert any(o.startswith(f"{TODAY_CATALOG} · prices of 2025-H1, ") and o.endswith(" old")
               for o in app.selectbox(key="sb_catalog").options)
    # the card says where the winner's eFLOPS come from: g5g.xlarge (1 x T4g) is estimated
    source = next(c for c in app.caption if c.value.startswith("g5g.xlarge: eFLOPS 376"))
    assert "estimated" in source.value
    assert "scaling curve estimated" in source.value


def test_papers_scenario_is_one_click_away(app: AppTest) -> None:
    app.query_params.update({"pw": "7", "objective": "performance"})
    app.run()
    app.button(key="sb_paper_scenario").click().run()
    no_errors(app)
    assert (app.query_params["catalog"], app.query_params["pw"],
            app.query_params["objective"]) == (expect.AWS, "3", "paper")
    # Table IV's first choice: 17 g4dn.xlarge spot + 1 c5.xlarge
    assert headline(app) == "### Tiering · 17 × g4dn.xlarge spot + 1 × c5.xlarge memory node"
    assert any("prices of 2023-10-01, " in c.value for c in app.caption)
    source = next(c for c in app.caption if c.value.startswith("g4dn.xlarge: eFLOPS 377"))
    assert "measured" in source.value
    assert "estimated" not in source.value


def test_method_page_shows_the_estimators_errors(app: AppTest) -> None:
    opened(app, page="method")
    frames = [d.value for d in app.dataframe]
    loo = next(f for f in frames if "measured eFLOPS" in f.columns)
    # the three measured types of the paper's Table III: 100, 377 and 696 eFLOPS
    assert list(loo["measured eFLOPS"]) == [100.0, 377.0, 696.0]
    # the error column is (estimate - measured) / measured in %
    for _, row in loo.iterrows():
        assert row["error (%)"] == pytest.approx(
            100 * (row["estimate"] - row["measured eFLOPS"]) / row["measured eFLOPS"])
    prior = next(f for f in frames if "K = 1 (S(n) = n)" in f.columns)
    assert list(prior["curve"]) == ["g3s.xlarge", "g4dn.xlarge", "g5.xlarge"]
    assert (prior["prior"] < prior["K = 1 (S(n) = n)"]).all()  # the prior beats K = 1
    assert any(f.columns[0] == "chip (benchmark row)" for f in frames)
    assert any("prior" in str(c.proto) for c in app.get("plotly_chart"))


REGIONAL = ("aws-eu-central-1-2025-h1", "aws-us-east-1-2025-h1", "aws-us-east-2-2025-h1",
            "aws-us-west-2-2025-h1")


def test_regions_compares_the_bundled_regions_without_a_fetch(app: AppTest) -> None:
    app.query_params.update({"page": "regions", "objective": "paper"})
    app.run()
    no_errors(app)
    frame = next(d.value for d in app.dataframe if "Region" in d.value.columns)
    by_region = {row["Region"]: row for _, row in frame.iterrows()}
    assert set(by_region) == {"eu-central-1", "us-east-1", "us-east-2", "us-west-2"}
    for name in REGIONAL:
        found = expect.best(name, 3.0, objective="paper")  # the oracle: that region, PW 3
        row = by_region[name.removeprefix("aws-").removesuffix("-2025-h1")]
        assert found.gpu in row["Configuration"]
        assert f"{found.n}" in row["Configuration"]
        assert row["USD/hour"] == pytest.approx(found.price, abs=1e-4)
    # ranked by the objective (the paper's Z by default): the first region has the highest
    ranked = sorted(REGIONAL, key=lambda n: expect.best(n, 3.0, objective="paper").z, reverse=True)
    assert frame["Region"].iloc[0] == ranked[0].removeprefix("aws-").removesuffix("-2025-h1")
    assert any("prices of 2025-H1" in c.value for c in app.caption)


# ----------------------------------------------------------------------------- Instances


def raw_gpu_rows(name: str) -> list[dict]:
    """The catalog file's GPU rows, read as plain JSON (not through deepvm_core)."""
    path = Path(__file__).resolve().parent.parent / "data" / "catalogs" / f"{name}.json"
    return json.loads(path.read_text())["gpu_types"]


def best_spot_flopp(rows: list[dict]) -> list[str]:
    """Names of the rows with eFLOPS, best spot FLOPP (eFLOPS / spot price x 3600) first."""
    scored = [(-r["eflops"] / r["spot_usd_per_hour"] * 3600, r["name"]) for r in rows
              if r.get("eflops") is not None]
    return [name for _, name in sorted(scored)]


def flopp_table(at: AppTest):
    return next(d.value for d in at.dataframe if "Spot FLOPP" in d.value.columns)


def test_instances_show_the_best_12_with_their_sources(app: AppTest) -> None:
    opened(app, page="instances")
    rows = raw_gpu_rows(TODAY_CATALOG)
    ranked = best_spot_flopp(rows)
    table = flopp_table(app)
    assert list(table["GPU type"]) == ranked[:12]
    assert any(c.value == f"Showing 12 of {len(ranked)} GPU types in the table: 'Show all' "
               "lists them all." for c in app.caption)
    measured = {r["name"] for r in rows if "eflops_source" not in r}  # files omit 'measured'
    for _, row in table.iterrows():
        assert row["eFLOPS source"] == ("measured" if row["GPU type"] in measured
                                        else "estimated")
        assert (row["How estimated"] == "") == (row["GPU type"] in measured)

    app.toggle(key="inst_all").set_value(True).run()
    assert list(flopp_table(app)["GPU type"]) == ranked
    assert app.query_params["show_all"] == "on"


def test_instances_filters_come_from_the_url(app: AppTest) -> None:
    app.query_params.update({"page": "instances", "gpu_models": "T4,nope", "shown": "3"})
    app.run()
    no_errors(app)
    ranked = best_spot_flopp(raw_gpu_rows(TODAY_CATALOG))
    t4 = [n for n in ranked if n.startswith("g4dn.")]  # the T4 family (data/accelerators.csv)
    assert list(flopp_table(app)["GPU type"]) == t4[:3]
    assert app.query_params["gpu_models"] == "T4"
    assert app.query_params["shown"] == "3"
    app.multiselect(key="inst_models").set_value([])
    app.multiselect(key="inst_families").set_value(["p5", "p4d"]).run()
    assert list(flopp_table(app)["GPU type"]) == [
        n for n in ranked if n.split(".")[0] in ("p5", "p4d")][:3]
    assert app.query_params["families"] == "p5,p4d"
    assert "gpu_models" not in app.query_params
    app.switch_page("views/recommend.py").run()
    assert "families" not in app.query_params  # the filters are the Instances page's


def test_editing_eflops_marks_them_edited(app: AppTest) -> None:
    expect.pinned(app).run()
    app.switch_page("views/catalog_editor.py").run()
    key = app.data_editor[0].key  # GPU VMs: g3s.xlarge, g4dn.xlarge, g5.xlarge
    app.session_state[key] = {"edited_rows": {1: {"eflops": 400.0}}, "added_rows": [],
                              "deleted_rows": []}
    app.run()
    no_errors(app)
    app.switch_page("views/instances.py").run()
    table = flopp_table(app).set_index("GPU type")
    assert table.loc["g4dn.xlarge", "eFLOPS"] == 400.0
    assert table.loc["g4dn.xlarge", "eFLOPS source"] == "edited"
    assert table.loc["g5.xlarge", "eFLOPS source"] == "measured"  # unchanged rows keep theirs


def test_plan_names_the_chosen_types_sources(app: AppTest) -> None:
    app.query_params.update({"page": "plan", "trials": "200"})
    app.run()
    no_errors(app)
    gpu = next(m.value for m in app.markdown if m.value.startswith("**") and " × " in m.value)
    name = next(r["name"] for r in raw_gpu_rows(TODAY_CATALOG) if f" × {r['name']}" in gpu)
    row = next(r for r in raw_gpu_rows(TODAY_CATALOG) if r["name"] == name)
    line = next(c for c in app.caption if c.value.startswith(f"{name}: eFLOPS "))
    word = "measured" if "eflops_source" not in row else row["eflops_source"].split(":")[0]
    assert f"eFLOPS {row['eflops']:,.0f}, {word}" in line.value
    assert row.get("eflops_source", "measured") in line.proto.help or word == "measured"


def test_instances_best_cluster_per_model(app: AppTest) -> None:
    app.query_params.update({"page": "instances", "objective": "paper"})
    app.run()
    no_errors(app)
    table = next(d.value for d in app.dataframe if "Best cluster" in d.value.columns)
    catalog = load_catalog(TODAY_CATALOG)
    for model, family in (("T4g", "g5g."), ("T4", "g4dn.")):
        # the oracle on the catalog cut to that model's family (data/accelerators.csv)
        only = replace(catalog, gpu_types=tuple(
            g for g in catalog.gpu_types if g.name.startswith(family)))
        (best,) = oracle.top_k(only, Scenario(3.0, objective="paper"), 1)
        row = table[table["GPU model"] == model].iloc[0]
        assert f"{best.n} x {best.gpu} spot + {best.m} x {best.cpu}" in row["Best cluster"]
        assert row["USD/hour"] == pytest.approx(best.price, abs=1e-4)
    assert table.iloc[0]["GPU model"] == "T4g"  # the page's #1 is the Recommend page's answer
    app.multiselect(key="inst_models").set_value(["A100"]).run()
    table = next(d.value for d in app.dataframe if "Best cluster" in d.value.columns)
    assert list(table["GPU model"]) == ["A100"]
    assert table.iloc[0]["Best cluster"].startswith("none within PW 3 USD/h")


@pytest.mark.parametrize("slug", ["recommend", "instances", "simulate", "live-prices",
                                  "catalog-editor"])
def test_a_catalog_name_is_shown_as_typed_in_every_caption(slug: str, tmp_path, monkeypatch,
                                                           sim_catalog) -> None:
    """A user catalog named with markdown characters (``_`` is allowed) reads as typed in the
    caption that names the catalog, on every page that has one (one wording: widgets)."""
    app = new_app(tmp_path, monkeypatch)
    monkeypatch.setenv("DEEPVM_USER_CATALOG_DIR", str(tmp_path / "user"))
    save_user_catalog(sim_catalog, "lab_v2_final")
    app.query_params["catalog"] = "user:lab_v2_final"
    app.query_params["page"] = slug
    app.run()
    no_errors(app)
    captions = [c.value for c in app.caption]
    assert any("**lab\\_v2\\_final** (-, prices of " in c for c in captions), captions
