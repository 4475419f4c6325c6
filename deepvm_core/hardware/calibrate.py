"""Calibration from measurements (``job-model.md``, "Calibration").

**Scaling fit.** Per instance type, fit ``S(n) = c / (1 + exp(-a (n - b)))`` to the measured
speedups ``t(1) / t(n)`` by bounded least squares (scipy's ``curve_fit``, ``a > 0``, ``c > 0``,
within the catalog's ranges). Only the points with n >= 2 are fitted: the ``fitted`` speedup
model uses the logistic from two nodes on and fixes ``S(1) = 1``, so the one-node point is the
reference, not a residual (on the shipped measurements it matters: g5.xlarge runs two nodes
slower than one). Three parameters need at least three distinct node counts >= 2, and the
speedup needs a one-node time; a type without them is refused with a message saying so. The
fit starts from ``c = 1.2 max S``, ``a = 4 / (n_max - n_min)`` and three inflection points
(median, middle and largest n), keeping the least squared error. Each fit reports R²,
RMSE (speedup units), the points used and the residuals (measured - fitted).

**Trust.** A fit with R² below :data:`MIN_TRUSTED_R_SQUARED` (0.8), or with a parameter at a
bound of the fit (the bound, not the data, set it), carries :attr:`ScalingFit.warnings`: the
CLI writes such a calibration only with ``--force`` and the dashboard asks for a
confirmation (random epoch times fit a = 1e-9, R² = 0, a flat curve).

**Relative eFLOPS.** ``eFLOPS(g) = eFLOPS(g_ref) t_ref(1) / t_g(1)`` from one-node times.

A calibrated value is a measured one: the type's ``scaling_source`` (fit) and ``eflops_source``
(relative eFLOPS) become ``measured``, replacing an estimate or a prior.

:func:`calibrate_catalog` returns a new catalog (the input is never changed) that went through
the catalog's own validation (``parse_catalog(catalog_to_dict(...))``).
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

import numpy as np

from deepvm_core.arrays import FloatArray
from deepvm_core.catalog import Catalog, GpuType, ScalingParams
from deepvm_core.catalog.catalog import catalog_to_dict
from deepvm_core.catalog.types import MEASURED
from deepvm_core.catalog.validation import parse_catalog
from deepvm_core.errors import CalibrationError
from deepvm_core.hardware.measurements import InstanceMeasurements, MeasurementTable
from deepvm_core.hardware.unused import described_type
from deepvm_core.model import logistic

#: Bounds of the fit: the catalog's ranges for a (0, 10], b [0, 1e5], c (0, 1e6].
FIT_LOWER = (1e-9, 0.0, 1e-9)
FIT_UPPER = (10.0, 1e5, 1e6)
#: Fewest distinct node counts >= 2 a fit of three parameters accepts.
MIN_NODE_COUNTS = 3
#: A fit whose R² is below this explains too little of the measured speedups to be used
#: without a confirmation (``deepvm calibrate --force``, the dashboard's checkbox).
MIN_TRUSTED_R_SQUARED: Final = 0.8
#: A parameter within this relative distance of a bound of the fit is "at its bound": the
#: data did not determine it, the bound did.
_AT_BOUND_RTOL = 1e-6
_COVARIANCE_WARNING = "Covariance of the parameters could not be estimated"


@dataclass(frozen=True)
class ScalingFit:
    """A logistic fit of one instance type's measured speedups.

    Attributes:
        instance: instance type name.
        params: the fitted (a, b, c).
        r_squared: ``1 - SS_res / SS_tot`` over the fitted points.
        rmse: root mean squared residual, speedup units.
        points: points used (node counts >= 2).
        nodes: their node counts.
        speedups: their measured speedups t(1) / t(n).
        residuals: measured - fitted speedup at each point.
    """

    instance: str
    params: ScalingParams
    r_squared: float
    rmse: float
    points: int
    nodes: tuple[int, ...]
    speedups: tuple[float, ...]
    residuals: tuple[float, ...]

    @property
    def warnings(self) -> tuple[str, ...]:
        """Why this fit should not be used without a confirmation: R² below
        :data:`MIN_TRUSTED_R_SQUARED`, or a parameter at a bound of the fit (empty: trusted).
        """
        out: list[str] = []
        if not self.r_squared >= MIN_TRUSTED_R_SQUARED:
            out.append(f"{self.instance}: R² = {round(self.r_squared, 4) + 0.0:.4f} is below "
                       f"{MIN_TRUSTED_R_SQUARED:g}: the fit explains little of the measured "
                       "speedups (are the epoch times right?)")
        p = self.params
        for name, value, low, high in zip("abc", (p.a, p.b, p.c), FIT_LOWER, FIT_UPPER,
                                          strict=True):
            for bound in (low, high):
                if abs(value - bound) <= _AT_BOUND_RTOL * max(abs(bound), 1e-9):
                    out.append(f"{self.instance}: {name} = {value:g} is at its bound "
                               f"({low:g}..{high:g}): the measurements do not determine it")
        return tuple(out)


def fit_scaling(rows: InstanceMeasurements,
                extra_starts: Sequence[tuple[float, float]] = (),
                min_b: float = FIT_LOWER[1]) -> ScalingFit:
    """Fit (a, b, c) to ``rows`` (method in the module docstring).

    ``extra_starts``: further (a0, b0) starting points, tried as well (the scaling prior adds
    steep starts near one node for curves that are concave from the start). ``min_b``: the
    lower bound of the inflection point b, nodes (the prior uses 1, so that K(1) = 1).

    Raises:
        CalibrationError: no one-node time, fewer than three distinct node counts >= 2, or
            the optimiser failed (``RuntimeError``, ``OptimizeWarning``, non-finite result).
    """
    from scipy.optimize import OptimizeWarning, curve_fit  # scipy loads with the first fit

    name = rows.instance
    t1 = rows.one_node_epoch_seconds
    if t1 is None:
        raise CalibrationError(name, "no one-node time (a row with nodes 1): the speedups "
                                     "t(1)/t(n) cannot be computed")
    n_all = rows.nodes_array()
    use = n_all >= 2
    n = n_all[use]
    speedup = t1 / rows.epoch_seconds_array()[use]
    if n.size < MIN_NODE_COUNTS:
        raise CalibrationError(name, f"{n.size} distinct node count(s) >= 2 "
                                     f"({', '.join(str(int(x)) for x in n) or 'none'}); the "
                                     f"logistic has 3 parameters (a, b, c), so a fit needs at "
                                     f"least {MIN_NODE_COUNTS}")
    span = float(n.max() - n.min())
    a0 = float(np.clip(4.0 / span, 1e-3, FIT_UPPER[0]))
    c0 = float(np.clip(1.2 * speedup.max(), 1e-3, FIT_UPPER[2]))
    best: tuple[float, FloatArray] | None = None
    failure = "no start converged"
    lower = (FIT_LOWER[0], max(min_b, FIT_LOWER[1]), FIT_LOWER[2])
    starts = [(a0, b0) for b0 in (float(np.median(n)), 0.5 * float(n.max()), float(n.max()))]
    for a_start, b0 in [*starts, *extra_starts]:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", OptimizeWarning)
                popt, _ = curve_fit(logistic, n, speedup, p0=(a_start, b0, c0),
                                    bounds=(lower, FIT_UPPER), maxfev=20_000)
        except (RuntimeError, ValueError) as exc:
            failure = str(exc)
            continue
        bad = [w for w in caught if issubclass(w.category, OptimizeWarning)
               and _COVARIANCE_WARNING not in str(w.message)]
        if bad:
            failure = str(bad[0].message)
            continue
        if not np.all(np.isfinite(popt)):
            failure = f"non-finite parameters {popt.tolist()}"
            continue
        sse = float(np.sum((speedup - logistic(n, *popt)) ** 2))
        if best is None or sse < best[0]:
            best = (sse, np.asarray(popt, dtype=np.float64))
    if best is None:
        raise CalibrationError(name, f"the logistic fit failed: {failure}")
    sse, popt = best
    residuals = speedup - logistic(n, *popt)
    ss_tot = float(np.sum((speedup - speedup.mean()) ** 2))
    r2 = 1.0 - sse / ss_tot if ss_tot > 0 else (1.0 if sse == 0 else 0.0)
    return ScalingFit(
        instance=name,
        params=ScalingParams(float(popt[0]), float(popt[1]), float(popt[2])),
        r_squared=float(r2),
        rmse=float(np.sqrt(sse / n.size)),
        points=int(n.size),
        nodes=tuple(int(x) for x in n),
        speedups=tuple(float(x) for x in speedup),
        residuals=tuple(float(x) for x in residuals),
    )


@dataclass(frozen=True)
class EflopsCalibration:
    """One type's eFLOPS before and after ``eFLOPS(g) = eFLOPS(g_ref) t_ref(1) / t_g(1)``."""

    instance: str
    eflops_before: float | None
    eflops_after: float


@dataclass(frozen=True)
class Calibration:
    """The result of :func:`calibrate_catalog`.

    Attributes:
        catalog: the new, validated catalog.
        fits: the scaling fits, in measurement order.
        eflops: the eFLOPS changes (empty without ``eflops_reference``).
        skipped: measured instance types that are not GPU types of the catalog.
    """

    catalog: Catalog
    fits: tuple[ScalingFit, ...]
    eflops: tuple[EflopsCalibration, ...]
    skipped: tuple[str, ...]

    @property
    def warnings(self) -> tuple[str, ...]:
        """Every fit's :attr:`ScalingFit.warnings`: non-empty means "confirm before use"."""
        return tuple(w for f in self.fits for w in f.warnings)


def _gpu(catalog: Catalog, name: str) -> GpuType:
    for g in catalog.gpu_types:
        if g.name == name:
            return g
    close = difflib.get_close_matches(name, [g.name for g in catalog.gpu_types], n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise CalibrationError(name, f"no GPU type of that name in catalog {catalog.name!r}{hint}")


def calibrate_catalog(catalog: Catalog, measurements: MeasurementTable, *,
                      instances: Sequence[str] | None = None,
                      eflops_reference: str | None = None) -> Calibration:
    """A new catalog with scaling fits (and optionally eFLOPS) from ``measurements``.

    ``instances`` picks the types to fit (default: every measured GPU type of the catalog;
    other measured types are listed in :attr:`Calibration.skipped`). With
    ``eflops_reference`` g_ref, every fitted type other than g_ref gets
    ``eFLOPS(g_ref) t_ref(1) / t_g(1)``.

    Raises:
        CalibrationError: an unknown or unmeasured type, a refused or failed fit, or a
            reference without eFLOPS or one-node time.
        CatalogError: the new catalog does not pass the catalog's validation.
    """
    if instances is None:
        gpu_names = {g.name for g in catalog.gpu_types}
        names = [m.instance for m in measurements.instances if m.instance in gpu_names]
        skipped = tuple(m.instance for m in measurements.instances
                        if m.instance not in gpu_names)
    else:
        names, skipped = list(dict.fromkeys(instances)), ()
    rows: dict[str, InstanceMeasurements] = {}
    for name in names:
        _gpu(catalog, name)
        found = measurements.get(name)
        if found is None:
            raise CalibrationError(name, f"no rows in {measurements.source}")
        rows[name] = found
    fits = tuple(fit_scaling(rows[name]) for name in names)
    new_eflops: dict[str, float] = {}
    changes: list[EflopsCalibration] = []
    if eflops_reference is not None:
        ref = _gpu(catalog, eflops_reference)
        if not names:  # about the file, not about a type the user may never have chosen
            measured = ", ".join(described_type(m.instance, catalog)
                                 for m in measurements.instances)
            raise CalibrationError(measurements.source, f"no row names a GPU type of catalog "
                                   f"{catalog.name} (it measures {measured}); the eFLOPS "
                                   "calibration needs the one-node time of the reference "
                                   f"type {ref.name}")
        ref_rows = measurements.get(ref.name)
        t_ref1 = None if ref_rows is None else ref_rows.one_node_epoch_seconds
        if ref.eflops is None or t_ref1 is None:
            raise CalibrationError(ref.name, "the eFLOPS reference needs eFLOPS in the catalog "
                                             f"and a measured one-node time in "
                                             f"{measurements.source}")
        for name in names:
            t1 = rows[name].one_node_epoch_seconds
            if name == ref.name or t1 is None:
                continue
            new_eflops[name] = ref.eflops * t_ref1 / t1
            changes.append(EflopsCalibration(name, _gpu(catalog, name).eflops, new_eflops[name]))
    by_name = {f.instance: f for f in fits}
    gpus = tuple(
        replace(g, scaling=by_name[g.name].params if g.name in by_name else g.scaling,
                eflops=new_eflops.get(g.name, g.eflops),
                scaling_source=MEASURED if g.name in by_name else g.scaling_source,
                eflops_source=MEASURED if g.name in new_eflops else g.eflops_source)
        for g in catalog.gpu_types
    )
    note = f"scaling fits of {', '.join(names)} calibrated from {measurements.source}"
    if changes:
        note += f"; eFLOPS relative to {eflops_reference}"
    draft = replace(catalog, gpu_types=gpus,
                    source=f"{catalog.source}; {note}" if catalog.source else note)
    validated = parse_catalog(catalog_to_dict(draft), source=f"{catalog.name} (calibrated)")
    return Calibration(validated, fits, tuple(changes), skipped)
