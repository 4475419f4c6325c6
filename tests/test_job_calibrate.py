"""Scaling fits and eFLOPS calibration from measurements; the new catalog is validated."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import scipy.optimize
from scipy.optimize import OptimizeWarning, least_squares

from deepvm_core.catalog.artifact import ARTIFACT_SCALING
from deepvm_core.catalog.catalog import catalog_to_dict
from deepvm_core.errors import CalibrationError, CatalogError
from deepvm_core.hardware.calibrate import calibrate_catalog, fit_scaling
from deepvm_core.hardware.measurements import (
    bundled_measurements_paths,
    load_measurements,
    parse_measurements_csv,
)

BUNDLED = bundled_measurements_paths()["deepvm-scaling"]


@pytest.fixture(scope="module")
def shipped():
    return load_measurements(BUNDLED)


def test_fits_of_the_shipped_measurements(shipped):
    report = []
    for rows in shipped.instances:
        fit = fit_scaling(rows)
        n = rows.nodes_array()[1:]
        speedup = rows.epoch_seconds_array()[0] / rows.epoch_seconds_array()[1:]
        # R² and RMSE recomputed with numpy from the returned parameters.
        p = fit.params
        predicted = p.c / (1 + np.exp(-p.a * (n - p.b)))
        r2 = 1 - np.sum((speedup - predicted) ** 2) / np.sum((speedup - speedup.mean()) ** 2)
        assert fit.r_squared == pytest.approx(r2, rel=1e-9)
        assert fit.rmse == pytest.approx(np.sqrt(np.mean((speedup - predicted) ** 2)), rel=1e-9)
        np.testing.assert_allclose(fit.residuals, speedup - predicted, atol=1e-12)
        assert fit.points == 9
        assert fit.nodes == (2, 4, 8, 12, 16, 20, 24, 28, 32)
        # An independent least-squares run (Levenberg-Marquardt, unbounded) started from the
        # research artifact's parameters lands on the same optimum.
        start = ARTIFACT_SCALING[rows.instance]
        other = least_squares(lambda x, n=n, s=speedup: x[2] / (1 + np.exp(-x[0] * (n - x[1])))
                              - s, [start.a, start.b, start.c], method="lm",
                              xtol=1e-14, ftol=1e-14)
        np.testing.assert_allclose([p.a, p.b, p.c], other.x, rtol=1e-5)
        assert fit.r_squared > 0.99
        report.append(f"{rows.instance}: a={p.a:.4f} b={p.b:.3f} c={p.c:.3f} "
                      f"R²={fit.r_squared:.4f} RMSE={fit.rmse:.3f} points={fit.points}")
    print("\n".join(report))


def test_calibrated_catalog_is_new_and_validated(aws_catalog, shipped):
    before = catalog_to_dict(aws_catalog)
    result = calibrate_catalog(aws_catalog, shipped, eflops_reference="g4dn.xlarge")
    assert catalog_to_dict(aws_catalog) == before  # the input is untouched
    new = {g.name: g for g in result.catalog.gpu_types}
    fits = {f.instance: f for f in result.fits}
    for name in ("g3s.xlarge", "g4dn.xlarge", "g5.xlarge"):
        assert new[name].scaling == fits[name].params
    t1 = {m.instance: m.one_node_epoch_seconds for m in shipped.instances}
    assert new["g4dn.xlarge"].eflops == 377.0
    assert new["g5.xlarge"].eflops == pytest.approx(377.0 * t1["g4dn.xlarge"] / t1["g5.xlarge"])
    assert new["g3s.xlarge"].eflops == pytest.approx(377.0 * t1["g4dn.xlarge"]
                                                     / t1["g3s.xlarge"])
    assert [(e.instance, e.eflops_before) for e in result.eflops] == [
        ("g3s.xlarge", 100.0), ("g5.xlarge", 696.0)]
    assert result.catalog.cpu_types == aws_catalog.cpu_types
    assert "calibrated from" in result.catalog.source
    assert result.skipped == ()
    only = calibrate_catalog(aws_catalog, shipped, instances=["g5.xlarge"])
    assert {g.name: g.scaling for g in only.catalog.gpu_types}["g3s.xlarge"] == \
        aws_catalog.gpu_types[0].scaling


def test_unknown_types_are_skipped_or_refused(aws_catalog):
    table = parse_measurements_csv("instance,nodes,epoch_seconds\n"
                                   "p9.xlarge,1,10\np9.xlarge,2,6\n")
    result = calibrate_catalog(aws_catalog, table)
    assert result.fits == ()
    assert result.skipped == ("p9.xlarge",)
    with pytest.raises(CalibrationError, match=re.escape("did you mean g5.xlarge")):
        calibrate_catalog(aws_catalog, table, instances=["g5.xlarg"])
    with pytest.raises(CalibrationError, match=re.escape("g4dn.xlarge: no rows")):
        calibrate_catalog(aws_catalog, table, instances=["g4dn.xlarge"])


def test_too_few_node_counts_or_no_one_node_time_are_refused():
    two = parse_measurements_csv("instance,nodes,epoch_seconds\n"
                                 "g1,1,10\ng1,2,6\ng1,4,4\ng1,4,4.2\n")
    with pytest.raises(CalibrationError) as info:
        fit_scaling(two.instances[0])
    assert str(info.value).startswith("g1: 2 distinct node count(s) >= 2 (2, 4)")
    assert "3 parameters" in str(info.value)
    no_one = parse_measurements_csv("instance,nodes,epoch_seconds\n"
                                    "g2,2,10\ng2,4,6\ng2,8,4\n")
    with pytest.raises(CalibrationError, match="g2: no one-node time"):
        fit_scaling(no_one.instances[0])


def test_three_points_fit_exactly():
    # Three points for three parameters: the covariance cannot be estimated (a warning that
    # does not matter here), the curve passes through the points.
    table = parse_measurements_csv("instance,nodes,epoch_seconds\n"
                                   "g,1,100\ng,2,60\ng,8,25\ng,16,20\n")
    fit = fit_scaling(table.instances[0])
    assert fit.points == 3
    assert fit.r_squared == pytest.approx(1.0, abs=1e-6)


def test_optimiser_failures_become_library_errors_naming_the_type(monkeypatch, shipped):
    def fails(*_args, **_kwargs):
        raise RuntimeError("Optimal parameters not found: max_nfev exceeded")

    monkeypatch.setattr(scipy.optimize, "curve_fit", fails)
    with pytest.raises(CalibrationError, match=re.escape(
            "g3s.xlarge: the logistic fit failed: Optimal")):
        fit_scaling(shipped.instances[0])

    def warns(*_args, **_kwargs):
        warnings.warn("bad things", OptimizeWarning, stacklevel=1)
        return np.array([0.1, 10.0, 5.0]), np.zeros((3, 3))

    monkeypatch.setattr(scipy.optimize, "curve_fit", warns)
    with pytest.raises(CalibrationError, match=r"g3s\.xlarge: .*bad things"):
        fit_scaling(shipped.instances[0])


def test_the_new_catalog_goes_through_catalog_validation(monkeypatch, aws_catalog, shipped):
    monkeypatch.setattr(scipy.optimize, "curve_fit",
                        lambda *_a, **_k: (np.array([20.0, 10.0, 5.0]), np.zeros((3, 3))))
    with pytest.raises(CatalogError, match=re.escape("scaling.a")):
        calibrate_catalog(aws_catalog, shipped)


def test_eflops_calibration_without_a_catalog_type_names_the_file(aws_catalog):
    """Issue 20 item 3: the message is about the file (no row names a catalog type, with
    close matches), not about the reference type."""
    table = parse_measurements_csv("instance,nodes,epoch_seconds\nzz9.mega,1,60\n"
                                   "g5.xlarg,1,30\n", source="mine.csv")
    with pytest.raises(CalibrationError) as caught:
        calibrate_catalog(aws_catalog, table, eflops_reference="g4dn.xlarge")
    assert str(caught.value) == (
        "mine.csv: no row names a GPU type of catalog aws-us-east-1-2023-10 (it measures "
        "zz9.mega, g5.xlarg (did you mean g5.xlarge?)); the eFLOPS calibration needs the "
        "one-node time of the reference type g4dn.xlarge")
