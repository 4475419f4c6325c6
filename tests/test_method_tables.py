"""The method's error tables (deepvm_core/hardware/method_tables.py) and docs/method.md, which shows
them. Values are checked by hand where the arithmetic is short."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from deepvm_core.hardware.method_tables import (
    MethodTable,
    artifact_curves,
    estimator_error_tables,
)

METHOD_DOC = Path(__file__).resolve().parents[1] / "docs" / "method.md"


@pytest.fixture(scope="module")
def tables() -> dict[str, MethodTable]:
    return {t.key: t for t in estimator_error_tables()}


def test_method_doc_shows_the_generated_tables_and_how_to_read_them(tables):
    text = METHOD_DOC.read_text(encoding="utf-8")
    for t in tables.values():
        assert t.markdown() in text, t.key
        assert t.reading in text, t.key


def test_leave_one_out_rows_by_hand(tables):
    rows = {r["chip (type)"]: r for r in tables["leave_one_out"].records()}
    assert list(rows) == ["M60 (g3s.xlarge)", "T4 (g4dn.xlarge)", "A10G (g5.xlarge)"]
    # M60 predicted with k fitted on T4 and A10G: k = sqrt(377/I_T4 x 696/I_A10G),
    # I = C^w B^(1-w), w = 0.342248 (see tests/test_gpu_estimates.py)
    w = 0.342248

    def index(c: float, b: float) -> float:
        return c**w * b ** (1 - w)

    k = math.sqrt(377 / index(65, 320) * 696 / index(125, 600))
    m60 = rows["M60 (g3s.xlarge)"]
    assert m60["measured eFLOPS"] == 100.0
    assert m60["estimate"] == pytest.approx(k * index(4.83, 160.4), rel=1e-5)
    assert m60["error (%)"] == pytest.approx(100 * (k * index(4.83, 160.4) / 100 - 1), abs=1e-3)


def test_benchmark_rows_by_hand(tables):
    rows = {r["chip (benchmark row)"]: r for r in tables["benchmarks"].records()}
    h100 = rows["H100 (H100 80GB SXM5)"]
    # Lambda: H100 SXM5 2791 img/s and 311 seq/s against the A10's 638 and 42
    assert h100["ResNet-50 AMP / A10"] == pytest.approx(2791 / 638)
    assert h100["BERT-large FP16 / A10"] == pytest.approx(311 / 42)


def test_prior_error_rows_and_markdown(tables):
    t = tables["prior_errors"]
    assert [r["curve"] for r in t.records()] == ["g3s.xlarge", "g4dn.xlarge", "g5.xlarge"]
    # K = 1 column: RMSE of n - measured; the measured curves are the bundled ones
    for row, curve in zip(t.records(), artifact_curves(), strict=True):
        linear = math.sqrt(sum((n - s) ** 2 for n, s in zip(curve.nodes, curve.speedups,
                                                            strict=True)) / len(curve.nodes))
        assert row["K = 1 (S(n) = n)"] == pytest.approx(linear)
        assert row["prior"] < row["K = 1 (S(n) = n)"]
    lines = t.markdown().splitlines()
    assert lines[0] == "| curve | prior | K = 1 (S(n) = n) |"
    assert lines[1] == "|---|---|---|"
    assert len(lines) == 2 + 3


def test_the_class_tables_are_in_the_method_doc_and_the_readme():
    """Issue 24: both error tables of the per-class estimator in docs/method.md (with how to read
    them) and in the README."""
    from deepvm_core.hardware.method_tables import workload_class_error_tables
    method = METHOD_DOC.read_text(encoding="utf-8")
    readme = (METHOD_DOC.parents[1] / "README.md").read_text(encoding="utf-8")
    for t in workload_class_error_tables():
        assert t.markdown() in method, t.key
        assert t.reading in method, t.key
        assert t.markdown() in readme, t.key


def test_the_transformer_class_is_within_15_percent_of_the_public_bert_ratios():
    """Mean |in-sample error| over the fitted rows (V100 ... H200, B200 held out)."""
    from deepvm_core.hardware.class_eflops import class_mean_abs_error
    assert class_mean_abs_error("transformer") < 0.15
