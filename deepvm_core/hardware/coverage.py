"""Which measurements a plan uses, per GPU type (issue 20, item 1).

A user's measurements CSV replaces the bundled rows only for the types it measures well: a
type's rows are used when they have a one-node time and enough node counts for the scaling
fit (:func:`deepvm_core.hardware.calibrate.fit_scaling` succeeds; an untrusted fit is still a
measurement, and is warned about elsewhere). Any other type keeps the fallback's rows (the
bundled file), and :class:`TypeTable` says which table each type uses and why.
"""

from __future__ import annotations

from dataclasses import dataclass

from deepvm_core.errors import CalibrationError
from deepvm_core.hardware.calibrate import fit_scaling
from deepvm_core.hardware.measurements import InstanceMeasurements, MeasurementTable


@dataclass(frozen=True)
class TypeTable:
    """The measurements one instance type uses.

    Attributes:
        instance: instance type name.
        source: the table its rows come from (:attr:`MeasurementTable.source`), or ``None``
            when neither table measures it.
        refused: why the user's rows of it are not used (``None``: used, or none given).
    """

    instance: str
    source: str | None
    refused: str | None = None


def measured_well(rows: InstanceMeasurements) -> str | None:
    """Why ``rows`` are not a usable measurement of their type (``None``: they are): no
    one-node time, or too few node counts to fit (the message of
    :func:`~deepvm_core.hardware.calibrate.fit_scaling`, without the type's name)."""
    try:
        fit_scaling(rows)
    except CalibrationError as exc:
        return str(exc).removeprefix(f"{rows.instance}: ")
    return None


def combine_measurements(uploaded: MeasurementTable, fallback: MeasurementTable | None
                         ) -> tuple[MeasurementTable, tuple[TypeTable, ...]]:
    """The measurements in use: ``uploaded``'s rows of each type it measures well, else
    ``fallback``'s; and per type (uploaded order, then the fallback's other types) which table
    it uses. The combined table's source is ``uploaded``'s when it supplies any type."""
    rows: list[InstanceMeasurements] = []
    tables: list[TypeTable] = []
    used_any = False
    for m in uploaded.instances:
        why = measured_well(m)
        kept = fallback.get(m.instance) if fallback is not None and why is not None else None
        if why is None:
            rows.append(m)
            used_any = True
            tables.append(TypeTable(m.instance, uploaded.source))
        elif kept is not None:
            rows.append(kept)
            tables.append(TypeTable(m.instance, fallback.source if fallback else None, why))
        else:
            tables.append(TypeTable(m.instance, None, why))
    given = set(uploaded.names)
    if fallback is not None:
        for m in fallback.instances:
            if m.instance not in given:
                rows.append(m)
                tables.append(TypeTable(m.instance, fallback.source))
    source = uploaded.source if used_any or fallback is None else fallback.source
    return MeasurementTable(tuple(rows), source), tuple(tables)
