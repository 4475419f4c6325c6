"""Catalog files: where they live, reading them and writing them (all the catalog file I/O).

* bundled: ``data/catalogs/*.json``, shipped in the package and never written
  (:mod:`deepvm_core.bundled`);
* user, fetched (live AWS prices) and uploads: folders of the per-user data folder, by default
  ``<home>/catalogs/{user,fetched,uploads}`` with ``<home>`` ``$DEEPVM_HOME`` or the platform's
  per-user data folder; ``$DEEPVM_USER_CATALOG_DIR``, ``$DEEPVM_FETCHED_CATALOG_DIR`` and
  ``$DEEPVM_UPLOAD_CATALOG_DIR`` move one each (:mod:`deepvm_core.home`). Uploads are
  catalogs uploaded to the dashboard, content-addressed (``<sha256>.json``), so that a session
  that reconnects, or a shared link on the same server, finds an upload again by its key (the first
  :data:`UPLOAD_KEY_HEX` hex digits); only the newest :data:`MAX_UPLOADS` are kept.

Every write is atomic (:mod:`deepvm_core.files`: temp file + rename), so a crash never leaves
half a catalog behind.
"""

from __future__ import annotations

import difflib
import os
import re
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from deepvm_core import bundled, home
from deepvm_core.catalog.catalog import Catalog, catalog_to_dict
from deepvm_core.catalog.json_input import JsonInputError, read_bytes_bounded
from deepvm_core.catalog.schema import MAX_CATALOG_BYTES
from deepvm_core.catalog.validation import catalog_from_json_text, json_problem
from deepvm_core.errors import CatalogError, CatalogNotFoundError, DeepVMError
from deepvm_core.files import write_json_atomic

Kind = Literal["bundled", "user", "fetched"]
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")
#: Hex digits of an upload's sha256 that name it in a URL (``catalog=upload:<key>``).
UPLOAD_KEY_HEX = 16
_UPLOAD_KEY = re.compile(rf"^[0-9a-f]{{{UPLOAD_KEY_HEX}}}$")
#: Uploads kept on the server; older ones are deleted when a new one is stored.
MAX_UPLOADS = 200
#: The catalog a user of today starts with (the CLI's ``--catalog`` and the dashboard's
#: default): the newest bundled us-east-1 prices.
DEFAULT_CATALOG = "aws-us-east-1-2025-h1"
#: The paper's catalog (its Table III rows, prices of October 2023): its scenario's catalog.
PAPER_CATALOG = "aws-us-east-1-2023-10"

def bundled_catalog_paths() -> dict[str, Path]:
    """Bundled catalogs by name (file stem): :func:`deepvm_core.bundled.bundled_catalog_paths`."""
    return bundled.bundled_catalog_paths()


def load_catalog(path_or_name: str | os.PathLike[str]) -> Catalog:
    """Load a catalog (our format or the artifact's) from a path, or by the name of a bundled
    catalog.

    Raises:
        CatalogError: the file is invalid (every problem listed), or larger than
            :data:`~deepvm_core.catalog.schema.MAX_CATALOG_BYTES` (then it is not read).
        CatalogNotFoundError: no such file or bundled name (close names suggested).
        DeepVMError: the file exists but cannot be read.
    """
    text_name = str(path_or_name)
    path = Path(text_name)
    shipped = bundled_catalog_paths()
    if not path.exists() and text_name in shipped:
        path = shipped[text_name]
    if not path.exists():
        close = difflib.get_close_matches(text_name, list(shipped), n=3, cutoff=0.4)
        raise CatalogNotFoundError(text_name, tuple(close), tuple(shipped))
    try:
        text = read_bytes_bounded(path, max_bytes=MAX_CATALOG_BYTES)
    except JsonInputError as exc:
        raise CatalogError([json_problem(exc)], str(path)) from None
    except OSError as exc:
        raise DeepVMError(f"catalog {text_name!r} cannot be read: {exc.strerror}") from None
    return catalog_from_json_text(text, source=str(path))


def save_catalog(catalog: Catalog, path: str | os.PathLike[str]) -> Path:
    """Write ``catalog`` in our format to ``path`` atomically."""
    return write_json_atomic(path, catalog_to_dict(catalog))


def user_dir() -> Path:
    """The folder of the user's saved catalogs (:func:`deepvm_core.home.catalog_dir`)."""
    return home.catalog_dir("user")


def fetched_dir() -> Path:
    """The folder of catalogs fetched from a provider (:func:`deepvm_core.home.catalog_dir`)."""
    return home.catalog_dir("fetched")


def uploads_dir() -> Path:
    """The folder of catalogs uploaded to the dashboard, content-addressed
    (:func:`deepvm_core.home.catalog_dir`)."""
    return home.catalog_dir("uploads")


def save_upload(catalog: Catalog, keep: int = MAX_UPLOADS) -> str:
    """Store an uploaded catalog under its sha256 (atomic; storing it again only marks it as
    the newest) and delete all but the newest ``keep`` uploads; returns its key, the first
    :data:`UPLOAD_KEY_HEX` hex digits of the sha256.

    Raises:
        OSError: the uploads folder cannot be written.
    """
    digest = catalog.sha256
    path = uploads_dir() / f"{digest}.json"
    if not path.exists():
        save_catalog(catalog, path)
    now = time.time_ns()  # finer than the file system's clock tick: the newest sorts first
    os.utime(path, ns=(now, now))
    stored = sorted(uploads_dir().glob("*.json"), key=lambda p: p.stat().st_mtime_ns,
                    reverse=True)
    for old in stored[keep:]:
        if old != path:
            old.unlink(missing_ok=True)
    return digest[:UPLOAD_KEY_HEX]


def load_upload(key: str) -> Catalog | None:
    """The stored upload whose sha256 starts with ``key``, or ``None`` (no such upload, or
    ``key`` is not :data:`UPLOAD_KEY_HEX` lowercase hex digits).

    Raises:
        CatalogError: the stored file is invalid.
    """
    if not _UPLOAD_KEY.match(key):
        return None
    matches = sorted(uploads_dir().glob(f"{key}*.json"))
    if not matches:
        return None
    try:
        return load_catalog(matches[0])
    except CatalogNotFoundError:  # deleted meanwhile by another session's pruning
        return None


@dataclass(frozen=True)
class CatalogEntry:
    """A catalog file on disk: its kind, name (file stem) and path."""

    kind: Kind
    name: str
    path: Path


def list_catalogs() -> list[CatalogEntry]:
    """Bundled catalogs first, then the user's, then fetched ones (each sorted by name)."""
    entries = [CatalogEntry("bundled", n, p) for n, p in bundled_catalog_paths().items()]
    folders: tuple[tuple[Kind, Path], ...] = (("user", user_dir()), ("fetched", fetched_dir()))
    for kind, folder in folders:
        if folder.is_dir():
            entries += [CatalogEntry(kind, p.stem, p) for p in sorted(folder.glob("*.json"))]
    return entries


def load_catalog_named(name: object, field: str) -> Catalog:
    """The catalog called ``name`` among the bundled, user and fetched catalogs
    (:func:`list_catalogs`), never read as a path: a document's ``field`` (``catalog.name`` of
    a plan JSON) names a catalog, it does not point at a file.

    Raises:
        DeepVMError: ``name`` is not one of them (the message names ``field`` and the value).
        CatalogError: the catalog file is invalid.
    """
    entries = {e.name: e.path for e in reversed(list_catalogs())}  # bundled names win
    if not isinstance(name, str) or name not in entries:
        known = sorted(entries)
        close = difflib.get_close_matches(str(name), known, n=3, cutoff=0.6)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise DeepVMError(f"{field} = {str(name)[:200]!r} is not the name of a bundled or saved "
                          f"catalog (a catalog is named, not given as a path; --catalog NAME "
                          f"or PATH chooses one).{hint}")
    return load_catalog(entries[name])


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
