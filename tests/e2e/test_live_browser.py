"""Live prices and Regions in a real browser, against loopback fakes of AWS.

The dashboard runs in its own Streamlit server whose boto3 reaches only the fakes of
``tests/aws_fakes.py`` (moto for DescribeInstanceTypes, a local server for spot prices and the
Pricing API) through ``AWS_ENDPOINT_URL_EC2`` / ``AWS_ENDPOINT_URL_PRICING``, with fake
credentials, no AWS config files and a dead proxy for anything beyond loopback; a second server
points both endpoints at a closed port (the endpoint is down). Everything listens on 127.0.0.1.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from aws_fakes import (
    FAKE_ACCESS_KEY_ID,
    FAKE_SECRET_ACCESS_KEY,
    FAKE_SESSION_TOKEN,
    FakeAws,
)
from browser_helpers import screenshot
from dashboard_server import running_server
from loopback import closed_port_url
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e

LOAD_TIMEOUT_MS = 30_000
FETCH_TIMEOUT_MS = 90_000
UPDATE_TIMEOUT_MS = 15_000
SECRETS = (FAKE_ACCESS_KEY_ID, FAKE_SECRET_ACCESS_KEY, FAKE_SESSION_TOKEN)


# ----------------------------------------------------------------------------- servers


def _aws_env(tmp: Path, endpoint: str) -> dict[str, str]:
    """The environment of a dashboard whose boto3 reaches ``endpoint`` only."""
    dead_proxy = closed_port_url()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("AWS_")
           and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    env.update({
        "AWS_ACCESS_KEY_ID": FAKE_ACCESS_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": FAKE_SECRET_ACCESS_KEY,
        "AWS_SESSION_TOKEN": FAKE_SESSION_TOKEN,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_CONFIG_FILE": str(tmp / "no-such-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp / "no-such-credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_ENDPOINT_URL_EC2": endpoint,
        "AWS_ENDPOINT_URL_PRICING": endpoint,
        # Loopback only: anything else would go through a proxy where nothing listens.
        "HTTP_PROXY": dead_proxy, "HTTPS_PROXY": dead_proxy,
        "NO_PROXY": "127.0.0.1,localhost",
        "DEEPVM_HOME": str(tmp / "home"),
        "DEEPVM_FETCHED_CATALOG_DIR": str(tmp / "fetched"),
        "DEEPVM_USER_CATALOG_DIR": str(tmp / "user"),
    })
    return env


@pytest.fixture(scope="module")
def live_server(fake_aws: FakeAws, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The dashboard, its AWS endpoints the loopback fakes."""
    tmp = tmp_path_factory.mktemp("live")
    with running_server(_aws_env(tmp, fake_aws.url), tmp) as url:
        yield url


@pytest.fixture(scope="module")
def down_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The dashboard, its AWS endpoints a closed port of 127.0.0.1 (the endpoint is down)."""
    tmp = tmp_path_factory.mktemp("down")
    with running_server(_aws_env(tmp, closed_port_url()), tmp) as url:
        yield url


# ----------------------------------------------------------------------------- helpers


def open_live(page: Page, url: str) -> None:
    page.goto(f"{url}/live?catalog=aws-us-east-1-2023-10")  # its three types are faked
    expect(page.get_by_role("heading", name="Live prices", level=1)).to_be_visible(
        timeout=LOAD_TIMEOUT_MS)
    expect(page.get_by_role("button", name="Fetch live prices")).to_be_visible()


def sidebar(page: Page):
    return page.get_by_test_id("stSidebar")


def no_trace_and_no_secret(page: Page) -> None:
    expect(page.get_by_test_id("stException")).to_have_count(0)
    expect(page.get_by_text("Traceback")).to_have_count(0)
    html = page.content()
    for secret in SECRETS:
        assert secret not in html
        assert secret[:12] not in html


# ----------------------------------------------------------------------------- tests


def test_fetch_two_regions_use_the_catalog_and_compare(page: Page, live_server: str,
                                                       fake_aws: FakeAws,
                                                       artifacts_dir: Path) -> None:
    fake_aws.reset()
    open_live(page, live_server)
    expect(page.locator(".st-key-lp_regions")).to_contain_text("us-east-1")  # the default
    page.get_by_role("textbox", name="Other regions").fill("eu-west-1")

    page.get_by_role("button", name="Fetch live prices").click()
    expect(page.get_by_text(re.compile(r"Fetched 2 region\(s\) in"))).to_be_visible(
        timeout=FETCH_TIMEOUT_MS)
    assert fake_aws.count("DescribeSpotPriceHistory") > 0
    assert fake_aws.count("GetProducts") > 0
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
    expect(page.get_by_text("Fetch notes · us-east-1")).to_be_visible()
    expect(page.get_by_text("not offered in us-east-1 (DescribeInstanceTypes): g3s.xlarge")
           ).to_be_visible()

    page.get_by_test_id("stRadio").get_by_text("eu-west-1", exact=True).click()
    expect(page.get_by_text("Fetch notes · eu-west-1")).to_be_visible(timeout=UPDATE_TIMEOUT_MS)
    expect(page.locator(".js-plotly-plot")).to_have_count(1, timeout=UPDATE_TIMEOUT_MS)
    no_trace_and_no_secret(page)
    screenshot(page, artifacts_dir / "page-live-prices.png")

    page.get_by_role("button", name="Use this catalog").click()
    expect(page.get_by_text(re.compile(r"aws-eu-west-1-\d{8}T\d{6}Z is now the active catalog"))
           ).to_be_visible(timeout=UPDATE_TIMEOUT_MS)
    expect(sidebar(page)).to_contain_text(re.compile(r"aws-eu-west-1-\d{8}T\d{6}Z"))
    expect(sidebar(page)).to_contain_text("fetched from the provider")
    expect(page).to_have_url(re.compile(r"catalog=fetched(%3A|:)aws-eu-west-1-"))

    page.get_by_role("link", name="Recommend from it").click()
    expect(page.get_by_role("heading", name="Recommend", level=1)).to_be_visible(
        timeout=LOAD_TIMEOUT_MS)
    card = page.locator(".st-key-rec_card")
    expect(card.locator("h3")).to_contain_text("g4dn.xlarge", timeout=UPDATE_TIMEOUT_MS)
    expect(page.get_by_text(re.compile(r"Catalog aws-eu-west-1-\d{8}T\d{6}Z"))).to_be_visible()

    page.get_by_role("link", name="Regions", exact=True).click()
    expect(page.get_by_role("heading", name="Regions", level=1)).to_be_visible(
        timeout=LOAD_TIMEOUT_MS)
    best = page.locator(".st-key-rg_best")
    expect(best).to_contain_text("us-east-1", timeout=UPDATE_TIMEOUT_MS)
    # The paper's Table IV first choice, 2.8526 USD/h (17 x 0.1578 + 0.17), in the card's money
    # format (2 decimals, issue 20), its unit in the metric's label (issue 27: never cut).
    expect(best.get_by_test_id("stMetric").filter(has_text="Hourly price (USD/h)")).to_contain_text(
        "2.85")
    expect(page.locator(".st-key-rg_catalogs")).to_contain_text("eu-west-1")
    expect(page.locator(".js-plotly-plot")).to_have_count(1, timeout=UPDATE_TIMEOUT_MS)
    # Issue 24: the best region's (green) bar is the longest, drawn on top (the last row).
    bars = page.locator(".js-plotly-plot").evaluate(
        "el => ({x: Array.from(el._fullData[0].x), y: Array.from(el._fullData[0].y)})")
    assert bars["y"][-1] == "us-east-1"
    assert bars["x"][-1] == max(bars["x"])
    no_trace_and_no_secret(page)
    screenshot(page, artifacts_dir / "page-regions.png")


def test_endpoint_down_says_why_and_the_app_keeps_working(page: Page, down_server: str,
                                                          artifacts_dir: Path) -> None:
    open_live(page, down_server)
    page.get_by_test_id("stForm").get_by_text("Advanced").click()  # the sidebar has one too
    attempts = page.get_by_label("Attempts per request", exact=True)
    attempts.fill("1")
    attempts.press("Tab")
    page.get_by_role("button", name="Fetch live prices").click()
    error = page.get_by_test_id("stAlertContentError")
    expect(error).to_contain_text("could not be reached", timeout=FETCH_TIMEOUT_MS)
    expect(error).to_contain_text("DescribeInstanceTypes")
    expect(error).to_contain_text("us-east-1")
    expect(page.get_by_text("Fetch failed: nothing was written")).to_be_visible()
    expect(page.get_by_text("The active catalog is unchanged")).to_be_visible()
    expect(sidebar(page)).to_contain_text("aws-us-east-1-2023-10")
    no_trace_and_no_secret(page)
    screenshot(page, artifacts_dir / "page-live-prices-failed.png")

    page.get_by_role("link", name="Recommend", exact=True).click()
    expect(page.locator(".st-key-rec_card h3")).to_contain_text("17 × g4dn.xlarge",
                                                                timeout=LOAD_TIMEOUT_MS)
    page.get_by_role("link", name="Regions", exact=True).click()
    # no fetch: the bundled regional catalogs are compared
    expect(page.locator(".st-key-rg_best")).to_contain_text("2025-h1", timeout=LOAD_TIMEOUT_MS)
    no_trace_and_no_secret(page)
