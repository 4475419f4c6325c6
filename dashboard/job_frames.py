"""Data frames of the job planner's results, as the Plan a job page shows and charts them
(pure: no Streamlit)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard import url_plan
from deepvm_core.catalog import Catalog
from deepvm_core.catalog.types import INTERRUPTION_BUCKET_LABELS
from deepvm_core.hardware.calibrate import Calibration
from deepvm_core.hardware.coverage import TypeTable
from deepvm_core.market.mtbi import default_mtbi
from deepvm_core.pipeline.plan import JobPlanResult, PlanEstimate
from deepvm_core.recommend.policies import PAPER_POLICIES, POLICY_LABELS
from deepvm_core.text import duration
from deepvm_core.workload.speedup import SpeedupModel, fitted_speedup, paper_speedup

#: The editable column of :func:`mtbi_frame`.
MTBI_COLUMN = "MTBI (h, before the scale)"
#: The GPU VMs n of the speedup curves.
SPEEDUP_NODES = np.arange(1, 33)


def mtbi_frame(catalog: Catalog, overrides: dict[str, float]) -> pd.DataFrame:
    """Per GPU type: its Spot Advisor bucket, where its MTBI comes from (``user`` for an
    override in ``overrides``, else :func:`deepvm_core.market.mtbi.default_mtbi`'s source) and
    the MTBI in hours before the scale, as text (:func:`dashboard.url_plan.format_mtbi_hours`): a
    person types it, and :func:`mtbi_overrides` reads it (scientific notation too)."""
    rows = []
    for g in catalog.gpu_types:
        hours, source = default_mtbi(g)
        rows.append({
            "GPU type": g.name,
            "Spot Advisor bucket": (INTERRUPTION_BUCKET_LABELS[g.interruption_bucket]
                                    if g.interruption_bucket is not None else "none"),
            "Source": "user" if g.name in overrides else source,
            MTBI_COLUMN: url_plan.format_mtbi_hours(overrides.get(g.name, hours)),
        })
    return pd.DataFrame(rows, columns=["GPU type", "Spot Advisor bucket", "Source", MTBI_COLUMN])


def mtbi_overrides(catalog: Catalog, edited: pd.DataFrame, in_use: dict[str, float]
                   ) -> tuple[dict[str, float], list[str]]:
    """The MTBI hours of an edited :func:`mtbi_frame` that differ from the defaults: GPU type
    name -> hours (a cleared cell: the default); and why each refused cell was refused (that
    type keeps its value of ``in_use``, else its default)."""
    defaults = {g.name: default_mtbi(g)[0] for g in catalog.gpu_types}
    # Types of another catalog keep their overrides (for when that catalog is back).
    overrides = {name: h for name, h in in_use.items() if name not in defaults}
    refused: list[str] = []
    for name, value in zip(edited["GPU type"], edited[MTBI_COLUMN], strict=True):
        name, text = str(name), "" if value is None or value != value else str(value).strip()
        if not text:  # a cleared cell: the default
            continue
        why = url_plan.mtbi_refusal(name, text)
        if why is not None:
            refused.append(why)
            if name in in_use:
                overrides[name] = in_use[name]
            continue
        hours = float(text)
        if hours != defaults.get(name):
            overrides[name] = hours
    return overrides, refused


#: The per-type assumptions table's column of a transformer job's GPU memory verdict.
MEMORY_FIT_COLUMN = "GPU memory (one replica)"


def gpu_assumptions_frame(result: JobPlanResult) -> pd.DataFrame:
    """Per GPU type, what the plan assumes (``result.assumptions.gpu_types``): its MTBI and
    where it comes from, its speedup model and one-VM epoch time and, for a transformer job,
    whether one replica fits its GPU memory and why (``memory_fit``)."""
    transformer = result.workload.kind == "transformer"
    rows = []
    for a in result.assumptions.gpu_types:
        row: dict[str, object] = {
            "GPU type": a.gpu, "MTBI (h)": a.mtbi_hours, "MTBI source": a.mtbi_source,
            "Speedup": a.speedup_source, "One-VM epoch (s)": a.one_vm_epoch_seconds}
        if transformer:
            row[MEMORY_FIT_COLUMN] = a.memory_fit
        rows.append(row)
    return pd.DataFrame(rows)


def memory_out(result: JobPlanResult) -> list[tuple[str, str]]:
    """A transformer job's GPU types left out for GPU memory: (type, why), in catalog
    order."""
    return [(a.gpu, a.memory_fit) for a in result.assumptions.gpu_types
            if a.memory_fit is not None and not a.memory_fit.startswith("fits")]


def _row(label: str, e: PlanEstimate) -> dict[str, object]:
    mc = e.monte_carlo
    if e.does_not_finish is not None:  # no numbers that mean nothing: the reason instead
        return {"": label, "Configuration": e.configuration.describe().rsplit(",", 1)[0],
                "USD/h": e.configuration.hourly_price_usd, "Epoch s": e.epoch_seconds,
                "Expected makespan": None, "P10–P90 makespan": "", "Expected USD": None,
                "P10–P90 USD": "",
                "Events": None, "Checkpoint every (s)": e.checkpoint_interval_seconds,
                "Finishes?": e.does_not_finish}
    return {
        "": label,
        "Configuration": e.configuration.describe().rsplit(",", 1)[0],
        "USD/h": e.configuration.hourly_price_usd,
        "Epoch s": e.epoch_seconds,
        "Expected makespan": duration(e.expected_makespan_hours),
        "P10–P90 makespan": (f"{duration(mc.makespan_hours_p10)} – "
                             f"{duration(mc.makespan_hours_p90)}") if mc else "",
        "Expected USD": e.expected_cost_usd,
        "P10–P90 USD": f"{mc.cost_usd_p10:,.2f}–{mc.cost_usd_p90:,.2f}" if mc else "",
        "Events": e.expected_interruptions,
        "Checkpoint every (s)": e.checkpoint_interval_seconds,
        "Finishes?": "yes",
    }


def plan_comparison_frame(result: JobPlanResult) -> pd.DataFrame:
    """The top-k (``best 1``...) and the paper's policies (DeepVM's top-k ``#1``...), one row
    each."""
    rows = [_row(f"best {i}", e) for i, e in enumerate(result.best, 1)]
    for name in PAPER_POLICIES:
        if name == "deepvm":
            rows += [_row(f"{POLICY_LABELS[name]} #{i}", e)
                     for i, e in enumerate(result.policies.deepvm, 1)]
        elif (e := result.policies.policy(name)) is not None:
            rows.append(_row(POLICY_LABELS[name], e))
    return pd.DataFrame(rows)


def unfinished(frame: pd.DataFrame) -> dict[str, list[str]]:
    """Why rows of a :func:`plan_comparison_frame` are not expected to finish: reason -> their
    labels, reasons in alphabetical order."""
    out: dict[str, list[str]] = {}
    for label, reason in zip(frame[""], frame["Finishes?"], strict=True):
        if reason != "yes":
            out.setdefault(str(reason), []).append(str(label))
    return dict(sorted(out.items()))


def frontier_frame(result: JobPlanResult, shown: np.ndarray) -> pd.DataFrame:
    """Expected cost (USD), expected makespan (hours) and label of the candidates ``shown``,
    indexed by candidate index."""
    index = pd.Index(shown.astype(np.int64))
    return pd.DataFrame({
        "cost": result.expected_cost_usd[shown],
        "hours": result.expected_makespan_hours[shown],
        "label": [result.label(int(i)) for i in shown],
    }, index=index)


def speedup_frames(catalog: Catalog, speedup: SpeedupModel,
                   chosen: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The speedup S(n) of every GPU type with measurements and of the ``chosen`` cluster's
    type, n = 1..32: the curves (type, model, n, speedup; paper and fitted where the type has
    a scaling fit, measured where it has measurements) and the measured points (type, n,
    speedup = t(1) / t(n)). Both empty without measurements and without a chosen type."""
    measurements = speedup.measurements
    curves: list[dict[str, object]] = []
    points: list[dict[str, object]] = []
    n = SPEEDUP_NODES
    measured_model = SpeedupModel("measured", measurements)
    for g in catalog.gpu_types:
        rows = measurements.get(g.name) if measurements is not None else None
        if rows is None:
            if g.name == chosen and g.scaling is not None:
                curves += [{"type": g.name, "model": model, "n": int(k), "speedup": float(v)}
                           for model, values in (("paper", paper_speedup(g.scaling, n)),
                                                 ("fitted", fitted_speedup(g.scaling, n)))
                           for k, v in zip(n, values, strict=True)]
            continue
        models = {"measured": measured_model.speedup(g, n)}
        if g.scaling is not None:
            models = {"paper": paper_speedup(g.scaling, n),
                      "fitted": fitted_speedup(g.scaling, n), **models}
        for model, values in models.items():
            curves += [{"type": g.name, "model": model, "n": int(k), "speedup": float(s)}
                       for k, s in zip(n, values, strict=True)]
        t1 = dict(zip(rows.nodes, rows.epoch_seconds, strict=True)).get(1)
        if t1:
            points += [{"type": g.name, "n": k, "speedup": t1 / t}
                       for k, t in zip(rows.nodes, rows.epoch_seconds, strict=True)]
    return (pd.DataFrame(curves, columns=["type", "model", "n", "speedup"]),
            pd.DataFrame(points, columns=["type", "n", "speedup"]))


def fits_frame(calibration: Calibration) -> pd.DataFrame:
    """The fitted (a, b, c) per GPU type with R² (4 decimals), RMSE, the number of points and
    whether the fit is trusted (no warnings)."""
    return pd.DataFrame([{
        "GPU type": f.instance, "a": f.params.a, "b": f.params.b, "c": f.params.c,
        "R²": round(f.r_squared, 4) + 0.0, "RMSE": f.rmse, "points": f.points,
        "Trusted?": "no" if f.warnings else "yes"} for f in calibration.fits])


def measurements_in_use_frame(catalog: Catalog, tables: tuple[TypeTable, ...]) -> pd.DataFrame:
    """Per GPU type of ``catalog``: the measurements table it uses (``none`` without rows) and
    why the uploaded rows of it are not used, if they are not."""
    by_type = {t.instance: t for t in tables}
    rows = []
    for g in catalog.gpu_types:
        t = by_type.get(g.name)
        rows.append({"GPU type": g.name,
                     "Measurements used": (t.source if t is not None and t.source else "none"),
                     "Uploaded rows not used because": (t.refused or "") if t else ""})
    return pd.DataFrame(rows, columns=["GPU type", "Measurements used",
                                       "Uploaded rows not used because"])
