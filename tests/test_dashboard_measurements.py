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


UNKNOWN_ONLY = ("instance,nodes,epoch_seconds\n"
                "zz9.mega,1,60\nzz9.mega,2,35\nzz9.mega,4,20\n"
                "g4dn.xlarg,1,60\ng4dn.xlarg,2,35\ng4dn.xlarg,4,20\n")


def test_the_eflops_calibration_speaks_of_the_file_not_of_a_type(plan_page: AppTest) -> None:
    at = upload(plan_page, "unknown.csv", UNKNOWN_ONLY)
    at.toggle(key="plan_cal_eflops").set_value(True).run()
    errors = [e.value for e in at.error]
    # Without a named reference type the plan's epoch time is on one A10G (issue 24): the
    # catalog type that stands for it is aws-us-east-1-2023-10's one-A10G type, g5.xlarge,
    # never the catalog's first type g3s.xlarge.
    assert ("Cannot calibrate from unknown.csv: unknown.csv: no row names a GPU type of "
            "catalog aws-us-east-1-2023-10 (it measures zz9.mega, g4dn.xlarg (did you mean "
            "g4dn.xlarge?)); the eFLOPS calibration needs the one-node time of the reference "
            "type g5.xlarge") in errors
    assert not any("g3s.xlarge" in e for e in errors)


def test_the_eflops_reference_is_the_plans(plan_page: AppTest) -> None:
    plan_page.query_params["ref"] = "g5.xlarge"
    at = upload(plan_page, "g4dn.csv", "instance,nodes,epoch_seconds\n"
                "g4dn.xlarge,1,60\ng4dn.xlarge,2,35\ng4dn.xlarge,4,20\ng4dn.xlarge,8,12\n")
    at.toggle(key="plan_cal_eflops").set_value(True).run()
    assert ("Cannot calibrate from g4dn.csv: g5.xlarge: the eFLOPS reference needs eFLOPS in "
            "the catalog and a measured one-node time in g4dn.csv") in [e.value for e in at.error]


def epoch_metric(at: AppTest) -> str:
    return next(m.value for m in at.metric if m.label == "Epoch time (s)")


def measurements_used(at: AppTest) -> dict[str, tuple[str, str]]:
    frame = next(d.value for d in at.dataframe if "Measurements used" in d.value.columns)
    return {row["GPU type"]: (row["Measurements used"], row["Uploaded rows not used because"])
            for _, row in frame.iterrows()}


BUNDLED = "deepvm-scaling"


@pytest.mark.parametrize(("name", "text", "why"), [
    ("one.csv", "instance,nodes,epoch_seconds\ng4dn.xlarge,1,66\ng4dn.xlarge,4,20\n",
     "1 distinct node count(s) >= 2 (4); the logistic has 3 parameters (a, b, c), so a fit "
     "needs at least 3"),
    ("no-one.csv", "instance,nodes,epoch_seconds\ng4dn.xlarge,2,40\ng4dn.xlarge,4,20\n"
                   "g4dn.xlarge,8,12\ng4dn.xlarge,16,8\n",
     "no one-node time (a row with nodes 1): the speedups t(1)/t(n) cannot be computed"),
])
def test_a_file_the_calibration_rejects_does_not_change_the_plan(
        plan_page: AppTest, name: str, text: str, why: str) -> None:
    before = plan_page.run()
    epoch = epoch_metric(before)
    at = upload(plan_page, name, text)
    assert epoch_metric(at) == epoch  # the bundled one-node times still in use
    used = measurements_used(at)
    assert used["g4dn.xlarge"] == (BUNDLED, why)
    assert used["g5.xlarge"] == (BUNDLED, "")


def test_a_file_is_in_use_for_the_types_it_measures_well(plan_page: AppTest) -> None:
    at = upload(plan_page, "g4dn.csv", "instance,nodes,epoch_seconds\n"
                "g4dn.xlarge,1,60\ng4dn.xlarge,2,35\ng4dn.xlarge,4,20\ng4dn.xlarge,8,12\n"
                "g5.xlarge,1,30\n")
    used = measurements_used(at)
    assert used["g4dn.xlarge"] == ("g4dn.csv", "")
    # issue 27, finding 1: one table in use, never the bundled rows next to the upload's
    assert used["g3s.xlarge"] == ("none", "")
    assert used["g5.xlarge"] == ("none", "0 distinct node count(s) >= 2 (none); the logistic "
                                            "has 3 parameters (a, b, c), so a fit needs at least 3")


def test_use_these_fits_is_disabled_without_fits(plan_page: AppTest) -> None:
    at = upload(plan_page, "zz.csv", "instance,nodes,epoch_seconds\n"
                "zz9.mega,1,60\nzz9.mega,2,35\nzz9.mega,4,20\nzz9.mega,8,12\n")
    assert at.button(key="plan_use_fits").disabled
    assert "(edited)" not in " ".join(m.value for m in at.sidebar.markdown)


# ----------------------------------------------------------------------------- item 7 (URL)

GOOD = ("instance,nodes,epoch_seconds\n"
        "g4dn.xlarge,1,60\ng4dn.xlarge,2,35\ng4dn.xlarge,4,20\ng4dn.xlarge,8,12\n"
        "g4dn.xlarge,16,8\n")


def test_an_edited_catalog_is_in_a_shared_link(plan_page: AppTest, tmp_path,
                                               monkeypatch) -> None:
    monkeypatch.setenv("DEEPVM_UPLOAD_CATALOG_DIR", str(tmp_path / "uploads"))
    at = upload(plan_page, "good.csv", GOOD)
    at.button(key="plan_use_fits").click().run()
    assert "(edited)" in " ".join(m.value for m in at.sidebar.markdown)
    key = at.query_params["edited"]
    assert len(key) == 16
    shared = AppTest.from_file(str(APP), default_timeout=90)
    shared.query_params.update({"page": "plan", "trials": "200", "edited": key,
                                "catalog": "aws-us-east-1-2023-10"})
    shared.run()
    assert "(edited)" in " ".join(m.value for m in shared.sidebar.markdown)
    assert shared.query_params["edited"] == key
    # A key the server does not have: said, and the catalog is used unedited.
    gone = AppTest.from_file(str(APP), default_timeout=90)
    gone.query_params.update({"edited": "0123456789abcdef", "catalog": "aws-us-east-1-2023-10"})
    gone.run()
    assert ("URL parameter edited='0123456789abcdef' names no edited catalog kept on this "
            "server; using aws-us-east-1-2023-10 unedited.") in [w.value for w in gone.warning]
    assert "edited" not in gone.query_params


# ----------------------------------------------------- issue 27, hostile finding 1 (trust)

# Epoch times that fit no scaling curve (R² far below the trust rule's 0.8).
NOISY = ("instance,nodes,epoch_seconds\n"
         "g4dn.xlarge,1,6000\ng4dn.xlarge,2,3000\ng4dn.xlarge,4,6000\ng4dn.xlarge,8,3000\n"
         "g4dn.xlarge,12,6000\ng4dn.xlarge,16,3000\n")


def test_an_untrusted_upload_moves_the_plan_only_once_confirmed(plan_page: AppTest) -> None:
    before = plan_page.run()
    epoch = epoch_metric(before)
    at = upload(plan_page, "noisy.csv", NOISY)
    assert epoch_metric(at) == epoch  # nothing moved before the confirmation
    source, why = measurements_used(at)["g4dn.xlarge"]
    assert source == BUNDLED
    assert "the fit is not trusted (R² = " in why
    box = next(c for c in at.checkbox if c.key.startswith("plan_cal_confirm_"))
    at = box.check().run()
    assert measurements_used(at)["g4dn.xlarge"] == ("noisy.csv", "")
