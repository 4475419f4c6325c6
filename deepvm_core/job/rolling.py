"""The rolling-origin evaluation of the forecasts (issue 25): its design's constants, and the
tables of its results for docs/method.md and the Method page.

``bench/bench_rolling.py`` runs it on the development traces (which the project does not
ship) and writes one row per case to ``data/rolling-forecast.csv`` (results, not traces):
trace, origin day, job hours, model, the forecast's mean and P10/P90 makespan, the truth's
mean makespan (the ``wait`` backtest of the next 7 days), the share of the truth's runs inside
the P10-P90 band (``coverage``) and the same for the band of the whole window alone
(``narrow_coverage``). :func:`rolling_tables` turns the rows into tables; the tables in
docs/method.md are its output (``tests/test_rolling.py`` checks them), and
:data:`~deepvm_core.job.forecast.DEFAULT_TRACE_MODEL`, the model ``plan`` uses with traces, is
the best of the evaluation (same test).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

import numpy as np

from deepvm_core.bundled import read_bundled_file
from deepvm_core.hardware.method_tables import MethodTable
from deepvm_core.job.forecast import FORECAST_MODELS

#: The jobs: compute hours on one spot VM, in segments of one hour plus a 36 s checkpoint,
#: restart 6 min.
JOB_HOURS: Final = (5.0, 20.0, 60.0)
SEGMENT_HOURS: Final = 1.0
STALL_HOURS: Final = 0.01
RESTART_HOURS: Final = 0.1
#: Start times of the truth's backtest.
TRUTH_STARTS: Final = 200
#: Origins: every ORIGIN_STEP_DAYS from FIRST_ORIGIN_DAY to HORIZON_DAYS before the end; a
#: trace shorter than two horizons: every day with SHORT_MARGIN_DAYS on either side.
FIRST_ORIGIN_DAY: Final = 7.0
ORIGIN_STEP_DAYS: Final = 2.0
HORIZON_DAYS: Final = 7.0
SHORT_MARGIN_DAYS: Final = 3.0
#: The row of the plan without a trace (the >20 % bucket's defaults and spread).
BUCKET_MODEL: Final = "bucket"
#: The Spot Advisor bucket of the development traces' types (p3: >20 %).
EVALUATION_BUCKET: Final = 4
#: The results file under data/.
ROLLING_CSV: Final = "rolling-forecast.csv"
CSV_COLUMNS: Final = ("trace", "origin_day", "job_hours", "model", "forecast_hours",
                      "p10_hours", "p90_hours", "truth_hours", "coverage", "narrow_coverage")
#: The coverage of the P10-P90 band an honest band reaches, percent (its nominal rate).
TARGET_COVERAGE: Final = 80.0
#: A forecast "within 15 %".
CLOSE: Final = 0.15
#: Model names in the tables.
MODEL_LABELS: Final = {"closed-form": "closed form", "renewal": "renewal", "replay": "replay",
                       BUCKET_MODEL: "bucket, no trace"}


def origins(days: float) -> list[float]:
    """The origin days of a trace of ``days`` days (module constants)."""
    if days >= 2 * HORIZON_DAYS:
        count = math.floor((days - HORIZON_DAYS - FIRST_ORIGIN_DAY) / ORIGIN_STEP_DAYS + 1e-9)
        return [FIRST_ORIGIN_DAY + ORIGIN_STEP_DAYS * i for i in range(count + 1)]
    last = math.floor(days - SHORT_MARGIN_DAYS + 1e-9)
    return [float(d) for d in range(int(SHORT_MARGIN_DAYS), last + 1)]


def read_rows() -> list[dict[str, str]]:
    """The bundled results (``data/rolling-forecast.csv``)."""
    text = read_bundled_file(ROLLING_CSV).decode("utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def _scores(rows: Sequence[Mapping[str, str]]) -> tuple[float, float, float, int]:
    """Median |error|, share within 15 %, mean coverage (all in %), and the number of cases."""
    f = np.array([float(r["forecast_hours"]) for r in rows])
    t = np.array([float(r["truth_hours"]) for r in rows])
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.where(np.isfinite(f), np.abs(f / t - 1.0), np.inf)
    cover = np.array([float(r["coverage"]) for r in rows])
    return (100 * float(np.median(err)), 100 * float(np.mean(err <= CLOSE)),
            100 * float(np.mean(cover)), len(rows))


def model_scores(rows: Iterable[Mapping[str, str]] | None = None,
                 ) -> dict[str, tuple[float, float, float, int]]:
    """Per model, over every case: median |error| (%), share within 15 % (%), coverage of the
    P10-P90 band (%), cases."""
    data = list(read_rows() if rows is None else rows)
    models = [m for m in (*FORECAST_MODELS, BUCKET_MODEL) if any(r["model"] == m for r in data)]
    return {m: _scores([r for r in data if r["model"] == m]) for m in models}


def best_model(rows: Iterable[Mapping[str, str]] | None = None) -> str:
    """The best trace model of the evaluation: the least median |error| over every case among
    the models whose P10-P90 band covers at least :data:`TARGET_COVERAGE` of the truth's runs
    (a band that is not honest disqualifies); if none does, the highest coverage."""
    scores = model_scores(rows)
    honest = [m for m in FORECAST_MODELS if scores[m][2] >= TARGET_COVERAGE]
    if not honest:
        return max(FORECAST_MODELS, key=lambda m: scores[m][2])
    return min(honest, key=lambda m: (scores[m][0], -scores[m][2]))


def rolling_tables(rows: Iterable[Mapping[str, str]] | None = None) -> tuple[MethodTable, ...]:
    """The overall table (one row per model) and the per-pool table (one row per trace, three
    columns per trace model) of the rolling-origin evaluation."""
    data = list(read_rows() if rows is None else rows)
    scores = model_scores(data)
    overall = MethodTable(
        key="rolling_overall",
        title="Forecasts of the next 7 days from the 7 days before, every development trace "
              "and origin, jobs of 5, 20 and 60 compute hours on one spot VM",
        columns=("model", "cases", "median abs. error (%)", "within 15 % (%)",
                 "P10-P90 coverage (%)"),
        formats=("", "d", ".0f", ".0f", ".0f"),
        rows=tuple((MODEL_LABELS[m], s[3], s[0], s[1], s[2]) for m, s in scores.items()),
        reading=("Error: the forecast's mean makespan against the mean of the next 7 days' "
                 "backtest (200 start times). Coverage: the share of those runs inside the "
                 "forecast's P10-P90 band, 80 % if the band is honest. The bucket row is the "
                 "plan without a trace (the >20 % bucket's MTBI and W, its spread in the "
                 "band), the same forecast at every origin."))
    traces = sorted({r["trace"] for r in data})
    per_pool = []
    for name in traces:
        cells: list[str | float] = [name]
        for m in FORECAST_MODELS:
            s = _scores([r for r in data if r["trace"] == name and r["model"] == m])
            cells += [s[0], s[1], s[2]]
        per_pool.append(tuple(cells))
    columns: list[str] = ["trace"]
    for m in FORECAST_MODELS:
        label = MODEL_LABELS[m]
        columns += [f"{label}: median abs. error (%)", f"{label}: within 15 % (%)",
                    f"{label}: coverage (%)"]
    pools = MethodTable(
        key="rolling_pools",
        title="The same, per development trace",
        columns=tuple(columns),
        formats=("", *(".0f",) * 3 * len(FORECAST_MODELS)),
        rows=tuple(per_pool),
        reading=("Each trace has 7 origins (27-day traces) or 2 (7-day traces) and three jobs; "
                 "origins whose next days never let the job run are left out (bench/"
                 "bench_rolling.py counts them), and a trace with none left has no row."))
    return overall, pools
