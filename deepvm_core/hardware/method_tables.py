"""The error tables of the method of today's GPUs (docs/method.md, "Today's GPUs (method)"; the
dashboard's Method page can show the same): the eFLOPS estimate's leave-one-out error, the
estimate beside published training benchmarks, and the scaling prior's held-out error; and the
two tables of the per-workload-class estimate (:func:`workload_class_error_tables`: leave-one-out
on the measured types, and against the public ResNet-50 and BERT-large ratios).

Each :class:`MethodTable` holds raw values (:meth:`MethodTable.records`, ready for a data
frame), the formats docs/method.md prints them with (:meth:`MethodTable.markdown`) and a
sentence on how to read it. The tables of docs/method.md are this module's output (a test checks
it); print them with ``python -m deepvm_core.hardware.method_tables``.
"""

from __future__ import annotations

from dataclasses import dataclass

from deepvm_core.catalog.store import PAPER_CATALOG, load_catalog
from deepvm_core.hardware.accelerators import accelerator_of_instance
from deepvm_core.hardware.eflops_estimate import (
    CLASS_BENCHMARK,
    WORKLOAD_CLASSES,
    benchmark_comparison,
    class_benchmark_comparison,
    class_calibration,
    class_leave_one_out,
    class_mean_abs_error,
    leave_one_out,
)
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
        key: ``leave_one_out``, ``benchmarks``, ``prior_errors``, ``class_leave_one_out``
            or ``class_benchmarks``.
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
    types = _artifact_type_of_chip()
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


def _artifact_type_of_chip() -> dict[str, str]:
    """The measured type of :data:`ARTIFACT_CATALOG` that carries each chip, by chip name."""
    types = {}
    for g in load_catalog(ARTIFACT_CATALOG).gpu_types:
        acc = accelerator_of_instance(g.name)
        if acc is not None:
            types[acc.name] = g.name
    return types


def class_leave_one_out_table() -> MethodTable:
    """:func:`~deepvm_core.hardware.eflops_estimate.class_leave_one_out` of every workload
    class, side by side."""
    types = _artifact_type_of_chip()
    by_class = {c: class_leave_one_out(c) for c in WORKLOAD_CLASSES}
    first = by_class[WORKLOAD_CLASSES[0]]
    rows: tuple[tuple[Cell, ...], ...] = tuple(
        (f"{r.accelerator} ({types.get(r.accelerator, '-')})", r.measured,
         *(x for c in WORKLOAD_CLASSES
           for x in (by_class[c][i].estimated, 100.0 * by_class[c][i].error)))
        for i, r in enumerate(first))
    return MethodTable(
        key="class_leave_one_out",
        title="eFLOPS estimate per workload class, leave-one-out on the measured types",
        columns=("chip (type)", "measured eFLOPS",
                 *(x for c in WORKLOAD_CLASSES for x in (f"{c} estimate", f"{c} error (%)"))),
        formats=("", ".0f", *(".0f", "+.1f") * len(WORKLOAD_CLASSES)),
        rows=rows,
        reading=("Each measured type (the artifact's CNN) is predicted by the class's "
                 "calibration fitted without it: k always, and for cnn the exponents too, as "
                 "the measured types are part of their evidence. The M60 has no tensor cores "
                 "and lies far below every benchmark chip, so leaving it out of the cnn fit "
                 "is an extrapolation; the transformer exponents never see the measured "
                 "types."))


def class_benchmark_table() -> MethodTable:
    """:func:`~deepvm_core.hardware.eflops_estimate.class_benchmark_comparison` of every
    workload class, side by side (relative to the A10)."""
    by_class = {c: class_benchmark_comparison(c) for c in WORKLOAD_CLASSES}
    first = by_class[WORKLOAD_CLASSES[0]]
    rows: tuple[tuple[Cell, ...], ...] = tuple(
        (f"{r.accelerator} ({r.benchmark_row})" + ("" if r.fitted else ", held out"),
         *(x for c in WORKLOAD_CLASSES
           for x in (by_class[c][i].public_ratio, by_class[c][i].estimate_ratio,
                     100.0 * by_class[c][i].error, 100.0 * by_class[c][i].held_out_error)))
        for i, r in enumerate(first))
    means = ", ".join(f"{c} {100.0 * class_mean_abs_error(c):.1f} % ("
                      f"{class_calibration(c).label.split(': ', 1)[1]})"
                      for c in WORKLOAD_CLASSES)
    return MethodTable(
        key="class_benchmarks",
        title="eFLOPS estimate per workload class beside the public ratios it is calibrated "
              "on, relative to the A10",
        columns=("chip (benchmark row)",
                 *(x for c in WORKLOAD_CLASSES for x in (
                     f"{CLASS_BENCHMARK[c][1]} / A10", f"{c} estimate / A10",
                     f"{c} error (%)", f"{c} row held out (%)"))),
        formats=("", *(".2f", ".2f", "+.1f", "+.1f") * len(WORKLOAD_CLASSES)),
        rows=rows,
        reading=("Each class is fitted on its own benchmark (cnn: Lambda's ResNet-50 AMP and "
                 "the artifact's measured types; transformer: Lambda's BERT-large FP16); "
                 "'error' is in-sample, 'row held out' refits the exponents without the row. "
                 f"Mean |error| over the fitted rows: {means}. The B200 is held out of both "
                 "fits: its ResNet-50 figure equals the H200's, another bottleneck than the "
                 "chip's peaks."))


def workload_class_error_tables() -> tuple[MethodTable, ...]:
    """The two tables of the per-workload-class estimate: leave-one-out on the measured types,
    and against the public ratios."""
    return class_leave_one_out_table(), class_benchmark_table()


if __name__ == "__main__":  # pragma: no cover - prints the tables of docs/method.md
    for t in (*estimator_error_tables(), *workload_class_error_tables()):
        print(f"{t.title}:\n\n{t.markdown()}\n\n{t.reading}\n")
