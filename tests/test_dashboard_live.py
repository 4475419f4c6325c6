"""AppTest tests of the Live prices and Regions pages.

The AWS boundary is :func:`deepvm_core.cloud.aws.fetch_catalogs`, patched here with a fake that
writes real catalogs (derived from the bundled one) to a temporary fetched folder, the way the
real fetcher does; the fetcher itself is tested against loopback servers in test_aws_fetch.py.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from app_pages import APP, no_errors, table
from streamlit.testing.v1 import AppTest

from dashboard import charts, result_frames, widgets
from deepvm_core.catalog import Catalog
from deepvm_core.catalog.catalog import catalog_to_dict
from deepvm_core.catalog.store import load_catalog, save_catalog
from deepvm_core.catalog.validation import parse_catalog
from deepvm_core.cloud import aws
from deepvm_core.model import Scenario
from deepvm_core.recommend import regions
from tests.app_expectations import pinned

LIVE = "views/live_prices.py"
REGIONS = "views/regions.py"
BASE = "aws-us-east-1-2023-10"
FETCHED_AT = datetime(2026, 11, 22, 1, 54, 25, tzinfo=UTC)
STAMP = "20261122T015425Z"
SECRET = "AKIAFAKEDEEPVM7EXAMPLE"


def live_catalog(region: str, factor: float = 1.0,
                 types: Sequence[str] | None = None) -> Catalog:
    """A "fetched" catalog: the bundled one with every price times ``factor``, g4dn.xlarge's
    spot price 10 % up, g3s.xlarge gone and g5.2xlarge new (without eFLOPS); only ``types``
    (names or globs) when given."""
    data = catalog_to_dict(load_catalog(BASE))
    data.update(name=f"aws-{region}-{STAMP}", region=region, prices_date="2026-11-22T01:54:25Z")
    data["gpu_types"] = [g for g in data["gpu_types"] if g["name"] != "g3s.xlarge"]
    for row in (*data["gpu_types"], *data["cpu_types"]):
        row["on_demand_usd_per_hour"] = round(row["on_demand_usd_per_hour"] * factor, 6)
        row["spot_usd_per_hour"] = round(row["spot_usd_per_hour"] * factor, 6)
        if row["name"] == "g4dn.xlarge":
            row["spot_usd_per_hour"] = round(row["spot_usd_per_hour"] * 1.1, 6)
    new = dict(data["gpu_types"][0])
    new.update(name="g5.2xlarge", family="G", on_demand_usd_per_hour=1.212,
               spot_usd_per_hour=0.3636, vcpus=8, eflops=None, scaling=None)
    new.pop("spot_by_zone_usd_per_hour", None)
    data["gpu_types"].append(new)
    if types is not None:
        for key in ("gpu_types", "cpu_types"):
            data[key] = [r for r in data[key]
                         if any(fnmatch.fnmatchcase(r["name"], p) for p in types)]
    return parse_catalog(data, source=f"test catalog {region}")


NOTES = ("not offered in {r} (DescribeInstanceTypes): g3s.xlarge",
         "needs eFLOPS (kept, left out of solving until you give it): g5.2xlarge",
         "network level mapped to a number: c3.xlarge 'Moderate' -> 0.3 Gbps",
         f"quotas are the base catalog's ({BASE}), not read from your account")
FACTORS = {"us-east-1": 1.0, "eu-west-1": 1.2}


class FakeFetch:
    """Stands in for ``aws.fetch_catalogs``: records the call, reports progress, writes."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.calls: list[dict] = []

    def __call__(self, regions, **kwargs) -> aws.FetchResult:
        self.calls.append({"regions": list(regions), **kwargs})
        progress = kwargs.get("progress")
        total = 3 * len(regions) + 1
        fetched = []
        for i, region in enumerate(regions):
            for j, step in enumerate(("instance types", "spot prices", "on-demand prices")):
                if progress:
                    progress(f"{region}: {step}", 3 * i + j, total)
            catalog = live_catalog(region, FACTORS.get(region, 1.0),
                                   kwargs.get("instance_types"))
            path = save_catalog(catalog, self.folder / f"{catalog.name}.json")
            fetched.append(aws.RegionFetch(region, catalog, path, (),
                                           tuple(n.format(r=region) for n in NOTES)))
        if progress:
            progress("done", total, total)
        return aws.FetchResult(tuple(fetched), "2026-11-22T01:54:25Z", BASE,
                               kwargs.get("spot_aggregate", "min"))


@pytest.fixture
def fetched_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "fetched"
    folder.mkdir()
    monkeypatch.setenv("DEEPVM_FETCHED_CATALOG_DIR", str(folder))
    monkeypatch.setenv("DEEPVM_USER_CATALOG_DIR", str(tmp_path / "user"))
    return folder


@pytest.fixture
def fake_fetch(fetched_dir, monkeypatch) -> FakeFetch:
    fake = FakeFetch(fetched_dir)
    monkeypatch.setattr(aws, "fetch_catalogs", fake)
    return fake


@pytest.fixture
def app(fetched_dir) -> AppTest:
    del fetched_dir  # requested for its set-up only (the fetch folder)
    return pinned(AppTest.from_file(str(APP), default_timeout=60))


def open_live(at: AppTest) -> AppTest:
    at.run()
    at.switch_page(LIVE).run()
    no_errors(at)
    assert at.title[0].value == "Live prices"
    return at


def fetch_errors(at: AppTest, monkeypatch: pytest.MonkeyPatch,
                 fetch: Callable[..., object]) -> str:
    """The error messages the Live prices page shows after a Fetch click, with ``fetch`` in
    place of ``aws.fetch_catalogs``."""
    monkeypatch.setattr(aws, "fetch_catalogs", fetch)
    open_live(at)
    at.button(key="lp_fetch").click().run()
    no_errors(at)
    return " ".join(e.value for e in at.error)


# ----------------------------------------------------------------------------- pages


@pytest.mark.parametrize(("page", "title"), [(LIVE, "Live prices"), (REGIONS, "Regions")])
def test_new_pages_load_without_a_fetch(app: AppTest, page: str, title: str) -> None:
    app.run()
    app.switch_page(page).run()
    no_errors(app)
    assert not app.error
    assert app.title[0].value == title
    if page == LIVE:
        assert any("fetch" in i.value.lower() for i in app.info)
    else:  # the bundled regional catalogs (tests/test_dashboard_gpus.py checks the figures)
        assert sorted(table(app, "Region")["Region"]) == [
            "eu-central-1", "us-east-1", "us-east-2", "us-west-2"]


@pytest.mark.parametrize(("slug", "title"), [("live", "Live prices"), ("regions", "Regions")])
def test_page_query_parameter_opens_the_new_pages(app: AppTest, slug: str, title: str) -> None:
    app.query_params["page"] = slug
    app.run()
    no_errors(app)
    assert app.title[0].value == title
    assert app.query_params["page"] == slug


# ----------------------------------------------------------------------------- fetch


def test_fetch_shows_diff_and_notes_and_use_switches_the_catalog(app: AppTest,
                                                                fake_fetch: FakeFetch) -> None:
    open_live(app)
    app.button(key="lp_fetch").click().run()
    no_errors(app)
    assert not app.error

    call = fake_fetch.calls[-1]
    assert call["regions"] == ["us-east-1"]
    assert call["base"].name == BASE
    assert call["instance_types"] is None
    assert (call["profile"], call["spot_aggregate"]) == (None, "min")
    assert callable(call["progress"])

    diff = table(app, "Spot change %").set_index("Instance type")
    assert diff.loc["g4dn.xlarge", "Status"] == "changed"
    assert diff.loc["g4dn.xlarge", "Spot change %"] == pytest.approx(10.0, abs=0.01)
    assert diff.loc["g4dn.xlarge", "On-demand change %"] == pytest.approx(0.0)
    assert diff.loc["c5.xlarge", "Status"] == "unchanged"
    assert diff.loc["g3s.xlarge", "Status"] == "missing"
    assert diff.loc["g5.2xlarge", "Status"] == "added"
    assert diff.loc["g5.2xlarge", "Note"] == "needs eFLOPS"
    warnings = " ".join(w.value for w in app.warning)
    assert "g5.2xlarge" in warnings
    assert "left out of solving" in warnings
    assert "Catalog editor" in warnings
    text = " ".join(m.value for m in app.main.markdown)
    assert "Moderate" in text
    assert "quotas are the base catalog" in text
    metrics = {m.label: m.value for m in app.main.metric}
    assert (metrics["Prices changed"], metrics["Added"], metrics["Missing"],
            metrics["Needs eFLOPS"]) == ("1", "1", "1", "1")

    assert app.session_state["sb_catalog"] == BASE  # fetching alone switches nothing
    app.button(key="lp_use").click().run()
    no_errors(app)
    cid = f"fetched:aws-us-east-1-{STAMP}"
    assert app.session_state["sb_catalog"] == cid
    assert app.selectbox(key="sb_catalog").value == cid
    assert any(f"aws-us-east-1-{STAMP}" in s.value for s in app.success)
    sidebar = " ".join(m.value for m in app.sidebar.markdown)
    assert f"aws-us-east-1-{STAMP}" in sidebar
    assert "fetched from the provider" in sidebar
    assert app.button(key="lp_use").disabled  # already in use

    app.switch_page("views/recommend.py").run()
    no_errors(app)
    assert f"aws-us-east-1-{STAMP}" in app.main.caption[0].value
    heads = [m.value for m in app.main.markdown if m.value.startswith("### ")]
    assert heads
    assert "g4dn.xlarge" in heads[0]
    assert any("g5.2xlarge" in i.value for i in app.info)  # the core's needs-eFLOPS note


def test_fetch_with_types_profile_median_and_two_regions(app: AppTest,
                                                         fake_fetch: FakeFetch) -> None:
    open_live(app)
    app.text_input(key="lp_more_regions").input("eu-west-1")  # free text next to the list
    app.text_input(key="lp_types").input("g4dn.*, c5.xlarge")
    app.text_input(key="lp_profile").input("research")
    app.radio(key="lp_spot").set_value("median")
    app.button(key="lp_fetch").click().run()
    no_errors(app)
    call = fake_fetch.calls[-1]
    assert call["regions"] == ["us-east-1", "eu-west-1"]
    assert call["instance_types"] == ("g4dn.*", "c5.xlarge")
    assert (call["profile"], call["spot_aggregate"]) == ("research", "median")

    app.radio(key="lp_view_region").set_value("eu-west-1").run()
    no_errors(app)
    diff = table(app, "Spot change %").set_index("Instance type")
    assert diff.loc["c5.xlarge", "On-demand change %"] == pytest.approx(20.0, abs=0.01)
    # only the requested types are compared
    assert diff.index.tolist() == ["g4dn.xlarge", "c5.xlarge"]

    # the Regions page compares the two regions of the fetch, without fetching again
    app.switch_page(REGIONS).run()
    no_errors(app)
    assert len(fake_fetch.calls) == 1
    frame = table(app, "Region")
    assert frame["Region"].tolist() == ["us-east-1", "eu-west-1"]

    # the fetch settings survive a page switch
    app.switch_page(LIVE).run()
    no_errors(app)
    assert app.multiselect(key="lp_regions").value == ["us-east-1"]
    assert app.text_input(key="lp_more_regions").value == "eu-west-1"
    assert app.text_input(key="lp_profile").value == "research"


def test_fetch_failure_says_why_and_changes_nothing(app: AppTest, monkeypatch,
                                                    fetched_dir: Path) -> None:
    def failing(_regions, **kwargs):
        kwargs["progress"]("us-east-1: instance types (EC2 DescribeInstanceTypes)", 0, 4)
        raise aws.FetchError(
            "EC2 DescribeInstanceTypes for region us-east-1 could not be reached (connection "
            "refused). Nothing was written.", operation="DescribeInstanceTypes",
            region="us-east-1", kind="unreachable")

    errors = fetch_errors(app, monkeypatch, failing)
    assert "DescribeInstanceTypes" in errors
    assert "us-east-1" in errors
    assert "could not be reached" in errors
    assert any("active catalog is unchanged" in c.value for c in app.caption)
    assert app.session_state["sb_catalog"] == BASE
    assert list(fetched_dir.iterdir()) == []
    assert not [d for d in app.dataframe if "Spot change %" in d.value.columns]

    # the message stays while other controls are used, and the other pages keep working
    app.number_input(key="sb_pw").set_value(5.0).run()
    no_errors(app)
    assert any("could not be reached" in e.value for e in app.error)
    app.switch_page("views/recommend.py").run()
    no_errors(app)
    assert not app.error
    heads = [m.value for m in app.main.markdown if m.value.startswith("### ")]
    assert "29 × g4dn.xlarge" in heads[0]


def test_unexpected_failure_is_a_message_without_credentials(app: AppTest, monkeypatch) -> None:
    def broken(*_args, **_kwargs):
        raise RuntimeError(f"boom with key {SECRET} and Signature=abcdef0123")

    errors = fetch_errors(app, monkeypatch, broken)
    assert "RuntimeError" in errors
    assert "REDACTED" in errors
    assert SECRET not in errors
    assert "abcdef0123" not in errors


@pytest.mark.usefixtures("fetched_dir")
def test_bad_region_name_is_explained(app: AppTest) -> None:
    open_live(app)  # the real fetcher: it refuses the name before any request
    app.multiselect(key="lp_regions").set_value([])
    app.button(key="lp_fetch").click().run()
    no_errors(app)
    assert any("give at least one AWS region" in e.value for e in app.error)


# ----------------------------------------------------------------------------- regions


def test_region_comparison_from_fetched_catalogs_on_disk(app: AppTest,
                                                         fetched_dir: Path) -> None:
    for region, factor in FACTORS.items():
        save_catalog(live_catalog(region, factor), fetched_dir / f"aws-{region}-{STAMP}.json")
    older = live_catalog("us-east-1", 3.0)
    older = parse_catalog({**catalog_to_dict(older), "name": "aws-us-east-1-old",
                           "prices_date": "2025-01-01T00:00:00Z"})
    save_catalog(older, fetched_dir / "aws-us-east-1-old.json")
    (fetched_dir / "broken.json").write_text("{not json")

    app.run()
    app.switch_page(REGIONS).run()
    no_errors(app)
    # default: the newest catalog of each region, bundled (2025-H1) or fetched (2026-11-22:
    # newer than the bundled us-east-1 ones, and than the "old" one of 2025-01-01), by region;
    # the broken file is named, not fatal
    assert app.multiselect(key="rg_catalogs").value == [
        "aws-eu-central-1-2025-h1", f"fetched:aws-eu-west-1-{STAMP}",
        f"fetched:aws-us-east-1-{STAMP}", "aws-us-east-2-2025-h1", "aws-us-west-2-2025-h1"]
    assert any("broken" in w.value for w in app.warning)
    app.multiselect(key="rg_catalogs").set_value(
        [f"fetched:aws-eu-west-1-{STAMP}", f"fetched:aws-us-east-1-{STAMP}"]).run()
    frame = table(app, "Region")
    assert frame["Region"].tolist() == ["us-east-1", "eu-west-1"]
    assert frame["#"].tolist() == [1, 2]
    assert frame["USD/hour"].iloc[0] <= 3.0
    assert frame["USD/hour"].iloc[1] <= 3.0
    assert frame["Performance"].iloc[0] >= frame["Performance"].iloc[1]
    assert "g4dn.xlarge" in frame["Configuration"].iloc[0]

    # PW too low for the dearer region: it is listed with its reason
    app.number_input(key="sb_pw").set_value(0.36).run()
    no_errors(app)
    frame = table(app, "Region")
    assert frame["Region"].tolist() == ["us-east-1", "eu-west-1"]
    assert frame["Configuration"].iloc[1] == "nothing feasible"
    assert "PW" in frame["Note"].iloc[1]
    assert any("eu-west-1" in w.value and "nothing is feasible" in w.value for w in app.warning)

    # any set of fetched catalogs, the same region twice included
    app.multiselect(key="rg_catalogs").set_value(
        [f"fetched:aws-us-east-1-{STAMP}", "fetched:aws-us-east-1-old"])
    app.number_input(key="sb_pw").set_value(3.0).run()
    no_errors(app)
    frame = table(app, "Region")
    assert frame["Region"].tolist() == [f"us-east-1 · aws-us-east-1-{STAMP}",
                                        "us-east-1 · aws-us-east-1-old"]
    assert len(app.get("plotly_chart")) == 1


# ----------------------------------------------------------------------------- pure helpers


def test_region_frame_and_chart_keep_infeasible_regions() -> None:
    catalogs = {"us-east-1": live_catalog("us-east-1"), "eu-west-1": live_catalog("eu-west-1", 9)}
    rows = regions.compare_regions(catalogs, Scenario(1.0))
    frame = result_frames.region_frame(rows, 1.0, "paper")
    assert frame["Region"].tolist() == ["us-east-1", "eu-west-1"]
    assert frame["#"].iloc[0] == 1
    assert np.isnan(frame["#"].iloc[1])
    assert frame["Configuration"].iloc[1] == "nothing feasible"
    assert frame["Note"].iloc[1]
    fig = charts.region_bars(frame)
    assert list(fig.data[0].y) == ["eu-west-1", "us-east-1"]  # best on top
    assert "nothing feasible" in fig.data[0].text[0]


def test_escape_md_keeps_globs_and_names_as_typed() -> None:
    assert widgets.escape_md("g5.* and my_catalog [x]") == r"g5.\* and my\_catalog \[x\]"


@pytest.mark.parametrize("own_job", [False, True])
def test_regions_best_region_has_the_least_job_time(app: AppTest, own_job: bool) -> None:
    """Issue 24: on the bundled regional catalogs (objective speed, the default), the first
    region has the least expected job time of those shown, with the example job and with one's
    own (set on Plan a job); the card names it."""
    app.run()
    if own_job:
        app.session_state["plan_active"] = True
        app.session_state["plan_epochs"] = 30.0
        app.session_state["plan_epoch_s"] = 100.0
    app.switch_page(REGIONS).run()
    no_errors(app)
    frame = table(app, "Region")
    hours = frame["Job hours"].tolist()
    assert len(hours) == 4
    assert hours == sorted(hours)
    assert hours[0] == min(hours)
    # 30 epochs of 100 s on one A10G are 0.83 h there, the example job 24 h: the page uses
    # the job set on Plan a job.
    assert (hours[0] < 0.5) == own_job
    card = " ".join(m.value for m in app.markdown)
    assert f"{frame['Region'].iloc[0]} ·" in card
    whose = "Your job" if own_job else "The example job"
    assert any(m.label.startswith(whose) for m in app.metric)
