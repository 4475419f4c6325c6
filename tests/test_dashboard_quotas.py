"""The dashboard shows quotas honestly (issue 24, part 4): the Instances page lists every
family's quota row (a family without one is flagged unlimited), and the sidebar toggle says
what the bundled rows are."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.columns import Col
from dashboard.result_frames import quota_frame
from deepvm_core.catalog.store import load_catalog

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
TODAY = "aws-us-east-1-2025-h1"


def test_quota_frame_lists_every_family_and_marks_the_unlimited():
    catalog = load_catalog(TODAY)
    frame = quota_frame(catalog)
    rows = {r[Col.FAMILY]: (r[Col.OD_VCPUS], r[Col.SPOT_VCPUS], r[Col.FAMILY_TYPES])
            for r in frame.to_dict("records")}
    # data/README.md, "Quotas"; type counts of the catalog's file: 39 G, 8 P, 3 Trn GPU types;
    # 19 C, 19 M, 30 R CPU types
    assert rows == {"G": (32, 128, "39 GPU, 0 CPU"), "C": (256, 256, "0 GPU, 19 CPU"),
                    "D": (256, 256, "0 GPU, 0 CPU"), "M": (256, 256, "0 GPU, 19 CPU"),
                    "T": (256, 256, "0 GPU, 0 CPU"), "R": (256, 256, "0 GPU, 30 CPU"),
                    "P": (192, 192, "8 GPU, 0 CPU"), "Trn": (128, 128, "3 GPU, 0 CPU")}
    without_p = replace(catalog, quotas=tuple(q for q in catalog.quotas if q.family != "P"))
    last = quota_frame(without_p).iloc[-1]
    assert last[Col.FAMILY] == "P"
    assert last[[Col.OD_VCPUS, Col.SPOT_VCPUS]].isna().all()


@pytest.fixture
def app(tmp_path, monkeypatch) -> AppTest:
    monkeypatch.setenv("DEEPVM_USER_CATALOG_DIR", str(tmp_path / "user"))
    return AppTest.from_file(str(APP), default_timeout=90)


def test_instances_page_shows_the_quota_rows(app: AppTest):
    app.query_params.update({"page": "instances"})
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    table = next(d.value for d in app.dataframe if Col.SPOT_VCPUS in d.value.columns)
    assert dict(zip(table[Col.FAMILY], table[Col.SPOT_VCPUS], strict=True))["P"] == 192
    assert any(c.value.startswith("The most vCPUs each instance family may run")
               for c in app.caption)
    assert not any("No quota row" in w.value for w in app.warning)
    toggle = next(t for t in app.toggle if t.label == "Apply vCPU quotas")
    assert "not your account's" in toggle.help
    assert "Off is the paper's simulation mode" in toggle.help
