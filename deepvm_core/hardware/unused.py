"""Measurements a catalog cannot use, named in a warning (issue 16).

A measurements CSV (``instance,nodes,epoch_seconds``) whose rows name instance types that are
not GPU types of the catalog is read without error, but those rows change nothing: neither
the ``measured`` speedup model nor the calibration uses them. :func:`unused_measurements_warnings`
names them, with close names from the catalog (``difflib``), so a typo is seen, not silently
ignored. The CLI (``deepvm plan``, ``deepvm calibrate``) and the dashboard show the same text.

The bundled measurements (the paper's ResNet-50 runs, ``data/measurements/``) are not warned
about: they measure the paper's types, some of which a catalog of today lacks (g3s.xlarge), and
no edit of the user's could use those rows (issue 27: the warning sat on every default Plan
card).
"""

from __future__ import annotations

import difflib

from deepvm_core.bundled import bundled_measurements_paths
from deepvm_core.catalog import Catalog
from deepvm_core.hardware.measurements import MeasurementTable


def unknown_measured_types(catalog: Catalog, measurements: MeasurementTable | None
                           ) -> tuple[str, ...]:
    """The measured instance types that are not GPU types of ``catalog``, in table order."""
    if measurements is None:
        return ()
    gpus = {g.name for g in catalog.gpu_types}
    return tuple(m.instance for m in measurements.instances if m.instance not in gpus)


def is_bundled(measurements: MeasurementTable) -> bool:
    """Whether ``measurements`` are a bundled file, by its name or its path (their
    :attr:`~deepvm_core.hardware.measurements.MeasurementTable.source`)."""
    paths = bundled_measurements_paths()
    return measurements.source in paths or measurements.source in {str(p) for p in
                                                                   paths.values()}


def described_type(name: str, catalog: Catalog) -> str:
    """``c5.xlarge (a CPU type)``, ``g4dn.xlarg (did you mean g4dn.xlarge?)`` or the name."""
    if any(c.name == name for c in catalog.cpu_types):
        return f"{name} (a CPU type)"
    close = difflib.get_close_matches(name, [g.name for g in catalog.gpu_types], n=3,
                                      cutoff=0.8)
    return f"{name} (did you mean {' or '.join(close)}?)" if close else name


def unused_measurements_warnings(catalog: Catalog, measurements: MeasurementTable | None
                                 ) -> tuple[str, ...]:
    """One warning naming the measured types ``catalog`` has no GPU type for, or none.

    ``Measurements not used: the rows of g4dn.xlarg (did you mean g4dn.xlarge?) in my.csv
    name no GPU type of catalog aws-us-east-1-2023-10; they were ignored.``
    """
    unknown = unknown_measured_types(catalog, measurements)
    if not unknown or measurements is None or is_bundled(measurements):
        return ()
    names = ", ".join(described_type(n, catalog) for n in unknown)
    if len(unknown) == len(measurements.instances):
        return (f"Measurements not used: none of the types in {measurements.source} ({names}) "
                f"is a GPU type of catalog {catalog.name}; every row was ignored.",)
    return (f"Measurements not used: the rows of {names} in {measurements.source} name no "
            f"GPU type of catalog {catalog.name}; they were ignored.",)
