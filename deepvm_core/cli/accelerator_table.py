"""``deepvm recommend``'s table section "Best cluster per accelerator model"
(:mod:`deepvm_core.recommend.by_accelerator`)."""

from __future__ import annotations

from deepvm_core.model import Objective
from deepvm_core.recommend.by_accelerator import AcceleratorBest
from deepvm_core.recommend.recommendation import Recommendation


def source_kind(source: str | None) -> str:
    """The first word of an ``eflops_source`` / ``scaling_source``: ``measured``,
    ``estimated``, ``prior`` or ``edited`` (``-`` for none)."""
    return "-" if source is None else source.split(":", 1)[0]


def _cells(row: AcceleratorBest, objective: Objective,
           first: float) -> tuple[str, str, str, str, str]:
    """(rank, cluster or note, objective, objective / the first row's, performance) of one
    row."""
    c = row.configuration
    if c is None:
        return "-", row.note, "", "", ""
    value = c.objective_value(objective)
    return (str(row.rank), c.describe(), f"{value:.6g}", f"{value / first:.3f}",
            f"{c.performance:.1f}")


def accelerator_section(rec: Recommendation) -> str:
    """The section's text (ends with a newline), or ``""`` when the recommendation has no
    ``by_accelerator`` view (a catalog without accelerator models). ``vs #1`` is a model's
    objective over the first model's (the winner's)."""
    if not rec.by_accelerator:
        return ""
    s = rec.scenario
    top = rec.by_accelerator[0].configuration
    first = top.objective_value(s.objective) if top is not None else 1.0
    rows = [(r, *_cells(r, s.objective, first)) for r in rec.by_accelerator]
    model_w = max(len("model"), *(len(r.accelerator) for r in rec.by_accelerator))
    ranked = [r for r in rows if r[0].configuration is not None]
    cluster_w = max([len("cluster"), *(len(r[2]) for r in ranked)])
    out = [f"Best cluster per accelerator model (objective {s.objective}, within PW "
           f"{s.pw_usd_per_hour:g} USD/h):\n",
           f"{'#':>2}  {'model':<{model_w}}  {'cluster':<{cluster_w}}  {'objective':>12}  "
           f"{'vs #1':>6}  {'performance':>11}  {'eFLOPS':<9}  scaling\n"]
    for row, rank, cluster, value, ratio, performance in rows:
        if row.configuration is None:
            out.append(f"{rank:>2}  {row.accelerator:<{model_w}}  {cluster}\n")
            continue
        out.append(f"{rank:>2}  {row.accelerator:<{model_w}}  {cluster:<{cluster_w}}  "
                   f"{value:>12}  {ratio:>6}  {performance:>11}  "
                   f"{source_kind(row.eflops_source):<9}  "
                   f"{source_kind(row.scaling_source)}\n")
    if any(r.eflops_source not in (None, "measured") or r.scaling_source not in (
            None, "measured") for r in rec.by_accelerator if r.configuration is not None):
        out.append("eFLOPS estimated: from the accelerator model (data/accelerators.csv), not "
                   "measured; scaling prior: the data-parallel step model, not a measured "
                   "curve (docs/method.md, \"Today's GPUs\")\n")
    return "".join(out)
