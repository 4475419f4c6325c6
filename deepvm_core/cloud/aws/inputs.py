"""What a fetch is asked for and where it writes: region names, instance-type globs, the base
catalog, and the target paths (:func:`deepvm_core.cloud.aws.fetch.fetch_catalogs` checks them
all before any network call).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.store import fetched_dir, load_catalog
from deepvm_core.errors import InputError

_REGION_RE = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d{1,2}$")
_TYPE_RE = re.compile(r"^[a-z0-9*?][a-z0-9.*?\-]{0,63}$")



def validate_regions(regions: Iterable[str]) -> tuple[str, ...]:
    """The regions, de-duplicated in order. Raises :class:`InputError` for a bad name."""
    out: list[str] = []
    for region in regions:
        region = str(region).strip().lower()
        if not _REGION_RE.match(region):
            raise InputError("region", region, "is not an AWS region name (like us-east-1)")
        if region not in out:
            out.append(region)
    if not out:
        raise InputError("region", "", "give at least one AWS region")
    return tuple(out)


def validate_instance_types(names: Iterable[str]) -> tuple[str, ...]:
    """Instance type names or globs (``g5.*``), de-duplicated. Raises :class:`InputError`."""
    out: list[str] = []
    for name in names:
        for part in str(name).replace(",", " ").split():
            part = part.strip().lower()
            if not _TYPE_RE.match(part):
                raise InputError("instance_types", part,
                                 "is not an instance type or glob (like g5.xlarge or g5.*)")
            if part not in out:
                out.append(part)
    if not out:
        raise InputError("instance_types", "", "give at least one instance type or glob")
    return tuple(out)


def resolve_base(base: Catalog | str | os.PathLike[str] | None) -> Catalog | None:
    """The base catalog: as given, loaded by path or bundled name, or ``None``."""
    if base is None or isinstance(base, Catalog):
        return base
    return load_catalog(base)


def target_paths(out: str | os.PathLike[str] | None, names: Sequence[str], *,
                 overwrite: bool = True) -> list[Path]:
    """Where the catalogs ``names`` go: ``out`` itself when it is a ``.json`` file (one region
    only; an existing one only with ``overwrite``), else ``NAME.json`` in the folder ``out``
    (default: the fetched-catalogs folder), ``NAME-2.json`` and so on when taken.

    Raises:
        InputError: a .json file for several regions, or one that exists without
            ``overwrite`` (``--force``).
    """
    if out is not None and str(out).lower().endswith(".json"):
        if len(names) != 1:
            raise InputError("out", str(out), "a .json file takes one region; give a folder "
                             "for several regions")
        if not overwrite and Path(out).exists():
            raise InputError("out", str(out), "exists; give --force to overwrite it")
        return [Path(out)]
    folder = Path(out) if out is not None else fetched_dir()
    paths = []
    for name in names:
        path = folder / f"{name}.json"
        suffix = 2
        while path.exists():
            path = folder / f"{name}-{suffix}.json"
            suffix += 1
        paths.append(path)
    return paths
