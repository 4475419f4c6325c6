"""Plan a job in a real browser, on one visit: the comparison table fits at 1440x900, the
epoch time, the epochs and the MTBI scale change the card; the plan JSON; the estimate to keep
(CSV and printable summary) says the card's cost."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
from browser_helpers import VIEWPORT, download_json, grid_widths, screenshot
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e

LOAD_TIMEOUT_MS = 45_000
UPDATE_TIMEOUT_MS = 20_000


def plan_card(page: Page):
    return page.locator(".st-key-plan_card")


def card(page: Page):
    return page.locator(".st-key-plan_card h3")


def epoch_seconds(page: Page) -> float:
    """The card's "Epoch time" metric, seconds."""
    metric = plan_card(page).get_by_test_id("stMetric").filter(has_text="Epoch time")
    value = metric.get_by_test_id("stMetricValue").inner_text()
    return float(value.removesuffix(" s").replace(",", ""))


def test_plan_table_fits_and_the_card_follows_epoch_time_epochs_and_mtbi_scale(
        page: Page, streamlit_server: str, artifacts_dir: Path) -> None:
    """One visit of Plan a job on the paper's catalog at PW 3 that checks:

    * issue 20 item 17: at 1440x900 the comparison table fits the main column (its scrolling
      area is no wider than what shows; before: 1,232 px in 978);
    * issue 18: the epoch time drives the card (ten times the seconds per epoch, ten times the
      card's epoch time, on the same cluster: in the paper's catalog the cheapest cluster stays
      the same when the epoch time grows ten times; today's catalog picks another);
    * the epochs change the card and go into the URL; the MTBI scale from a shared link
      changes it again and leaves the sidebar's PW alone; the plan JSON holds both.
    """
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{streamlit_server}/plan?pw=3&catalog=aws-us-east-1-2023-10")
    expect(page.get_by_role("heading", name="Plan a job", level=1)).to_be_visible(
        timeout=LOAD_TIMEOUT_MS)
    expect(page.get_by_text("The best clusters and the paper's policies")).to_be_visible(
        timeout=LOAD_TIMEOUT_MS)
    # the comparison (the rest is folded)
    tables = grid_widths(page, '[data-testid="stDataFrame"]')
    assert len(tables) >= 1
    for table in tables:
        assert table["content"] <= table["shown"] + 1, tables
    page.set_viewport_size(VIEWPORT)

    expect(card(page)).to_contain_text("90 epochs of your job", timeout=LOAD_TIMEOUT_MS)
    expect(page.get_by_text("The job above is an example, a ResNet-50-sized job")).to_be_visible()
    before_text = card(page).inner_text()
    before = epoch_seconds(page)
    field = page.get_by_role("spinbutton", name="Seconds per epoch (measured)", exact=True)
    field.fill("9600")
    field.press("Enter")
    expect(page).to_have_url(re.compile(r"[?&]epoch_s=9600(&|$)"), timeout=UPDATE_TIMEOUT_MS)
    expect(card(page)).not_to_have_text(before_text, timeout=UPDATE_TIMEOUT_MS)
    expect(page.get_by_text("The job above is an example")).to_have_count(0)
    # t_g(n) = t_ref1 ρ_g / S_g(n): ten times t_ref, ten times the epoch time (shown to 0.1 s)
    assert epoch_seconds(page) == pytest.approx(10 * before, abs=0.55)
    expect(plan_card(page)).to_contain_text("The same cluster on demand:")
    expect(plan_card(page)).to_contain_text("if started now")
    screenshot(page, artifacts_dir / "plan-epoch-time-x10.png")

    before = card(page).inner_text()
    epochs = page.get_by_role("spinbutton", name="Epochs", exact=True)
    epochs.fill("30")
    epochs.press("Enter")
    expect(card(page)).to_contain_text("30 epochs of your job", timeout=UPDATE_TIMEOUT_MS)
    expect(page).to_have_url(re.compile(r"[?&]epochs=30(&|$)"))
    after_epochs = card(page).inner_text()
    assert after_epochs != before

    # The MTBI scale through a shared link (the slider itself is driven by the AppTest
    # test_changing_epochs_and_mtbi_scale_changes_the_card; keyboard focus on a slider is not
    # reliable here while the page reruns).
    page.goto(page.url + "&mtbi_scale=0.25")
    expect(card(page)).to_contain_text("30 epochs of your job", timeout=LOAD_TIMEOUT_MS)
    expect(card(page)).not_to_have_text(after_epochs, timeout=UPDATE_TIMEOUT_MS)
    expect(page).to_have_url(re.compile(r"[?&]pw=3(&|$)"))  # the sidebar's PW untouched
    screenshot(page, artifacts_dir / "plan-a-job.png")

    doc = download_json(page, "Download plan (JSON)", artifacts_dir / "plan.json")
    assert {"inputs", "catalog", "assumptions", "best", "policies", "frontier"} <= set(doc)
    assert doc["inputs"]["epochs"] == 30
    assert doc["assumptions"]["mtbi_scale"] == 0.25

    # Issue 27: an estimate to keep. The CSV's plan total is the card's expected cost; the
    # printable summary has the same number.
    shown = re.search(r"about ([\d,]+\.\d\d) USD", card(page).inner_text())
    assert shown is not None
    with page.expect_download() as info:
        page.get_by_role("button", name="Download estimate (CSV)").click()
    rows = list(csv.DictReader(io.StringIO(Path(info.value.path()).read_text())))
    total = next(r for r in rows if r["item"] == "Total: the plan's expected cost")
    assert f"{float(total['cost_usd']):,.2f}" == shown.group(1)
    assert rows[-1]["item"] == "Total with storage"  # 100 GB per VM by default
    with page.expect_download() as info:
        page.get_by_role("button", name="Download summary (print or save as PDF)").click()
    assert f"{shown.group(1)} USD" in Path(info.value.path()).read_text()
