"""Where catalogs live: bundled (read-only), the user's saved copies, and fetched ones.

* bundled: ``data/catalogs/*.json`` (shipped, never overwritten);
* user: ``data/catalogs/user/`` or ``$DEEPVM_USER_CATALOG_DIR``;
* fetched: ``data/catalogs/fetched/`` or ``$DEEPVM_FETCHED_CATALOG_DIR`` (live AWS prices).

Every write is atomic (temp file + rename), so a crash never leaves half a catalog behind.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from deepvm_core.catalog import (
    DATA_DIR,
    Catalog,
    bundled_catalog_paths,
    save_catalog,
)
from deepvm_core.errors import DeepVMError

Kind = Literal["bundled", "user", "fetched"]
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")


def user_dir() -> Path:
    """The folder of the user's saved catalogs."""
    return Path(os.environ.get("DEEPVM_USER_CATALOG_DIR") or DATA_DIR / "user")


def fetched_dir() -> Path:
    """The folder of catalogs fetched from a provider."""
    return Path(os.environ.get("DEEPVM_FETCHED_CATALOG_DIR") or DATA_DIR / "fetched")


@dataclass(frozen=True)
class CatalogEntry:
    """A catalog file on disk: its kind, name (file stem) and path."""

    kind: Kind
    name: str
    path: Path


def list_catalogs() -> list[CatalogEntry]:
    """Bundled catalogs first, then the user's, then fetched ones (each sorted by name)."""
    entries = [CatalogEntry("bundled", n, p) for n, p in bundled_catalog_paths().items()]
    for kind, folder in (("user", user_dir()), ("fetched", fetched_dir())):
        if folder.is_dir():
            entries += [CatalogEntry(kind, p.stem, p) for p in sorted(folder.glob("*.json"))]
    return entries


def check_name(name: str) -> str:
    """A valid file name for a saved catalog (letters, digits, ``.``, ``_``, ``-``).

    Raises:
        DeepVMError: the name is empty, has other characters, or is a bundled catalog's name.
    """
    name = name.strip()
    if not _NAME.match(name):
        raise DeepVMError(
            f"catalog name {name!r} is not allowed: use 1-80 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit")
    if name in bundled_catalog_paths():
        raise DeepVMError(f"catalog name {name!r} is a bundled catalog's; choose another name")
    return name


def save_user_catalog(catalog: Catalog, name: str) -> Path:
    """Save ``catalog`` as user catalog ``name`` (atomic; a bundled name is refused).

    The stored catalog's ``name`` field is set to ``name`` too.
    """
    name = check_name(name)
    return save_catalog(replace(catalog, name=name), user_dir() / f"{name}.json")
