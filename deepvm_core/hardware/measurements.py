"""Measured epoch times per node count: the ``instance,nodes,epoch_seconds`` CSV.

The format is the one of the research artifact's ``scaling_measurements.csv`` (a copy ships as
``data/measurements/deepvm-scaling.csv``): a header line naming the three columns (any order),
then one row per measurement, seconds per epoch of the same training job on ``nodes`` VMs of
``instance``.

Rules (every problem is collected, each with its line number, field and value):

* the header is required and must name exactly ``instance``, ``nodes`` and ``epoch_seconds``;
* ``instance`` is non-empty text; ``nodes`` a whole number >= 1; ``epoch_seconds`` a finite
  number > 0; a row with another number of fields is rejected; blank lines are skipped;
* **duplicates are averaged**: several rows for the same (instance, nodes) are repeated runs
  of one measurement, so their epoch times are replaced by the arithmetic mean and the count
  is kept in :attr:`InstanceMeasurements.repeats`.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from deepvm_core import bundled
from deepvm_core.arrays import FloatArray
from deepvm_core.errors import DeepVMError, MeasurementsError, Problem

#: How far a measured speedup may stray before it is called implausible (a fraction): S(n)
#: below ``1 - tolerance`` times the best speedup at fewer nodes (it falls with n), or above
#: ``1 + tolerance`` times n (more than linear). Timing noise of a few percent stays quiet.
IMPLAUSIBLE_SPEEDUP_TOLERANCE: float = 0.10

#: The columns of a measurements CSV, defined once.
INSTANCE, NODES, EPOCH_SECONDS = "instance", "nodes", "epoch_seconds"
COLUMNS: tuple[str, str, str] = (INSTANCE, NODES, EPOCH_SECONDS)

@dataclass(frozen=True)
class InstanceMeasurements:
    """The measured epoch times of one instance type, by node count (ascending, distinct).

    Attributes:
        instance: instance type name.
        nodes: node counts n, ascending, each once.
        epoch_seconds: seconds per epoch t(n) (the mean of the rows with that n).
        repeats: how many CSV rows were averaged into each t(n).
    """

    instance: str
    nodes: tuple[int, ...]
    epoch_seconds: tuple[float, ...]
    repeats: tuple[int, ...]

    @property
    def one_node_epoch_seconds(self) -> float | None:
        """t(1), or ``None`` when no row has ``nodes`` 1."""
        return self.epoch_seconds[0] if self.nodes and self.nodes[0] == 1 else None

    def nodes_array(self) -> FloatArray:
        """The node counts as a float array."""
        return np.asarray(self.nodes, dtype=np.float64)

    def epoch_seconds_array(self) -> FloatArray:
        """t(n) as a float array, aligned with :meth:`nodes_array`."""
        return np.asarray(self.epoch_seconds, dtype=np.float64)


@dataclass(frozen=True)
class MeasurementTable:
    """Measured epoch times of several instance types (in order of first appearance).

    Attributes:
        instances: one :class:`InstanceMeasurements` per instance type.
        source: where the rows come from (a path or a label), for messages.
    """

    instances: tuple[InstanceMeasurements, ...]
    source: str = "measurements"

    def get(self, instance: str) -> InstanceMeasurements | None:
        """The measurements of ``instance``, or ``None`` when it has no rows."""
        for m in self.instances:
            if m.instance == instance:
                return m
        return None

    @property
    def names(self) -> tuple[str, ...]:
        """Instance type names that have rows."""
        return tuple(m.instance for m in self.instances)


def _lines(text: str) -> Iterator[str]:
    yield from io.StringIO(text, newline="")


def _whole_number(raw: str) -> int | None:
    try:
        value = float(raw)
    except ValueError:
        return None
    if not math.isfinite(value) or value != int(value):
        return None
    return int(value)


def parse_measurements_csv(text: str | bytes, source: str = "measurements") -> MeasurementTable:
    """Parse and validate a measurements CSV (rules in the module docstring).

    Raises:
        MeasurementsError: listing every problem, each with its line number and field.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise MeasurementsError([Problem("(file)", "(encoding)", None,
                                             f"not UTF-8 text: {exc}")], source) from None
    text = text.removeprefix("\ufeff")
    problems: list[Problem] = []
    reader = csv.reader(_lines(text))
    header: list[str] | None = None
    columns: dict[str, int] = {}
    sums: dict[str, dict[int, list[float]]] = {}
    for row in reader:
        line = f"line {reader.line_num}"
        if not any(cell.strip() for cell in row):
            continue
        if header is None:
            header = [cell.strip().lower() for cell in row]
            if sorted(header) != sorted(COLUMNS):
                problems.append(Problem(line, "(header)", ",".join(row),
                                        f"a header line naming exactly the columns "
                                        f"{','.join(COLUMNS)} is required (any order)"))
                break
            columns = {name: header.index(name) for name in COLUMNS}
            continue
        if len(row) != len(COLUMNS):
            problems.append(Problem(line, "(row)", ",".join(row),
                                    f"expected {len(COLUMNS)} fields, found {len(row)}"))
            continue
        instance = row[columns[INSTANCE]].strip()
        raw_nodes = row[columns[NODES]].strip()
        raw_seconds = row[columns[EPOCH_SECONDS]].strip()
        ok = True
        if not instance:
            problems.append(Problem(line, INSTANCE, instance, "missing (an instance type name "
                                                              "is required)"))
            ok = False
        nodes = _whole_number(raw_nodes)
        if nodes is None or nodes < 1:
            problems.append(Problem(line, NODES, raw_nodes, "must be a whole number >= 1"))
            ok = False
        try:
            seconds = float(raw_seconds)
        except ValueError:
            seconds = math.nan
        if not (math.isfinite(seconds) and seconds > 0):
            problems.append(Problem(line, EPOCH_SECONDS, raw_seconds,
                                    "must be a finite number of seconds > 0"))
            ok = False
        if ok and nodes is not None:
            sums.setdefault(instance, {}).setdefault(nodes, []).append(seconds)
    if header is None:
        problems.append(Problem("line 1", "(header)", "", "the file is empty: a header line "
                                f"{','.join(COLUMNS)} is required"))
    elif not problems and not sums:
        problems.append(Problem("(file)", "(rows)", None, "no measurement rows after the "
                                                          "header"))
    if problems:
        raise MeasurementsError(problems, source)
    return MeasurementTable(
        tuple(
            InstanceMeasurements(
                instance=name,
                nodes=tuple(sorted(by_nodes)),
                epoch_seconds=tuple(float(np.mean(by_nodes[n])) for n in sorted(by_nodes)),
                repeats=tuple(len(by_nodes[n]) for n in sorted(by_nodes)),
            )
            for name, by_nodes in sums.items()
        ),
        source,
    )


def load_measurements(path: str | os.PathLike[str]) -> MeasurementTable:
    """Read and validate a measurements CSV file.

    Raises:
        MeasurementsError: the file is invalid (every problem listed with its line).
        DeepVMError: the file cannot be read.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise DeepVMError(f"measurements {str(path)!r} cannot be read: {exc.strerror}") from None
    return parse_measurements_csv(data, source=str(path))


def bundled_measurements_paths() -> dict[str, Path]:
    """Bundled measurement files by name (file stem):
    :func:`deepvm_core.bundled.bundled_measurements_paths`."""
    return bundled.bundled_measurements_paths()


def measurements_to_csv(table: MeasurementTable) -> str:
    """The CSV text of ``table``: header, then one row per (instance, node count), the mean."""
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for m in table.instances:
        for n, t in zip(m.nodes, m.epoch_seconds, strict=True):
            writer.writerow((m.instance, n, repr(t)))
    return out.getvalue()


def implausible_speedups(rows: InstanceMeasurements,
                         tolerance: float = IMPLAUSIBLE_SPEEDUP_TOLERANCE) -> str | None:
    """Why the measured speedups ``S(n) = t(1) / t(n)`` of one type are not plausible, naming
    the points, or ``None`` (also without a one-node time: there is no S then).

    Implausible: ``S(n) < (1 - tolerance) max_{m < n} S(m)`` (falls with n) or
    ``S(n) > (1 + tolerance) n`` (more than linear). Example: t(1) = 60 s, t(2) = 360 s gives
    ``S(2) = 60 / 360 = 0.17 < 0.9 S(1) = 0.9``.
    """
    t1 = rows.one_node_epoch_seconds
    if t1 is None:
        return None
    n = rows.nodes_array()
    s = t1 / rows.epoch_seconds_array()
    best_before = np.concatenate(([-np.inf], np.maximum.accumulate(s)[:-1]))
    falls = np.flatnonzero(s < (1.0 - tolerance) * best_before)
    above = np.flatnonzero(s > (1.0 + tolerance) * n)
    reasons = []
    if falls.size:
        best = int(np.argmax(s[:falls[0]]))
        points = ", ".join(f"S({int(n[i])}) = {s[i]:.2f}" for i in falls)
        reasons.append(f"it falls as VMs are added ({points} after S({int(n[best])}) = "
                       f"{s[best]:.2f})")
    if above.size:
        points = ", ".join(f"S({int(n[i])}) = {s[i]:.2f}" for i in above)
        reasons.append(f"it is more than linear ({points}, above n)")
    if not reasons:
        return None
    return (f"Measured speedups of {rows.instance} look implausible: {'; '.join(reasons)}. "
            "Check the epoch times: the measured model follows them as given.")


def implausible_speedup_warnings(table: MeasurementTable | None,
                                 instances: Iterable[str] | None = None) -> tuple[str, ...]:
    """:func:`implausible_speedups` of every type of ``table`` (of ``instances`` only, when
    given), in table order."""
    if table is None:
        return ()
    wanted = None if instances is None else set(instances)
    found = (implausible_speedups(m) for m in table.instances
             if wanted is None or m.instance in wanted)
    return tuple(w for w in found if w is not None)
