"""The data files shipped with the package (``data/README.md``): the one way to read them.

The repository's top-level ``data/`` folder is installed as the package
:data:`BUNDLED_PACKAGE` (``setup.py`` maps it; a wheel holds it as
``deepvm_core/bundled_data/``, an editable install points at ``data/`` itself), and every file
in it is found through :mod:`importlib.resources`, so an installed wheel has its catalogs and
measurements wherever it is installed, and nothing depends on the current directory or the
source tree. Bundled files are read-only: what the user saves goes to :mod:`deepvm_core.home`.

Folders (each a plain folder of :data:`BUNDLED_PACKAGE`; a file's *name* is its stem):

* :data:`CATALOGS`: ``catalogs/*.json``, catalogs in our format;
* :data:`MEASUREMENTS`: ``measurements/*.csv``, measured epoch times
  (:mod:`deepvm_core.hardware.measurements`).

Any other bundled file is read with :func:`read_bundled_file` (e.g.
``read_bundled_file("gpus", "accelerators.csv")``); ``setup.py``'s ``package_data`` lists which
file types are installed (``.json``, ``.csv``, ``.md``, ``.txt``).
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Mapping
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from deepvm_core.errors import DeepVMError

#: The package that holds the bundled files (``data/`` of the repository).
BUNDLED_PACKAGE = "deepvm_core.bundled_data"
#: The folder of the bundled catalogs, and their file suffix.
CATALOGS, CATALOG_SUFFIX = "catalogs", ".json"
#: The folder of the bundled measurement CSV files, and their file suffix.
MEASUREMENTS, MEASUREMENTS_SUFFIX = "measurements", ".csv"


def _root() -> Traversable:
    try:
        return resources.files(BUNDLED_PACKAGE)
    except ModuleNotFoundError:
        raise DeepVMError(f"the bundled data (package {BUNDLED_PACKAGE}) is not installed: "
                          "install deepvm-studio (make install, or pip install .) instead of "
                          "running it from a bare checkout") from None


def _entry(parts: tuple[str, ...]) -> Traversable:
    if not parts or any(not p or p in {".", ".."} or "/" in p or "\\" in p for p in parts):
        raise DeepVMError(f"bundled file {'/'.join(parts)!r} is not a plain relative name")
    entry = _root()
    for part in parts:
        entry = entry / part
    return entry


def _files(folder: str, suffix: str) -> dict[str, Traversable]:
    """The files ``*suffix`` of a bundled folder by name (file stem), sorted by name; ``{}``
    when the folder does not exist."""
    entry = _entry((folder,))
    if not entry.is_dir():
        return {}
    found = {f.name[: -len(suffix)]: f for f in entry.iterdir()
             if f.is_file() and f.name.endswith(suffix) and not f.name.startswith(".")}
    return dict(sorted(found.items()))


def _as_path(entry: Traversable) -> Path:
    if isinstance(entry, Path):
        return entry
    raise DeepVMError(f"bundled file {entry.name!r} is not on the file system: install "
                      "deepvm-studio unzipped (pip does)")


def read_bundled_file(*parts: str) -> bytes:
    """The bytes of the bundled file ``data/<parts[0]>/<parts[1]>/...``.

    Raises:
        DeepVMError: a part is empty, ``.``/``..`` or holds a slash, or there is no such file.
    """
    entry = _entry(parts)
    if not entry.is_file():
        raise DeepVMError(f"bundled file {'/'.join(parts)!r} does not exist")
    return entry.read_bytes()


def bundled_paths(folder: str, suffix: str) -> dict[str, Path]:
    """The bundled files ``<folder>/*<suffix>`` by name (file stem), sorted by name.

    Raises:
        DeepVMError: the package is not on the file system (imported from a zip file).
    """
    return {name: _as_path(f) for name, f in _files(folder, suffix).items()}


def is_bundled(path: Path) -> bool:
    """True when ``path`` lies inside the bundled data (at any depth): such paths are never
    written."""
    try:
        root = _as_path(_root()).resolve()
        return root in path.resolve().parents
    except (OSError, DeepVMError):
        return False


def bundled_catalog_names() -> tuple[str, ...]:
    """The names of the bundled catalogs (file stems), sorted."""
    return tuple(_files(CATALOGS, CATALOG_SUFFIX))


def bundled_catalog_paths() -> dict[str, Path]:
    """The bundled catalog files by name."""
    return bundled_paths(CATALOGS, CATALOG_SUFFIX)


def read_bundled_catalog(name: str) -> bytes:
    """The JSON bytes of bundled catalog ``name`` (a name of :func:`bundled_catalog_names`).

    Raises:
        DeepVMError: no bundled catalog has that name.
    """
    return _read_named(CATALOGS, CATALOG_SUFFIX, name, "catalog")


def bundled_measurement_names() -> tuple[str, ...]:
    """The names of the bundled measurement files (file stems), sorted."""
    return tuple(_files(MEASUREMENTS, MEASUREMENTS_SUFFIX))


def bundled_measurements_paths() -> dict[str, Path]:
    """The bundled measurement CSV files by name."""
    return bundled_paths(MEASUREMENTS, MEASUREMENTS_SUFFIX)


def read_bundled_measurements(name: str) -> bytes:
    """The CSV bytes of bundled measurements ``name`` (a name of
    :func:`bundled_measurement_names`).

    Raises:
        DeepVMError: no bundled measurement file has that name.
    """
    return _read_named(MEASUREMENTS, MEASUREMENTS_SUFFIX, name, "measurements")


def _read_named(folder: str, suffix: str, name: str, what: str) -> bytes:
    files = _files(folder, suffix)
    if name not in files:
        raise DeepVMError(f"bundled {what} {name!r} does not exist (bundled: "
                          f"{', '.join(files) or 'none'})")
    return files[name].read_bytes()


#: The bundled table of network bandwidth per instance type (EC2 DescribeInstanceTypes data).
NETWORK_TABLE = "instance-network.csv"


@functools.cache
def bundled_network_gbps() -> Mapping[str, float]:
    """Network bandwidth, Gbit/s, per instance type (``data/instance-network.csv``)."""
    reader = csv.DictReader(io.StringIO(read_bundled_file(NETWORK_TABLE).decode("utf-8")))
    return {r["instance_type"]: float(r["network_gbps"]) for r in reader}
