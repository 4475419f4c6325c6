"""Fresh prices without credentials (issue 25, part 4): catalogs rebuilt from SkyPilot's public
AWS catalog (``deepvm_core.cloud.skypilot_refresh``), on the Live prices page with progress and
a clear error offline, and the cards' stale-prices note next to the on-demand saving
(``deepvm_core.catalog.age.stale_saving_note``). Every download goes to a loopback server
(``tests/file_server.py``) or a closed port; none leaves 127.0.0.1."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from file_server import serve
from loopback import closed_port_url, guard_loopback_only, snapshot
from streamlit.testing.v1 import AppTest

from deepvm_core.catalog.age import STALE_AFTER_DAYS, is_stale, stale_saving_note
from deepvm_core.catalog.store import fetched_dir, load_catalog
from deepvm_core.cloud.skypilot_refresh import (
    SKYPILOT_CATALOG_URL_VARIABLE,
    RefreshSettings,
    refresh_catalogs,
)
from deepvm_core.errors import FetchError, InputError

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,"
          "SpotPrice,Region,AvailabilityZone\n")
ROWS = [
    "g4dn.xlarge,T4,1.0,4.0,16.0,,0.526,0.2000,us-east-1,use1-az1",
    "g4dn.xlarge,T4,1.0,4.0,16.0,,0.526,0.1500,us-east-1,use1-az2",
    "p3.2xlarge,V100,1.0,8.0,61.0,,3.06,0.9000,us-east-1,use1-az1",
    "c5.xlarge,,,4.0,8.0,,0.17,0.07,us-east-1,use1-az1",
    "g4dn.xlarge,T4,1.0,4.0,16.0,,0.526,0.2500,us-west-2,usw2-az1",
    "c5.xlarge,,,4.0,8.0,,0.17,0.08,us-west-2,usw2-az1",
]
VMS = (HEADER + "\n".join(ROWS) + "\n").encode()
NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    guard_loopback_only(monkeypatch)
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)


# ----------------------------------------------------------------------------- the core


@pytest.mark.usefixtures("no_network")
def test_refresh_builds_and_writes_one_catalog_per_region_with_progress() -> None:
    steps: list[tuple[str, int, int]] = []
    with serve({"/vms.csv": VMS}) as server:
        result = refresh_catalogs(RefreshSettings(("us-east-1", "us-west-2"),
                                                  url=f"{server.url}/vms.csv"),
                                  now=NOW, progress=lambda *a: steps.append(a))
    assert server.asked == ["/vms.csv"]
    assert [r.region for r in result.regions] == ["us-east-1", "us-west-2"]
    east = result.regions[0]
    assert east.catalog.name == "aws-us-east-1-2026-11-26"
    assert east.catalog.prices_date == "2026-11-26"
    assert east.path is not None
    assert east.path.parent == fetched_dir()
    assert load_catalog(str(east.path)).sha256 == east.catalog.sha256
    g4 = east.catalog.instance("g4dn.xlarge")
    assert g4.spot_usd_per_hour == 0.15  # the cheapest zone
    assert dict(g4.spot_by_zone_usd_per_hour or {}) == {"use1-az1": 0.2, "use1-az2": 0.15}
    # the bucket of the bundled us-east-1 catalog (Spot Instance Advisor excerpt) carried over
    bundled = load_catalog("aws-us-east-1-2025-h1").instance("p3.2xlarge")
    assert east.catalog.instance("p3.2xlarge").interruption_bucket == \
        bundled.interruption_bucket  # type: ignore[union-attr]
    assert any("carried over from the bundled catalog aws-us-east-1-2025-h1" in n
               for n in east.notes)
    assert result.fetched_at == "2026-11-26T12:00:00Z"
    assert steps[0][0].startswith("downloading")
    assert steps[-1] == ("writing the catalogs", 4, 4)
    assert any(done == len(VMS) for _, done, _ in steps)


@pytest.mark.usefixtures("no_network")
def test_offline_or_a_bad_file_is_a_clear_error_and_writes_nothing() -> None:
    before = snapshot(fetched_dir())
    with pytest.raises(FetchError, match="could not be reached") as info:
        refresh_catalogs(RefreshSettings(("us-east-1",), url=f"{closed_port_url()}/vms.csv"))
    assert info.value.kind == "unreachable"
    assert "Nothing was written" in str(info.value)
    with serve({"/vms.csv": b"not,a,catalog\n1,2,3\n"}) as server:
        with pytest.raises(FetchError, match=r"not a SkyPilot vms\.csv"):
            refresh_catalogs(RefreshSettings(("us-east-1",), url=f"{server.url}/vms.csv"))
        with pytest.raises(FetchError, match="HTTP 404"):
            refresh_catalogs(RefreshSettings(("us-east-1",), url=f"{server.url}/nothing.csv"))
    with serve({"/vms.csv": VMS}) as server, pytest.raises(FetchError, match="eu-west-3"):
        refresh_catalogs(RefreshSettings(("eu-west-3",), url=f"{server.url}/vms.csv"))
    with pytest.raises(InputError, match="region"):
        refresh_catalogs(RefreshSettings(("mars-1",), url="http://127.0.0.1:9/vms.csv"))
    assert snapshot(fetched_dir()) == before


# ----------------------------------------------------------------------------- stale prices


def test_stale_note_by_hand() -> None:
    # 2025-H1 ends on 2025-06-30: stale from 90 days later (2025-09-28 is day 90)
    assert STALE_AFTER_DAYS == 90
    assert not is_stale("2025-h1", date(2025, 9, 28))
    assert is_stale("2025-h1", date(2025, 9, 29))
    assert not is_stale("unknown", date(2030, 1, 1))
    today = date(2026, 11, 26)  # 2025-06-30 + 514 days: 16.9 months, "17 months old"
    assert stale_saving_note("2025-h1", "p4d.24xlarge", today) == (
        "prices of 2025-H1, 17 months old: on-demand P4/P5 prices were cut up to 45 % in June "
        "2025, so this saving may be overstated")
    assert stale_saving_note("2025-h1", "p5en.48xlarge", today) is not None
    assert "P4/P5" in (stale_saving_note("2025-h1", "p5en.48xlarge", today) or "")
    other = stale_saving_note("2025-h1", "g5.xlarge", today)
    assert other == ("prices of 2025-H1, 17 months old: spot and on-demand prices have changed "
                     "since, so this saving may be off")
    # after the cut a P5 catalog's saving is not said to be overstated by it
    assert "P4/P5" not in (stale_saving_note("2025-07", "p5.48xlarge", today) or "")
    assert stale_saving_note("2026-11-01", "p5.48xlarge", today) is None


# ----------------------------------------------------------------------------- the pages


def _live(monkeypatch: pytest.MonkeyPatch, url: str) -> AppTest:
    monkeypatch.setenv(SKYPILOT_CATALOG_URL_VARIABLE, url)
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params["page"] = "live"
    at.query_params["catalog"] = "aws-us-east-1-2025-h1"
    return at.run()


@pytest.mark.usefixtures("no_network")
def test_live_prices_refreshes_from_skypilot_and_offers_the_catalog(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with serve({"/vms.csv": VMS}) as server:
        at = _live(monkeypatch, f"{server.url}/vms.csv")
        assert not at.exception
        assert at.multiselect(key="lp_sky_regions").value == ["us-east-1"]  # the active one
        at.button(key="lp_sky_refresh").click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert any(h.value == "Fetched prices" for h in at.subheader)
    assert any("Fetch notes" in m.value for m in at.markdown)
    use = at.button(key="lp_use")
    assert not use.disabled
    use.click().run()
    assert any("is now the active catalog" in s.value for s in at.success)
    assert str(at.query_params["catalog"]).startswith("fetched:aws-us-east-1-")


@pytest.mark.usefixtures("no_network")
def test_live_prices_offline_says_why_and_keeps_working(monkeypatch: pytest.MonkeyPatch) -> None:
    at = _live(monkeypatch, f"{closed_port_url()}/vms.csv")
    at.button(key="lp_sky_refresh").click().run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1
    assert "could not be reached" in errors[0]
    assert "Nothing was written" in errors[0]
    assert any("cannot reach SkyPilot's public catalog" in c.value for c in at.caption)
    assert any("The active catalog is unchanged" in c.value for c in at.caption)


def test_recommend_card_says_the_zone_and_that_the_prices_are_stale() -> None:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params["catalog"] = "aws-us-east-1-2025-h1"
    at.query_params["pw"] = "3"
    at.run()
    assert not at.exception
    captions = [c.value for c in at.caption]
    zone = next(c for c in captions if "Spot price:" in c)
    assert "the cheapest of its 4 zones (use1-az5)" in zone
    assert "launch pins use1-az5" in zone
    stale = next(c for c in captions if "so this saving may be" in c)
    assert "Prices of 2025-H1" in stale
    assert at.button(key="stale_refresh").label == "Refresh prices"
    # the download's JSON carries the zone the Fleet pins (the page's own helper)
    from dashboard import price_notes
    from deepvm_core.catalog.store import load_catalog as load
    from deepvm_core.io.export import recommendation_to_dict
    from deepvm_core.model import Scenario
    from deepvm_core.recommend.recommendation import recommend

    catalog = load("aws-us-east-1-2025-h1")
    rec = recommend(catalog, Scenario(3.0, objective="speed"), top_k=1)
    text = json.dumps(recommendation_to_dict(rec, catalog), indent=2) + "\n"
    zoned = json.loads(price_notes.zoned_export(text, catalog, rec.best, 3.0))
    assert zoned["chosen"]["spot_zone"]["launch_zone_id"] == "use1-az5"


@pytest.mark.usefixtures("no_network")
def test_refresh_prices_on_the_card_is_one_click(monkeypatch: pytest.MonkeyPatch) -> None:
    with serve({"/vms.csv": VMS}) as server:
        monkeypatch.setenv(SKYPILOT_CATALOG_URL_VARIABLE, f"{server.url}/vms.csv")
        at = AppTest.from_file(str(APP), default_timeout=120)
        at.query_params["catalog"] = "aws-us-east-1-2025-h1"
        at.run()
        at.button(key="stale_refresh").click().run()
        assert not at.exception
        assert server.asked == ["/vms.csv"]
    assert any(t.value == "Live prices" for t in at.title)
    assert any(h.value == "Fetched prices" for h in at.subheader)
