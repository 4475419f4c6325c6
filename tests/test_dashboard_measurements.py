"""Issue 20, items 1-3 on the Plan a job page (AppTest): measurements that fail change
nothing, implausible measured speedups are named on the card, and the eFLOPS calibration's
message is about the file, not a type the user never chose."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"

# 2 VMs measured 6x slower than 1: S(2) = 60 / 360 = 0.17.
NOISE = ("instance,nodes,epoch_seconds\n"
         "g4dn.xlarge,1,60\ng4dn.xlarge,2,360\ng4dn.xlarge,4,20\ng4dn.xlarge,8,12\n")


@pytest.fixture
def plan_page(tmp_path, monkeypatch) -> AppTest:
    monkeypatch.setenv("DEEPVM_USER_CATALOG_DIR", str(tmp_path / "user"))
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.query_params.update({"page": "plan", "trials": "200",
                            "catalog": "aws-us-east-1-2023-10"})
    return at


def upload(at: AppTest, name: str, text: str) -> AppTest:
    at.run()
    at.file_uploader(key="plan_csv").upload(name, text.encode(), "text/csv")
    return at.run()


def card_texts(at: AppTest, kind: str) -> list[str]:
    """The ``kind`` elements (warning, markdown...) inside the plan's card."""
    def find(node):
        for child in getattr(node, "children", {}).values():
            if getattr(child, "key", None) == "plan_card":
                return child
            found = find(child)
            if found is not None:
                return found
        return None

    card = find(at.main)
    assert card is not None, "no plan card"
    return [e.value for e in card.get(kind)]


def test_implausible_measured_speedups_warn_on_the_card(plan_page: AppTest) -> None:
    plan_page.query_params["speedup"] = "measured"
    at = upload(plan_page, "noise.csv", NOISE)
    assert not at.exception
    assert ("Measured speedups of g4dn.xlarge look implausible: it falls as VMs are added "
            "(S(2) = 0.17 after S(1) = 1.00). Check the epoch times: the measured model "
            "follows them as given.") in card_texts(at, "warning")
