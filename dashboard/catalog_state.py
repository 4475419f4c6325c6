"""The catalogs the dashboard offers, and the active one that every page uses.

Catalogs are identified by an id: a bundled catalog by its name, the others as ``kind:name``
(``user:my-copy``, ``fetched:aws-2026-01``), an upload by its content's key
(``upload:3f2a9c0d1e4b5a6f``, stored on the server, see :func:`keep_upload`). The user's edits are
kept per id in :data:`dashboard.keys.EDITS` (last valid :class:`Catalog`), and on the server
like uploads so that the URL's ``edited`` parameter restores them; an edited catalog is the
active catalog of every page.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from dashboard import compute, keys
from deepvm_core.catalog import Catalog, store
from deepvm_core.cloud.aws import FetchResult
from deepvm_core.errors import DeepVMError

#: The bundled catalog of the paper's simulation (the Simulate and Method pages).
SIMULATED_CATALOG = "paper-simulated"
KIND_LABELS = {"bundled": "bundled", "user": "saved", "fetched": "fetched", "upload": "uploaded"}
KIND_NOTES = {"bundled": "bundled with the app", "user": "your saved copy",
              "fetched": "fetched from the provider", "upload": "uploaded, kept on this server"}


@dataclass(frozen=True)
class CatalogChoice:
    """A catalog the sidebar offers: id, name, kind and file (``None`` for an upload)."""

    id: str
    name: str
    kind: str
    path: Path | None

    @property
    def label(self) -> str:
        return self.name if self.kind == "bundled" else f"{self.name} ({KIND_LABELS[self.kind]})"


def catalog_choices() -> dict[str, CatalogChoice]:
    """Bundled, saved, fetched and (this session's) uploaded catalogs, by id."""
    choices: dict[str, CatalogChoice] = {}
    for entry in store.list_catalogs():
        cid = entry.name if entry.kind == "bundled" else f"{entry.kind}:{entry.name}"
        choices[cid] = CatalogChoice(cid, entry.name, entry.kind, entry.path)
    for cid, catalog in st.session_state.get(keys.UPLOADS.name, {}).items():
        choices[cid] = CatalogChoice(cid, catalog.name, "upload", None)
    return choices


@dataclass(frozen=True)
class ActiveCatalog:
    """The catalog every page uses: the chosen one, or the user's last valid edit of it."""

    id: str
    choice: CatalogChoice
    source: Catalog
    catalog: Catalog

    @property
    def edited(self) -> bool:
        return self.catalog is not self.source

    @property
    def label(self) -> str:
        return self.catalog.name + (" (edited)" if self.edited else "")


def source_catalog(choice: CatalogChoice) -> Catalog:
    """The catalog of ``choice`` as stored (file or upload), without the user's edits."""
    if choice.path is None:
        return keys.UPLOADS.get()[choice.id]
    return compute.load_catalog_file(str(choice.path), choice.path.stat().st_mtime_ns)


def active_catalog() -> ActiveCatalog:
    """The active catalog. Raises DeepVMError when the chosen file is missing or invalid."""
    choices = catalog_choices()
    cid = keys.CATALOG.get()
    if cid not in choices:
        raise DeepVMError(f"catalog {cid!r} is no longer available")
    choice = choices[cid]
    try:
        source = source_catalog(choice)
    except OSError as exc:
        raise DeepVMError(f"catalog {choice.name!r} cannot be read: {exc.strerror}") from None
    edited = keys.EDITS.get().get(cid)
    return ActiveCatalog(cid, choice, source, edited if edited is not None else source)


def select_catalog(cid: str) -> None:
    """Make ``cid`` the sidebar's catalog (from a callback only)."""
    keys.CATALOG.set(cid)



def choice_label(choice: CatalogChoice) -> str:
    """The catalog picker's label: the choice's, and how old its prices are (none when the
    catalog cannot be read: the page then says why)."""
    from dashboard.provenance import prices_age

    try:
        return f"{choice.label} · {prices_age(source_catalog(choice))}"
    except (DeepVMError, OSError, KeyError):
        return choice.label


def keep_upload(catalog: Catalog) -> str:
    """Store an uploaded catalog on the server (content-addressed, see
    :func:`deepvm_core.catalog.store.save_upload`) and in this session; returns its id,
    ``upload:<key>``, which a reconnected session or a shared link finds again. When the
    server cannot store it, the id is still the key and the upload lasts this session only."""
    try:
        key = store.save_upload(catalog)
    except OSError:
        key = catalog.sha256[:store.UPLOAD_KEY_HEX]
    cid = f"upload:{key}"
    keys.UPLOADS.get()[cid] = catalog
    return cid


def recall_upload(cid: str) -> None:
    """Put the stored upload ``cid`` (``upload:<key>``) into this session, if the server has
    it (a session that reconnected after a big upload, or a shared link)."""
    uploads = keys.UPLOADS.get()
    if not cid.startswith("upload:") or cid in uploads:
        return
    try:
        catalog = store.load_upload(cid.removeprefix("upload:"))
    except DeepVMError:
        return
    if catalog is not None:
        uploads[cid] = catalog


def fetched_catalog_id(path: Path) -> str:
    """The id of the fetched catalog stored at ``path`` (``fetched:aws-us-east-1-2026…``)."""
    return f"fetched:{path.stem}"




@dataclass(frozen=True)
class LastFetch:
    """This session's last successful fetch (Live prices page) and what it is compared with.

    Attributes:
        result: what :func:`deepvm_core.cloud.aws.fetch_catalogs` returned.
        baseline: the catalog that was active when fetching (the diff's "old" prices).
        baseline_label: its label (``aws-us-east-1-2023-10 (edited)``).
        instance_types: the names or globs fetched, or ``None`` for the baseline's types.
    """

    result: FetchResult
    baseline: Catalog
    baseline_label: str
    instance_types: tuple[str, ...] | None = None

    @property
    def catalog_ids(self) -> tuple[str, ...]:
        """The sidebar ids of the catalogs written, in region order."""
        return tuple(fetched_catalog_id(p) for p in self.result.paths)


def use_edited_catalog(active: ActiveCatalog, catalog: Catalog) -> None:
    """Make ``catalog`` (validated by the core) the working copy of the active catalog, as a
    valid edit in the catalog editor would; the editor's draft restarts from it."""
    keys.EDITOR_DRAFTS.get().pop(active.id, None)
    keys.EDITOR_SESSION.set(None)
    keys.INVALID_DRAFTS.get().pop(active.id, None)
    if catalog.sha256 == active.source.sha256:
        keys.EDITS.get().pop(active.id, None)
    else:
        keep_edit(active.id, catalog)


def keep_edit(cid: str, catalog: Catalog) -> None:
    """Make ``catalog`` the edit of catalog ``cid``, and keep it on the server the way uploads
    are kept (by sha256, :func:`deepvm_core.catalog.store.save_upload`), so that the URL's
    ``edited`` parameter (its key) restores it; when the server cannot store it, the edit lasts
    this session only."""
    edits = keys.EDITS.get()
    if cid in edits and edits[cid].sha256 == catalog.sha256:
        return
    edits[cid] = catalog
    with contextlib.suppress(OSError):
        store.save_upload(catalog)


def edit_key(cid: str) -> str | None:
    """The URL key of the edit of catalog ``cid`` (``None``: not edited)."""
    edited = keys.EDITS.get().get(cid)
    return None if edited is None else edited.sha256[:store.UPLOAD_KEY_HEX]


def recall_edit(cid: str, key: str) -> str | None:
    """Make the kept edit ``key`` (URL ``edited``) the edit of catalog ``cid``; returns why it
    cannot be (``None``: done)."""
    try:
        catalog = store.load_upload(key)
    except DeepVMError:
        catalog = None
    if catalog is None:
        return "names no edited catalog kept on this server"
    choice = catalog_choices().get(cid)
    if choice is None or catalog.name != choice.name:
        return f"is an edit of catalog {catalog.name!r}, not of {cid!r}"
    keys.EDITS.get()[cid] = catalog
    return None
