"""Which measurements a plan uses, per GPU type (issue 20, item 1; issue 27, finding 1).

A relative one-VM speed ``ρ_g = t^m_g(1) / t^m_ref(1)`` may only come from one table measured
on one workload (``job-model.md``, "Epoch time"), so a plan uses **one** table, never rows of
two: an uploaded measurements CSV replaces the fallback (the bundled file) as a whole when it
measures some type well, and otherwise leaves it in use as a whole.

A type's uploaded rows are used when they have a one-node time and enough node counts for the
scaling fit (:func:`deepvm_core.hardware.calibrate.fit_scaling` succeeds) and that fit is
trusted (:attr:`~deepvm_core.hardware.calibrate.ScalingFit.warnings` empty: R² at least
:data:`~deepvm_core.hardware.calibrate.MIN_TRUSTED_R_SQUARED`, no parameter at a bound) or the
user confirmed it: an untrusted fit changes nothing before the confirmation. Once the upload is
in use, a type it does not use has no measured one-node time: its relative speed is
``eFLOPS(g_ref) / eFLOPS(g)`` and its speedup the ``fitted`` one (the catalog's), exactly as
without any table. :class:`TypeTable` says which table each type uses and why.
"""

from __future__ import annotations

from dataclasses import dataclass

from deepvm_core.errors import CalibrationError
from deepvm_core.hardware.calibrate import ScalingFit, fit_scaling
from deepvm_core.hardware.measurements import InstanceMeasurements, MeasurementTable

#: What a refused untrusted fit asks of the user, after its reasons.
CONFIRM_UNTRUSTED = "confirm the measurements below to use them"


@dataclass(frozen=True)
class TypeTable:
    """The measurements one instance type uses.

    Attributes:
        instance: instance type name.
        source: the table its rows come from (:attr:`MeasurementTable.source`), or ``None``
            when the table in use does not measure it (its relative speed is then an eFLOPS
            ratio).
        refused: why the user's rows of it are not used (``None``: used, or none given).
    """

    instance: str
    source: str | None
    refused: str | None = None


def _fit(rows: InstanceMeasurements) -> ScalingFit | str:
    """The scaling fit of ``rows``, or why there is none (the message of
    :func:`~deepvm_core.hardware.calibrate.fit_scaling`, without the type's name)."""
    try:
        return fit_scaling(rows)
    except CalibrationError as exc:
        return str(exc).removeprefix(f"{rows.instance}: ")


def measured_well(rows: InstanceMeasurements) -> str | None:
    """Why ``rows`` are not a usable measurement of their type (``None``: they are): no
    one-node time, or too few node counts to fit (the message of
    :func:`~deepvm_core.hardware.calibrate.fit_scaling`, without the type's name)."""
    fit = _fit(rows)
    return fit if isinstance(fit, str) else None


def not_used_because(rows: InstanceMeasurements, *, confirmed: bool = False) -> str | None:
    """Why a plan does not use ``rows`` (``None``: it does): :func:`measured_well`'s reason,
    or, unless ``confirmed``, the reasons their fit is not trusted."""
    fit = _fit(rows)
    if isinstance(fit, str):
        return fit
    if fit.warnings and not confirmed:
        reasons = "; ".join(w.removeprefix(f"{rows.instance}: ") for w in fit.warnings)
        return f"the fit is not trusted ({reasons}): {CONFIRM_UNTRUSTED}"
    return None


def combine_measurements(uploaded: MeasurementTable, fallback: MeasurementTable | None, *,
                         confirmed: bool = False
                         ) -> tuple[MeasurementTable, tuple[TypeTable, ...]]:
    """The one table in use (module docstring): ``uploaded``'s rows of the types it measures
    well (with a trusted fit, or any fit when ``confirmed``) when there is any, else
    ``fallback`` whole; and per type (uploaded order, then the fallback's other types) which
    table it uses and why the uploaded rows are not used."""
    why = {m.instance: not_used_because(m, confirmed=confirmed) for m in uploaded.instances}
    used = tuple(m for m in uploaded.instances if why[m.instance] is None)
    if not used and fallback is not None:
        in_use, source = fallback, fallback.source
    else:
        in_use, source = MeasurementTable(used, uploaded.source), uploaded.source
    names = set(in_use.names)
    tables = [TypeTable(m.instance, source if m.instance in names else None, why[m.instance])
              for m in uploaded.instances]
    if fallback is not None:
        tables += [TypeTable(m.instance, source if m.instance in names else None)
                   for m in fallback.instances if m.instance not in why]
    return in_use, tuple(tables)
