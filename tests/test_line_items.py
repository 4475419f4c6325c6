"""Issue 27: an estimate to keep. The plan's expected cost as line items (CSV) and a printable
summary, from the card's numbers: the lines add up to the card's expected cost, the on-demand
lines are the catalog's on-demand prices for the whole makespan, storage is its own line."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import replace

import pytest

from deepvm_core.catalog.store import load_catalog
from deepvm_core.errors import InputError
from deepvm_core.io.line_items import (
    PLAN_TOTAL,
    line_items_csv,
    plan_line_items,
    summary_html,
)
from tests.test_dashboard_plan import reference_plan

CATALOG = "aws-us-east-1-2023-10"


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_lines_add_up_to_the_cards_cost_and_on_demand_is_billed_for_the_whole_makespan():
    catalog = load_catalog(CATALOG)
    prices = {t.name: t for t in (*catalog.gpu_types, *catalog.cpu_types)}
    result = reference_plan()
    assert result.best
    for est in result.best:
        c = est.configuration
        items = plan_line_items(est, catalog, storage_gb_per_vm=0)
        assert math.isclose(sum(line.cost_usd for line in items.lines), est.expected_cost_usd,
                            rel_tol=1e-12)
        assert items.storage is None
        t = est.expected_makespan_hours
        by_item = {line.item.split(":")[0]: line for line in items.lines}
        if c.cpu is not None:  # Tiering: m memory nodes at OD(w) for T hours
            node = by_item["On-demand memory nodes"]
            assert math.isclose(node.cost_usd,
                                c.memory_nodes * prices[c.cpu].on_demand_usd_per_hour * t)
        else:  # Single Anchor: one anchor at OD(v) for T hours
            anchor = by_item["On-demand GPU VM (anchor)"]
            assert math.isclose(anchor.cost_usd, prices[c.gpu].on_demand_usd_per_hour * t)
        spot = by_item.get("Spot GPU VMs")
        if c.gpu_spot:
            assert spot is not None
            assert spot.count == c.gpu_spot
            assert 0 < spot.hours <= t + 1e-9  # up no longer than the makespan
            assert math.isclose(spot.cost_usd,
                                c.gpu_spot * prices[c.gpu].spot_usd_per_hour * spot.hours)
        rows = _rows(line_items_csv(items))
        total = next(r for r in rows if r["item"] == PLAN_TOTAL)
        assert total["cost_usd"] == f"{est.expected_cost_usd:.2f}"  # the card's number


def test_storage_by_hand_and_the_total_with_it():
    catalog = load_catalog(CATALOG)
    est = reference_plan().best[0]
    ten = replace(est, expected_makespan_hours=10.0,
                  expected_cost_usd=est.expected_cost_usd)
    items = plan_line_items(ten, catalog, storage_gb_per_vm=100)
    vms = est.configuration.total_vms
    # 100 GB x 0.08 USD per GB-month / 730 h x 10 h, per VM
    assert items.storage is not None
    assert math.isclose(items.storage.cost_usd, vms * 100 * 0.08 / 730 * 10)
    rows = _rows(line_items_csv(items))
    assert rows[-1]["item"] == "Total with storage"
    assert rows[-1]["cost_usd"] == f"{est.expected_cost_usd + vms * 100 * 0.08 / 730 * 10:.2f}"


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, 1e9, True])
def test_a_bad_storage_size_is_named(bad):
    est = reference_plan().best[0]
    with pytest.raises(InputError, match="storage_gb_per_vm"):
        plan_line_items(est, load_catalog(CATALOG), storage_gb_per_vm=bad)


def test_a_cluster_that_does_not_finish_has_no_lines():
    est = replace(reference_plan().best[0], does_not_finish="it never finishes")
    with pytest.raises(InputError, match="not expected to finish"):
        plan_line_items(est, load_catalog(CATALOG))


def test_the_summary_page_prints_the_cards_total_and_asks_no_host():
    est = reference_plan().best[0]
    items = plan_line_items(est, load_catalog(CATALOG))
    page = summary_html("Job plan <demo>", ("About 6.20 USD.",), items)
    assert "&lt;demo&gt;" in page  # escaped
    assert f"{est.expected_cost_usd:,.2f} USD" in page
    assert "http" not in page
    assert "<script" not in page


def test_the_plan_page_offers_the_estimate_and_takes_the_storage_size(tmp_path, monkeypatch):
    from app_pages import new_app

    app = new_app(tmp_path, monkeypatch)
    app.query_params.update({"page": "plan", "catalog": CATALOG})
    app.run()
    assert not app.exception
    assert [b.proto.label for b in app.get("download_button")] == [
        "Download plan (JSON)", "Download estimate (CSV)",
        "Download summary (print or save as PDF)"]
    assert app.number_input(key="plan_storage_gb").value == 100.0
    app.number_input(key="plan_storage_gb").set_value(0.0).run()
    assert not app.exception
    assert len(app.get("download_button")) == 3
