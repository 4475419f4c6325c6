"""Issue 20 item 18: no dead controls when nothing is feasible, and both ends of the trade
quoted when a job's deadline and budget both fail (AppTest)."""

from __future__ import annotations

import pytest
from app_pages import new_app
from streamlit.testing.v1 import AppTest

CATALOG = "aws-us-east-1-2023-10"


@pytest.fixture
def app(tmp_path, monkeypatch) -> AppTest:
    return new_app(tmp_path, monkeypatch)


def test_recommend_offers_no_download_or_launch_when_nothing_is_feasible(app: AppTest) -> None:
    # PW 0.1 USD/h is below the cheapest cluster of the catalog (0.3242 USD/h).
    app.query_params.update({"catalog": CATALOG, "pw": "0.1"})
    app.run()
    assert not app.exception
    assert "Nothing is feasible" in " ".join(m.value for m in app.main.markdown)
    assert not app.get("download_button")
    assert not [e for e in app.get("expandable") if "Launch" in e.proto.label
                or "JSON holds" in e.proto.label]
    app.number_input(key="sb_pw").set_value(3.0).run()  # feasible: the download is back
    assert [b.proto.label for b in app.get("download_button")] == [
        "Download configuration (JSON)"]


def test_plan_quotes_the_fastest_and_the_cheapest_when_deadline_and_budget_fail(
        app: AppTest) -> None:
    # 0.05 h (3 min) and 0.01 USD: no cluster of the catalog meets either for the page's
    # example job, so the page names both ends: the fastest and the cheapest.
    app.query_params.update({"page": "plan", "catalog": CATALOG, "deadline_h": "0.05",
                             "budget_usd": "0.01"})
    app.run()
    assert not app.exception
    table = next(d.value for d in app.dataframe if "Budget" in d.value.columns)
    assert list(table[""]) == ["Fastest", "Cheapest"]
    assert table["Configuration"].nunique() == 2
    assert all(v.startswith("missed by") for v in table["Deadline"])
    assert all(v.startswith("missed by") for v in table["Budget"])
    assert all(v.endswith(" USD") for v in table["Expected cost"])
    assert not app.get("download_button")
