"""``deepvm recommend``'s job arguments and its table output.

The table lists distinct clusters (architecture, GPU type, GPU VM count), best first, with the
variants that differ only in the memory-node type folded into one row naming them
(:mod:`deepvm_core.recommend.distinct`), and every cluster's training speed as a multiple of one
A10G, the fixed yardstick ("x one A10G"; of one VM of ``--ref-type`` when named), never a
unitless number. With a job
(``--epochs``/``--epoch-seconds``), speed is the job's and the pick's job estimate follows.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from deepvm_core.catalog import Catalog
from deepvm_core.cli.job_args import (
    checkpoint_gb_from_args,
    speedup_from_args,
    transformer_from_args,
)
from deepvm_core.model import ARCHITECTURE_LABELS, Configuration
from deepvm_core.pipeline.finishing import finishing_answer
from deepvm_core.pipeline.recommend_job import RecommendJob, estimate_configuration, job_summary
from deepvm_core.pipeline.recommend_job import recommend_job as core_recommend_job
from deepvm_core.recommend.policies import POLICY_LABELS
from deepvm_core.recommend.recommendation import Recommendation
from deepvm_core.workload.workload import Workload, example_workload


def recommend_job(args: argparse.Namespace, catalog: Catalog) -> RecommendJob | None:
    """The job of ``recommend``'s job arguments, or ``None`` when none is given (speed is then
    the example job's). A missing ``--epochs`` or ``--epoch-seconds`` takes the example's."""
    transformer = transformer_from_args(args)
    given = (args.epochs, args.epoch_seconds, args.ref_type, args.measurements, transformer)
    if all(v is None for v in given) and args.speedup == "fitted" and args.ref_nodes == 1:
        return None
    changes: dict[str, Any] = {"checkpoint_gb": checkpoint_gb_from_args(args),
                               "reference_gpu": args.ref_type,
                               "reference_nodes": args.ref_nodes}
    if transformer is not None:
        workload = Workload.for_transformer(transformer, tokens_per_second=args.tokens_per_second,
                                           **changes)
        return core_recommend_job(catalog, workload, speedup_from_args(args))
    if args.epochs is not None:
        changes["epochs"] = args.epochs
    if args.epoch_seconds is not None:
        changes["reference_epoch_seconds"] = args.epoch_seconds
    return core_recommend_job(catalog, example_workload(**changes), speedup_from_args(args))


def speed_text(c: Configuration) -> str:
    """The speed column: :meth:`Configuration.speed_text`, or ``-`` when unknown."""
    return c.speed_text() or "-"


def render_recommendation(rec: Recommendation, catalog: Catalog, job: RecommendJob | None, *,
                          mark: Callable[[Configuration], str] = lambda _c: "",
                          footnote: str | None = None) -> str:
    """The table output of ``deepvm recommend``: ``mark`` gives a configuration's mark (e.g.
    ``*`` for an estimated eFLOPS), explained by ``footnote``."""

    def _line(c: Configuration | None) -> str:
        if c is None:
            return "none feasible"
        tag = mark(c)
        return c.describe() + (f" {tag}" if tag else "")

    s = rec.scenario
    out = [f"Catalog {catalog.name} ({catalog.region}, prices {catalog.prices_date}); "
           f"PW {s.pw_usd_per_hour:g} USD/h, checkpoint {s.checkpoint_gb:g} GB x buffer "
           f"{s.buffer_checkpoints:g}; objective {s.objective}; quotas "
           f"{'on' if s.use_quotas else 'off'}\n"]
    if s.gpu_filter.active:
        out.append(f"GPU filter: {s.gpu_filter.describe()}\n")
    basis = rec.speed_basis
    if basis is not None:
        whose = ("your job" if basis.job_given else "the example job")
        out.append(f"Speed: epochs per hour of {whose}, as a multiple of one "
                   f"{basis.reference_gpu} ({basis.reference_epochs_per_hour:.3g} epochs/h)\n")
    out.append("\n")
    if rec.explanation:
        out.append(f"Nothing is feasible. {rec.explanation.summary}\n")
    else:
        rows = [(_line(d.configuration) + d.describe()[len(d.configuration.describe()):],
                 speed_text(d.configuration),
                 d.configuration.objective_value(s.objective), d.configuration.performance)
                for d in rec.distinct]
        width = max(len(r[0]) for r in rows)
        swidth = max(len("speed"), *(len(r[1]) for r in rows))
        value = "" if s.objective == "speed" else f"  {'objective':>14}"
        out.append(f"{'#':>2}  {'cluster':<{width}}  {'speed':<{swidth}}{value}  "
                   f"{'performance':>11}\n")
        for i, (text, speed, objective, performance) in enumerate(rows, 1):
            value = "" if s.objective == "speed" else f"  {objective:>14.6g}"
            out.append(f"{i:>2}  {text:<{width}}  {speed:<{swidth}}{value}  "
                       f"{performance:>11.1f}\n")
    out.append("\n")
    for arch, arch_best in (("single_anchor", rec.best_single_anchor),
                            ("tiering", rec.best_tiering)):
        arch_note = rec.architecture_notes.get(arch)
        why = "none. " + (arch_note.summary if arch_note else "")
        out.append(f"Best {ARCHITECTURE_LABELS[arch]}: "
                   f"{_line(arch_best) if arch_best else why}\n")
    for policy in ("deepvm_noscale", "cost_first", "performance_first"):
        baseline = rec.policy(policy)
        perf = (f" (performance {baseline.performance:.1f}; speed {speed_text(baseline)})"
                if baseline else "")
        out.append(f"{POLICY_LABELS[policy]}: {_line(baseline)}{perf}\n")
    if job is not None and rec.best is not None:
        estimate = estimate_configuration(rec, catalog, job, rec.best)
        out.append(f"Your job on the pick: {job_summary(estimate, job.workload)}.\n")
        verdict = finishing_answer(rec, catalog, job)
        if verdict is not None and verdict.sentence is not None:  # never a pick it cannot do
            out.append(f"{verdict.sentence}\n")
    out.extend(f"Note: {text}\n" for text in rec.notes)
    if footnote:
        out.append(footnote + "\n")
    return "".join(out)
