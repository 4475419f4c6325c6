"""Issue 16 in a real browser: a calibration CSV without signal shows its warning, and "Use
these fits" waits for a confirmation."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_helpers import screenshot
from playwright.sync_api import Page, expect

from deepvm_core.workload.workload import EXAMPLE_EPOCHS

pytestmark = pytest.mark.e2e

LOAD_TIMEOUT_MS = 45_000
UPDATE_TIMEOUT_MS = 15_000

# Speedups 2, 1, 2, 1, 2: every logistic fit has R² <= 0.167 (derivation in
# tests/test_hardening_cli.py, NO_SIGNAL).
NO_SIGNAL = ("instance,nodes,epoch_seconds\n"
             "g4dn.xlarge,1,60\ng4dn.xlarge,2,30\ng4dn.xlarge,4,60\ng4dn.xlarge,8,30\n"
             "g4dn.xlarge,16,60\ng4dn.xlarge,32,30\n")


def test_untrusted_calibration_needs_a_confirmation(page: Page, streamlit_server: str,
                                                    artifacts_dir: Path,
                                                    tmp_path: Path) -> None:
    page.goto(f"{streamlit_server}/plan?trials=200&catalog=aws-us-east-1-2023-10")
    expect(page.locator(".st-key-plan_card h3")).to_contain_text(
        f"{EXAMPLE_EPOCHS:g} epochs of your job", timeout=LOAD_TIMEOUT_MS)
    page.get_by_text("Calibrate: fit the scaling curves to your measurements").click()
    csv = tmp_path / "random.csv"
    csv.write_text(NO_SIGNAL)
    page.locator(".st-key-plan_csv input[type=file]").set_input_files(str(csv))

    expect(page.get_by_text("These fits are not trusted")).to_be_visible(
        timeout=UPDATE_TIMEOUT_MS)
    expect(page.get_by_text("is below 0.8").first).to_be_visible()
    use = page.get_by_role("button", name="Use these fits in the working catalog")
    expect(use).to_be_disabled()
    screenshot(page, artifacts_dir / "calibration-untrusted.png")

    page.get_by_text("Use them anyway: I have checked the measurements").click()
    expect(use).to_be_enabled(timeout=UPDATE_TIMEOUT_MS)
    use.click()
    expect(page.get_by_text("The working catalog now carries these fits")).to_be_visible(
        timeout=UPDATE_TIMEOUT_MS)
    expect(page.get_by_text("Traceback")).to_have_count(0)
