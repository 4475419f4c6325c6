"""The Plan card's deadline offer in a real browser (issue 26, item 5): a tight deadline in the
URL, the offer on the card, and the plan JSON that carries it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser_helpers import (
    LOAD_TIMEOUT_MS,
    download_json,
    open_app,
    screenshot,
    wait_until_settled,
)
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


def test_a_tight_deadline_in_the_url_shows_the_offer(page: Page, streamlit_server: str,
                                                      artifacts_dir: Path) -> None:
    # the example job at PW 3 on today's catalog: 1 x p3.16xlarge spot, 2.3 compute hours,
    # a 63 % chance to meet 5 h
    open_app(page, f"{streamlit_server}/plan?pw=3&deadline_h=5", "Plan a job")
    offer = page.locator(".st-key-plan_deadline_offer")
    expect(offer).to_contain_text("The 5 h deadline is at risk", timeout=LOAD_TIMEOUT_MS)
    wait_until_settled(page)
    text = offer.inner_text()
    assert re.search(r"a \d+% chance, under the 95% target\. The [a-z-]+ policy \(", text), text
    assert "of the hours on demand" in text
    expect(offer).to_contain_text("P90 cost")
    expect(offer).to_contain_text("Deadline policies considered: deadline: meets it in")
    screenshot(page, artifacts_dir / "plan-deadline-offer.png")

    doc = download_json(page, "Download plan (JSON)", artifacts_dir / "plan-deadline-offer.json")
    assert doc["deadline_offer"]["deadline_hours"] == 5
    assert doc["deadline_offer"]["target"] == 0.95
    assert doc["deadline_offer"]["policy"] in text
