"""The rolling-origin evaluation's tables (deepvm_core/job/rolling.py, data/rolling-forecast.csv
written by bench/bench_rolling.py --write-data) and docs/method.md, which shows them; the
default trace model is the best of that evaluation, and its band covers at the nominal rate."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepvm_core.job.forecast import DEFAULT_TRACE_MODEL, FORECAST_MODELS, trace_model
from deepvm_core.job.rolling import (
    BUCKET_MODEL,
    TARGET_COVERAGE,
    best_model,
    model_scores,
    origins,
    read_rows,
    rolling_tables,
)
from deepvm_core.market.trace import TraceError

METHOD_DOC = Path(__file__).resolve().parents[1] / "docs" / "method.md"


def test_the_method_doc_shows_the_generated_tables_and_how_to_read_them():
    text = METHOD_DOC.read_text(encoding="utf-8")
    for table in rolling_tables():
        assert table.markdown() in text, table.key
        assert table.reading in text, table.key


def test_every_development_trace_and_model_is_in_the_results():
    rows = read_rows()
    models = {r["model"] for r in rows}
    assert models == {*FORECAST_MODELS, BUCKET_MODEL}
    traces = {r["trace"] for r in rows}
    assert len(traces) >= 11  # 12 traces; one never lets the job run after its first week
    for name in traces:  # every model on every (trace, origin, job)
        keys = {m: {(r["origin_day"], r["job_hours"]) for r in rows
                    if r["trace"] == name and r["model"] == m} for m in models}
        assert len({frozenset(v) for v in keys.values()}) == 1, name


def test_the_default_model_is_the_best_and_its_band_is_honest():
    assert best_model() == DEFAULT_TRACE_MODEL
    scores = model_scores()
    assert scores[DEFAULT_TRACE_MODEL][2] >= TARGET_COVERAGE
    assert trace_model(None, "failover") == DEFAULT_TRACE_MODEL
    assert trace_model(None, "deadline") == "replay"
    assert trace_model("closed-form", "wait") == "closed-form"
    with pytest.raises(TraceError, match="replayed only"):
        trace_model("renewal", "deadline")
    with pytest.raises(TraceError, match="must be one of"):
        trace_model("oracle", "wait")


def test_scores_and_the_best_model_by_hand():
    def row(model: str, forecast: float, truth: float, coverage: float) -> dict[str, str]:
        return {"trace": "t", "origin_day": "7", "job_hours": "5", "model": model,
                "forecast_hours": str(forecast), "p10_hours": "0", "p90_hours": "0",
                "truth_hours": str(truth), "coverage": str(coverage), "narrow_coverage": "nan"}

    rows = [row("closed-form", 11, 10, 0.9), row("closed-form", 13, 10, 0.8),
            row("closed-form", 20, 10, 0.7),  # |error| 10 %, 30 %, 100 %: median 30 %
            row("renewal", 10.5, 10, 0.5), row("renewal", 10.5, 10, 0.6),
            row("renewal", 10.5, 10, 0.7),  # 5 % each, but the band covers 60 %
            row("replay", 12, 10, 0.85), row("replay", 12, 10, 0.85),
            row("replay", float("inf"), 10, 0.0)]  # 20 %, 20 %, inf: median 20 %
    scores = model_scores(rows)
    assert scores["closed-form"] == pytest.approx((30.0, 100 / 3, 80.0, 3))
    assert scores["renewal"] == pytest.approx((5.0, 100.0, 60.0, 3))
    assert scores["replay"] == pytest.approx((20.0, 0.0, 170 / 3, 3))
    # renewal is closest but its band is not honest, replay's neither (56.7 %): closed form
    assert best_model(rows) == "closed-form"


def test_origins_by_hand():
    # 27 days: every 2 days from day 7 to 20 (= 27 - 7)
    assert origins(27.05) == [7.0, 9.0, 11.0, 13.0, 15.0, 17.0, 19.0]
    # 7.39 days, shorter than two weeks: every day with 3 days on either side
    assert origins(7.39) == [3.0, 4.0]
    assert origins(14.0) == [7.0]


def test_the_readme_shows_the_summary_table():
    """Issue 25: the rolling-origin table is in the README too (the models' scores)."""
    readme = (METHOD_DOC.parents[1] / "README.md").read_text(encoding="utf-8")
    assert rolling_tables()[0].markdown() in readme
