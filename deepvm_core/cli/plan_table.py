"""``deepvm plan --format table``: the plan as text. The best configurations and the paper's
policies in one table (hourly price, epoch time, expected makespan and cost, their P10-P90
ranges, events, checkpoint interval), why a cluster does not finish under it, the chosen
cluster in words, then the assumptions per GPU type, the notes and the warnings. The table
never prints ``inf`` or ``nan``.
"""

from __future__ import annotations

import math
from typing import Final

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.types import INTERRUPTION_BUCKET_LABELS
from deepvm_core.io.plan_json import estimate_in_words
from deepvm_core.model import Configuration
from deepvm_core.pipeline.plan import JobPlanResult, PlanEstimate
from deepvm_core.recommend.policies import POLICY_LABELS
from deepvm_core.units import MINUTES_PER_HOUR
from deepvm_core.workload.workload import AUTO


def _short(c: Configuration) -> str:
    """``TR 17 x g4dn.xlarge + 1 x c5.xlarge`` / ``SA 1+15 x g4dn.xlarge``."""
    if c.architecture == "single_anchor":
        return f"SA 1+{c.gpu_spot} x {c.gpu}"
    return f"TR {c.gpu_spot} x {c.gpu} + {c.memory_nodes} x {c.cpu}"


def _fmt(x: float | None, spec: str) -> str:
    """``x`` in ``spec``; ``-`` for ``None``, infinity or NaN (never printed)."""
    if x is None or not math.isfinite(x):
        return "-"
    return format(x, spec)


def _range(low: float, high: float, spec: str) -> str:
    if not (math.isfinite(low) and math.isfinite(high)):
        return "-"
    return f"{_fmt(low, spec)}-{_fmt(high, spec)}"


_COLUMNS: Final = (("", "<"), ("configuration", "<"), ("$/h", ">"), ("epoch s", ">"),
                   ("exp. h", ">"), ("P10-P90 h", ">"), ("exp. $", ">"), ("P10-P90 $", ">"),
                   ("events", ">"), ("ckpt every", ">"))


def _row(label: str, e: PlanEstimate) -> list[str]:
    mc = e.monte_carlo
    interval = e.checkpoint_interval_seconds
    ckpt = "never" if not math.isfinite(interval) or e.checkpoints == 0 else (
        f"{interval:.0f} s" if interval < 600 else f"{interval / 60:.0f} min")
    if e.does_not_finish is not None:  # no numbers: the reason is printed under the table
        return [label, _short(e.configuration), f"{e.configuration.hourly_price_usd:.4f}",
                _fmt(e.epoch_seconds, ".1f"), "no finish", "-", "-", "-", "-", ckpt]
    return [
        label, _short(e.configuration), f"{e.configuration.hourly_price_usd:.4f}",
        _fmt(e.epoch_seconds, ".1f"), _fmt(e.expected_makespan_hours, ".3f"),
        _range(mc.makespan_hours_p10, mc.makespan_hours_p90, ".3f") if mc else "-",
        _fmt(e.expected_cost_usd, ".2f"),
        _range(mc.cost_usd_p10, mc.cost_usd_p90, ".2f") if mc else "-",
        _fmt(e.expected_interruptions, ".2f"), ckpt,
    ]


def _table(rows: list[list[str]]) -> str:
    head = [name for name, _ in _COLUMNS]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = []
    for r in [head, *rows]:
        cells = [f"{cell:{align}{w}}" for cell, (_, align), w in zip(r, _COLUMNS, widths,
                                                                       strict=True)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _labelled(result: JobPlanResult) -> list[tuple[str, PlanEstimate]]:
    """The table's rows: the best, then the paper's policies, each with its label."""
    rows = [(f"best {i}" if len(result.best) > 1 else "best", e)
            for i, e in enumerate(result.best, 1)]
    if result.policies.computed:
        for i, e in enumerate(result.policies.deepvm, 1):
            rows.append((f"DeepVM {i}" if i > 1 else "DeepVM", e))
        for name, found in result.policies.items()[1:]:
            if found is not None:
                rows.append((POLICY_LABELS[name], found))
    return rows


def render_plan_table(result: JobPlanResult, catalog: Catalog) -> str:
    """The ``--format table`` text of a plan."""
    w, s, a = result.workload, result.scenario, result.assumptions
    pw = "off" if result.pw_usd_per_hour is None else f"{result.pw_usd_per_hour:g} USD/h"
    limits = [f"deadline {result.deadline_hours:g} h" if result.deadline_hours else "",
              f"budget {result.budget_usd:g} USD" if result.budget_usd else ""]
    limit_text = ", ".join(x for x in limits if x)
    out = [f"Catalog {catalog.name} ({catalog.region}, prices {catalog.prices_date}); PW {pw}, "
           f"checkpoint {s.checkpoint_gb:g} GB x buffer {s.buffer_checkpoints:g}; quotas "
           f"{'on' if s.use_quotas else 'off'}; {result.size} feasible clusters\n",
           f"Job: {w.describe(a.reference_gpu)}; goal {result.goal}"
           f"{' (' + limit_text + ')' if limit_text else ''}; Monte Carlo "
           f"{result.trials} trials, seed {result.seed}\n\n"]
    if s.gpu_filter.active:
        out.insert(1, f"GPU filter: {s.gpu_filter.describe()}\n")
    rows = [_row(label, e) for label, e in _labelled(result)]
    if rows:
        out.append(_table(rows))
    unfinished: dict[str, list[str]] = {}
    for label, e in _labelled(result):
        if e.does_not_finish is not None:
            unfinished.setdefault(f"{_short(e.configuration)}: {e.does_not_finish}",
                                  []).append(label)
    for reason, labels in unfinished.items():
        out.append(f"{', '.join(labels)}: {reason}\n")
    if result.explanation is not None:
        out.append(f"Nothing qualifies. {result.explanation.summary}\n")
    if result.policies.computed:
        missing = [POLICY_LABELS[n] for n, e in result.policies.items() if e is None]
        if missing and result.size:
            out.append(f"No configuration for: {', '.join(missing)}\n")
    if result.chosen is not None:
        out.append(f"\nChosen: {result.chosen.describe()}\n")
        out.extend(f"  {line}\n" for line in estimate_in_words(result.chosen))
    source = f" ({a.measurements_source})" if a.measurements_source else ""
    every = ("Daly's interval" if a.checkpoint_every_epochs == AUTO
             else f"every {a.checkpoint_every_epochs} epoch(s)")
    wait = ("per type" if a.wait_hours is None
            else f"{a.wait_hours * MINUTES_PER_HOUR:g} min")
    out.append(f"\nAssumptions: speedup {a.speedup}{source}; checkpoint {every}; restart "
               f"{a.restart_hours * MINUTES_PER_HOUR:g} min, wait {wait}, disk "
               f"{a.disk_gb_per_s:g} GB/s, fixed checkpoint cost "
               f"{a.checkpoint_fixed_seconds:g} s, MTBI x {a.mtbi_scale:g}, per-VM share "
               f"{a.per_vm_share:g}\n")
    for g in a.gpu_types:
        bucket = ("no bucket" if g.interruption_bucket is None
                  else f"bucket {INTERRUPTION_BUCKET_LABELS[g.interruption_bucket]}")
        one = _fmt(g.one_vm_epoch_seconds, ".2f")
        out.append(f"  {g.gpu}: MTBI {g.mtbi_hours:g} h ({g.mtbi_source}, {bucket}), W "
                   f"{g.wait_hours * MINUTES_PER_HOUR:g} min ({g.wait_source}); speedup "
                   f"{g.speedup_source}; one VM {one} s per epoch ({g.one_vm_source or '-'}"
                   f"{' ' + g.one_vm_table if g.one_vm_table else ''})"
                   f"{'; ' + g.memory_fit if g.memory_fit else ''}\n")
    for note in result.notes:
        out.append(f"Note: {note}\n")
    for warning in result.warnings:
        out.append(f"Warning: {warning}\n")
    return "".join(out)

