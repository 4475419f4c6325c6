"""The error tables of the method of today's GPUs (docs/method.md, "Today's GPUs (method)"; the
dashboard's Method page can show the same): the eFLOPS estimate's leave-one-out error, the
estimate beside published training benchmarks, and the scaling prior's held-out error.

Each :class:`MethodTable` holds raw values (:meth:`MethodTable.records`, ready for a data
frame), the formats docs/method.md prints them with (:meth:`MethodTable.markdown`) and a
sentence on how to read it. The tables of docs/method.md are this module's output (a test checks
it); print them with ``python -m deepvm_core.hardware.method_tables``.
"""

from __future__ import annotations

from dataclasses import dataclass

from deepvm_core.catalog.store import PAPER_CATALOG, load_catalog
from deepvm_core.hardware.accelerators import accelerator_of_instance
from deepvm_core.hardware.eflops_estimate import benchmark_comparison, leave_one_out
from deepvm_core.hardware.measurements import bundled_measurements_paths, load_measurements
from deepvm_core.hardware.scaling_prior import Curve, measured_curves, prior_errors

#: The catalog of the artifact's measured types (eFLOPS, network) and its measured curves.
ARTIFACT_CATALOG = PAPER_CATALOG
ARTIFACT_CURVES = "deepvm-scaling"

Cell = str | float


@dataclass(frozen=True)
class MethodTable:
    """One table of the method.

    Attributes:
        key: ``leave_one_out``, ``benchmarks`` or ``prior_errors``.
        title: one line naming what is compared.
        columns: column titles (units in them).
        formats: one format spec per column (``format(value, spec)``; ``""`` for text).
        rows: raw values, one tuple per row.
        reading: how to read the table (one or two sentences).
    """

    key: str
    title: str
    columns: tuple[str, ...]
    formats: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    reading: str

    def records(self) -> list[dict[str, Cell]]:
        """The rows as dicts by column title (raw values: a data frame's rows)."""
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]

    def markdown(self) -> str:
        """The table in Markdown, values formatted (no trailing newline)."""
        lines = ["| " + " | ".join(self.columns) + " |",
                 "|" + "---|" * len(self.columns)]
        lines += ["| " + " | ".join(format(v, f) for v, f in zip(row, self.formats, strict=True))
                  + " |" for row in self.rows]
        return "\n".join(lines)


def artifact_curves() -> tuple[Curve, ...]:
    """The artifact's measured speedup curves (g3s.xlarge, g4dn.xlarge, g5.xlarge) with their
    eFLOPS and bandwidth from :data:`ARTIFACT_CATALOG`: what the prior is fitted and judged on."""
    catalog = load_catalog(ARTIFACT_CATALOG)
    table = load_measurements(bundled_measurements_paths()[ARTIFACT_CURVES])
    return measured_curves(table, {g.name: g.eflops for g in catalog.gpu_types if g.eflops},
                           {}, {g.name: g.network_gbps for g in catalog.gpu_types})


def leave_one_out_table() -> MethodTable:
    """:func:`~deepvm_core.hardware.eflops_estimate.leave_one_out` as a table; each chip is
    labelled with the measured type that carries it."""
    types = {}
    for g in load_catalog(ARTIFACT_CATALOG).gpu_types:
        acc = accelerator_of_instance(g.name)
        if acc is not None:
            types[acc.name] = g.name
    rows = tuple((f"{r.accelerator} ({types.get(r.accelerator, '-')})", r.measured,
                  r.estimated, 100.0 * r.error) for r in leave_one_out())
    return MethodTable(
        key="leave_one_out",
        title="eFLOPS estimate, leave-one-out on the measured types",
        columns=("chip (type)", "measured eFLOPS", "estimate", "error (%)"),
        formats=("", ".0f", ".0f", "+.1f"),
        rows=rows,
        reading=("Each measured type is predicted with k fitted on the other two, so the error "
                 "is what the estimate achieves on a chip it was not fitted on, for the "
                 "artifact's own workload and software; it says nothing about chips far outside "
                 "the three (the benchmark table does)."))


def benchmark_table() -> MethodTable:
    """:func:`~deepvm_core.hardware.eflops_estimate.benchmark_comparison` as a table."""
    rows = tuple((f"{r.accelerator} ({r.benchmark_row})", r.estimate_ratio,
                  r.resnet50_amp_ratio, r.bert_large_fp16_ratio)
                 for r in benchmark_comparison())
    return MethodTable(
        key="benchmarks",
        title="eFLOPS estimate beside published single-GPU training benchmarks, relative to "
              "the A10",
        columns=("chip (benchmark row)", "estimate / A10", "ResNet-50 AMP / A10",
                 "BERT-large FP16 / A10"),
        formats=("", ".2f", ".2f", ".2f"),
        rows=rows,
        reading=("Each column is a speed relative to the A10 (the A10G's datasheet twin): where "
                 "the estimate lies between the CNN and the transformer column it is as good as "
                 "the choice of workload allows; the V100 row fixes w and agrees by "
                 "construction."))


def prior_error_table() -> MethodTable:
    """:func:`~deepvm_core.hardware.scaling_prior.prior_errors` on :func:`artifact_curves`."""
    rows = tuple((e.instance, e.rmse_prior, e.rmse_linear)
                 for e in prior_errors(artifact_curves()))
    return MethodTable(
        key="prior_errors",
        title="scaling prior, held-out RMSE of the speedup over n = 2..32",
        columns=("curve", "prior", "K = 1 (S(n) = n)"),
        formats=("", ".2f", ".2f"),
        rows=rows,
        reading=("RMSE of the speedup t(1)/t(n) against each measured curve, with tau and alpha "
                 "fitted on the other two curves, beside assuming perfect scaling: smaller is "
                 "better. All three curves are one-GPU types on 10-25 Gbit/s TCP networks, so "
                 "the prior is untested on multi-GPU VMs and on EFA networks."))


def estimator_error_tables() -> tuple[MethodTable, ...]:
    """The three tables of the method, in the order of docs/method.md (the prior's fits take
    about a second)."""
    return leave_one_out_table(), benchmark_table(), prior_error_table()


if __name__ == "__main__":  # pragma: no cover - prints the tables of docs/method.md
    for t in estimator_error_tables():
        print(f"{t.title}:\n\n{t.markdown()}\n\n{t.reading}\n")
