"""Shared state of the dashboard: the scenario in the session and the URL, and the active catalog.

The scenario lives in ``st.session_state`` under ``sb_*`` keys (set up once with
``setdefault``). On a session's first run the URL's query parameters seed those keys (invalid
values fall back to the defaults with a warning; the codec is :mod:`url`); on every run the URL
is rewritten from them, so the address bar is always a link that restores the same scenario.

Catalogs are identified by an id: a bundled catalog by its name, the others as ``kind:name``
(``user:my-copy``, ``fetched:aws-2026-01``), an upload by its content's key
(``upload:3f2a9c0d1e4b5a6f``, stored on the server, see :func:`keep_upload`). The user's edits are
kept per id in ``st.session_state["edits"]`` (last valid :class:`Catalog`); an edited catalog
is the active catalog of every page.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

import compute
import url
from deepvm_core.catalog import Catalog, store
from deepvm_core.cloud.aws import FetchResult
from deepvm_core.errors import DeepVMError
from deepvm_core.model import Scenario

SIMULATED_CATALOG = "paper-simulated"
OBJECTIVE_LABELS = {"paper": "Paper's Z", "performance": "Performance"}
KIND_LABELS = {"bundled": "bundled", "user": "saved", "fetched": "fetched", "upload": "uploaded"}
KIND_NOTES = {"bundled": "bundled with the app", "user": "your saved copy",
              "fetched": "fetched from the provider", "upload": "uploaded, kept on this server"}
SOLVER_LABELS = {"enumerate": "Exact enumeration", "ilp": "Integer program (PuLP/CBC)"}


# ----------------------------------------------------------------------------- URL


def sync_query_params(page: str) -> None:
    """Write the current scenario (and ``page``) into the URL, touching only changed keys;
    presentation mode and, on the Simulate page, its sweep only when not at their defaults."""
    ss = st.session_state
    wanted = {
        "catalog": ss.sb_catalog,
        **{c.name: ss[c.key] for c in url.CONTROLS},
        "objective": ss.sb_objective,
        "quotas": ss.sb_quotas,
        "top": ss.sb_top,
        "nodes": ss.sb_nodes,
        "solver": ss.sb_solver,
        "page": page,
    }
    for key, value in wanted.items():
        text = url.format_param(key, value)
        if st.query_params.get(key) != text:
            st.query_params[key] = text
    optional: dict[str, Any] = {"presentation": ss.sb_presentation}
    if page == "simulate":
        (start, stop), step = ss.sim_pw_range, ss.sim_pw_step
        optional.update(sweep_from=start, sweep_to=stop, sweep_step=step)
    for key in url.OPTIONAL_PARAMS:
        if key in optional and optional[key] != url.DEFAULTS[key]:
            text = url.format_param(key, optional[key])
            if st.query_params.get(key) != text:
                st.query_params[key] = text
        elif key in st.query_params:
            del st.query_params[key]
    # The job (Plan a job page) once set, on every page: Recommend shows its cost and time.
    for p in url.PLAN_PARAMS:
        value = ss[p.key]
        if ss.plan_active and value != p.default:
            text = url.format_plan_param(p.name, value)
            if st.query_params.get(p.name) != text:
                st.query_params[p.name] = text
        elif p.name in st.query_params:
            del st.query_params[p.name]


# ----------------------------------------------------------------------------- session


def init_state() -> None:
    """Set up every shared key once per session; the URL seeds them on the first run."""
    ss = st.session_state
    ss.setdefault("uploads", {})  # catalog id -> uploaded Catalog
    if "sb_catalog" not in ss:
        recall_upload(str(st.query_params.get("catalog", "")))
        params = st.query_params.to_dict()
        seeded, warnings = url.parse_query_params(params, catalog_choices())
        plan_seeded, plan_warnings = url.parse_plan_params(params)
        ss["url_warnings"] = warnings + plan_warnings
        ss["url_page"] = seeded.get("page")
        ss["plan_active"] = any(p.name in params for p in url.PLAN_PARAMS)
        for p in url.PLAN_PARAMS:
            ss[p.key] = plan_seeded.get(p.name, p.default)
    else:
        seeded = {}
    ss.setdefault("sb_catalog", seeded.get("catalog", url.DEFAULTS["catalog"]))
    for c in url.CONTROLS:
        value = float(seeded.get(c.name, c.default))
        ss.setdefault(c.key, value)
        ss.setdefault(f"{c.key}_input", value)
        ss.setdefault(f"{c.key}_slider", c.slider_value(value))
    ss.setdefault("sb_objective", seeded.get("objective", url.DEFAULTS["objective"]))
    ss.setdefault("sb_quotas", seeded.get("quotas", url.DEFAULTS["quotas"]))
    ss.setdefault("sb_top", seeded.get("top", url.DEFAULTS["top"]))
    ss.setdefault("sb_nodes", seeded.get("nodes", url.DEFAULTS["nodes"]))
    ss.setdefault("sb_solver", seeded.get("solver", url.DEFAULTS["solver"]))
    ss.setdefault("sb_presentation", seeded.get("presentation", url.DEFAULTS["presentation"]))
    sweep = {k: float(seeded.get(k, url.DEFAULTS[k])) for k in url.SWEEP_PARAMS}
    ss.setdefault("sim_pw_range", (sweep["sweep_from"], sweep["sweep_to"]))
    ss.setdefault("sim_pw_step", sweep["sweep_step"])
    ss.setdefault("sim_normalised", True)
    ss.setdefault("edits", {})  # catalog id -> last valid edited Catalog
    ss.setdefault("invalid_drafts", {})  # catalog id -> problems in the editor's draft of it
    ss.setdefault("last_fetch", None)  # LastFetch of the Live prices page, or None
    ss.setdefault("kept", {})  # page widget key -> value, kept across page switches
    ss.setdefault("url_warnings", [])
    ss.setdefault("plan_active", False)  # a job is set: Recommend shows its cost and time
    for p in url.PLAN_PARAMS:
        ss.setdefault(p.key, p.default)
    ss.setdefault("plan_mtbi", {})  # GPU type name -> MTBI hours the user typed
    ss.setdefault("plan_measurements", None)  # (file name, CSV text) uploaded, or None


def set_number(name: str, value: float) -> None:
    """Set a sidebar number and both of its widgets (call from a callback, before widgets)."""
    c = url.CONTROL_BY_NAME[name]
    value = round(min(max(float(value), c.low), c.high), 6)
    st.session_state[c.key] = value
    st.session_state[f"{c.key}_input"] = value
    st.session_state[f"{c.key}_slider"] = c.slider_value(value)


def on_slider(name: str) -> None:
    set_number(name, st.session_state[f"sb_{name}_slider"])


def on_input(name: str) -> None:
    set_number(name, st.session_state[f"sb_{name}_input"])


def presentation() -> bool:
    """Whether the sidebar's presentation mode hides the research details."""
    return bool(st.session_state.sb_presentation)


def scenario() -> Scenario:
    """The sidebar's scenario (raises InputError for values the core rejects)."""
    ss = st.session_state
    return Scenario(
        pw_usd_per_hour=ss.sb_pw, checkpoint_gb=ss.sb_ckpt, buffer_checkpoints=ss.sb_buffer,
        objective=ss.sb_objective, use_quotas=ss.sb_quotas, max_nodes=int(ss.sb_nodes))


# ----------------------------------------------------------------------------- catalogs


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
    for cid, catalog in st.session_state.get("uploads", {}).items():
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
        return st.session_state["uploads"][choice.id]
    return compute.load_catalog_file(str(choice.path), choice.path.stat().st_mtime_ns)


def active_catalog() -> ActiveCatalog:
    """The active catalog. Raises DeepVMError when the chosen file is missing or invalid."""
    choices = catalog_choices()
    cid = st.session_state.sb_catalog
    if cid not in choices:
        raise DeepVMError(f"catalog {cid!r} is no longer available")
    choice = choices[cid]
    try:
        source = source_catalog(choice)
    except OSError as exc:
        raise DeepVMError(f"catalog {choice.name!r} cannot be read: {exc.strerror}") from None
    edited = st.session_state["edits"].get(cid)
    return ActiveCatalog(cid, choice, source, edited if edited is not None else source)


def restore(*keys: str) -> None:
    """Give page widgets back the values they had when their page was left (Streamlit drops
    the state of widgets that are not on screen). Call before the widgets."""
    ss = st.session_state
    for key in keys:
        if key not in ss and key in ss["kept"]:
            ss[key] = ss["kept"][key]


def remember(*keys: str) -> None:
    """Keep the current values of page widgets for :func:`restore`. Call after the widgets."""
    ss = st.session_state
    ss["kept"].update({key: ss[key] for key in keys if key in ss})


def select_catalog(cid: str) -> None:
    """Make ``cid`` the sidebar's catalog (from a callback only)."""
    st.session_state["sb_catalog"] = cid


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
    st.session_state["uploads"][cid] = catalog
    return cid


def recall_upload(cid: str) -> None:
    """Put the stored upload ``cid`` (``upload:<key>``) into this session, if the server has
    it (a session that reconnected after a big upload, or a shared link)."""
    uploads = st.session_state["uploads"]
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


def fetched_choices() -> dict[str, CatalogChoice]:
    """The fetched catalogs on disk (``store.fetched_dir()``), by id."""
    return {cid: c for cid, c in catalog_choices().items() if c.kind == "fetched"}


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
    ss = st.session_state
    ss.setdefault("ce_drafts", {}).pop(active.id, None)
    ss.pop("ce_session", None)
    ss["invalid_drafts"].pop(active.id, None)
    if catalog.sha256 == active.source.sha256:
        ss["edits"].pop(active.id, None)
    else:
        ss["edits"][active.id] = catalog
