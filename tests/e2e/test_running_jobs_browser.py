"""Running jobs in a real browser (issue 28): a dashboard whose per-user folder holds a ledger
written by the tests (``tests/ledger_samples.py``) shows the job, its cost and progress, the
plan's P10-P90 and the counterfactuals."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_helpers import screenshot
from dashboard_server import running_server
from ledger_samples import PLAN_ID, write_sample
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e

LOAD_TIMEOUT_MS = 45_000


@pytest.fixture(scope="module")
def jobs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A dashboard whose DEEPVM_HOME holds the sample ledger."""
    home = tmp_path_factory.mktemp("jobs_home")
    write_sample(home)
    env = os.environ.copy()
    env["DEEPVM_HOME"] = str(home)
    env["DEEPVM_USER_CATALOG_DIR"] = str(tmp_path_factory.mktemp("jobs_user_catalogs"))
    env["DEEPVM_UPLOAD_CATALOG_DIR"] = str(tmp_path_factory.mktemp("jobs_uploads"))
    with running_server(env, tmp_path_factory.mktemp("jobs_logs")) as url:
        yield url


def test_running_jobs_shows_the_ledger(page: Page, jobs_server: str,
                                       artifacts_dir: Path) -> None:
    page.goto(f"{jobs_server}/jobs")
    expect(page.get_by_role("heading", name="Running jobs", level=1)).to_be_visible(
        timeout=LOAD_TIMEOUT_MS)
    card = page.locator(f".st-key-job_{PLAN_ID}")
    expect(card).to_contain_text(f"Plan {PLAN_ID}: TR: 1 x g5.xlarge spot + 1 x t3.xlarge",
                                 timeout=LOAD_TIMEOUT_MS)
    expect(card).to_contain_text("3.60 USD")
    expect(card).to_contain_text("Progress 100%")
    expect(card).to_contain_text("makespan 2.60-4.10 h, cost 2.80-4.40 USD")
    expect(card).to_contain_text("done in")
    chart = card.locator(".js-plotly-plot")
    expect(chart).to_be_visible()
    for text in ("on demand", "deadline", "8.00", "7.70", "plan P10-P90"):  # counterfactuals
        expect(chart).to_contain_text(text)
    screenshot(page, artifacts_dir / "running-jobs.png")
