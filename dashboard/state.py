"""Shared state of the dashboard: the scenario in the session and the URL, and the active catalog.

Every session key is registered in :mod:`dashboard.keys` (name, type, default). On a session's
first run the URL's query parameters seed the scenario's and the job's keys (invalid values
fall back to the defaults with a warning; the codec is :mod:`dashboard.url`); once per run the
URL is rewritten from them, so the address bar is always a link that restores the same
scenario.

Catalogs are identified by an id: a bundled catalog by its name, the others as ``kind:name``
(``user:my-copy``, ``fetched:aws-2026-01``), an upload by its content's key
(``upload:3f2a9c0d1e4b5a6f``, stored on the server, see :func:`keep_upload`). The user's edits are
kept per id in :data:`dashboard.keys.EDITS` (last valid :class:`Catalog`); an edited catalog
is the active catalog of every page.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from dashboard import compute, instance_filters, keys, url, url_spot, url_warnings
from deepvm_core.catalog import Catalog, store
from deepvm_core.cloud.aws import FetchResult
from deepvm_core.errors import DeepVMError
from deepvm_core.model import Scenario

SIMULATED_CATALOG = "paper-simulated"
OBJECTIVE_LABELS = {"speed": "Training speed", "paper": "Paper's Z",
                    "performance": "Performance"}
KIND_LABELS = {"bundled": "bundled", "user": "saved", "fetched": "fetched", "upload": "uploaded"}
KIND_NOTES = {"bundled": "bundled with the app", "user": "your saved copy",
              "fetched": "fetched from the provider", "upload": "uploaded, kept on this server"}
SOLVER_LABELS = {"enumerate": "Exact enumeration", "ilp": "Integer program (PuLP/CBC)"}


# ----------------------------------------------------------------------------- URL


def wanted_params(page: str) -> dict[str, str]:
    """The URL of the session's current scenario on ``page``: parameter -> text. Presentation
    mode and, on the Simulate page, its sweep only when not at their defaults; the job once
    set (Plan a job), on every page (Recommend shows its cost and time)."""
    wanted: dict[str, Any] = {
        "catalog": keys.CATALOG.get(),
        **{name: key.get() for name, key in keys.NUMBERS.items()},
        "objective": keys.OBJECTIVE.get(),
        "quotas": keys.QUOTAS.get(),
        "top": keys.TOP_K.get(),
        "nodes": keys.NODE_CAP.get(),
        "solver": keys.SOLVER.get(),
        "page": page,
    }
    texts = {key: url.format_param(key, value) for key, value in wanted.items()}
    optional: dict[str, Any] = {"presentation": keys.PRESENTATION.get()}
    if page == "simulate":
        (start, stop), step = keys.SWEEP_RANGE.get(), keys.SWEEP_STEP.get()
        optional.update(sweep_from=start, sweep_to=stop, sweep_step=step)
    for key in url.OPTIONAL_PARAMS:
        if key in optional and optional[key] != url.DEFAULTS[key]:
            texts[key] = url.format_param(key, optional[key])
    texts.update(instance_filters.wanted(page))
    edited = edit_key(keys.CATALOG.get())
    if edited is not None:
        texts[url.EDITED_PARAM] = edited
    if keys.PLAN_ACTIVE.get():
        for p in url.PLAN_PARAMS:
            value = keys.PLAN[p.name].get()
            if value != p.default:
                texts[p.name] = url.format_plan_param(p.name, value)
        if keys.PLAN_MTBI.get():
            texts[url.MTBI_PARAM] = url.format_mtbi(keys.PLAN_MTBI.get())
    texts.update(spot_params())
    return texts


def spot_params() -> dict[str, str]:
    """The Spot markets page's values in the URL (:data:`dashboard.url_spot.SPOT_PARAMS`), on every
    page: pools and recovery once pools are set (every page plans with them), the page's
    deadline and starts when not at their defaults."""
    texts: dict[str, str] = {}
    pools = url_spot.format_spot_pools(keys.SPOT_POOLS.get())
    if pools:
        texts.update(pools=pools, recovery=keys.SPOT_RECOVERY.get())
    for name, key in (("spot_deadline", keys.SPOT_DEADLINE), ("starts", keys.SPOT_STARTS)):
        value = key.get()
        if value != url_spot.SPOT_DEFAULTS[name]:
            texts[name] = f"{value:g}"
    return texts


def sync_query_params(page: str) -> None:
    """Write the current scenario (and ``page``) into the URL (:func:`wanted_params`),
    touching only changed keys: one value each, and no parameter the app does not read.
    Called once per run, after the page and the sidebar."""
    wanted = wanted_params(page)
    for key, text in wanted.items():
        if st.query_params.get_all(key) != [text]:
            st.query_params[key] = text
    for key in [k for k in st.query_params if k not in wanted]:
        del st.query_params[key]


def param_in_use(name: str) -> str | None:
    """The URL text of parameter ``name``'s value in use now (``None``: not in the URL); the
    sweep's whatever the page."""
    return wanted_params("simulate").get(name)


# ----------------------------------------------------------------------------- session


def init_state() -> None:
    """Set up every registered key (:mod:`dashboard.keys`) once per session; on the first run
    the URL seeds the scenario and the job."""
    ss = st.session_state
    if keys.CATALOG.name not in ss:
        keys.UPLOADS.set(keys.UPLOADS.initial())
        recall_upload(str(st.query_params.get("catalog", "")))
        ids = catalog_choices()
        params, cleaning = url.single_values(
            {k: st.query_params.get_all(k) for k in st.query_params}, ids)
        seeded, warnings = url.parse_query_params(params, ids)
        plan_seeded, plan_warnings = url.parse_plan_params(params)
        plan_warnings += instance_filters.seed(params)
        keys.URL_PAGE.set(seeded.get("page"))
        keys.PLAN_ACTIVE.set(any(p.name in params for p in url.PLAN_PARAMS)
                             or url.MTBI_PARAM in params)
        mtbi, mtbi_warnings = url.parse_mtbi(params.get(url.MTBI_PARAM, ""))
        keys.PLAN_MTBI.set(mtbi)
        plan_warnings += mtbi_warnings
        for name, value in plan_seeded.items():
            keys.PLAN[name].set(value)
        if "catalog" in seeded:
            keys.CATALOG.set(seeded["catalog"])
        if url.EDITED_PARAM in params:
            keys.EDITS.set(keys.EDITS.initial())
            text, cid = params[url.EDITED_PARAM], seeded.get("catalog", keys.CATALOG.default)
            why = recall_edit(cid, str(text))
            if why is not None:
                warnings.append(url_warnings.UrlWarning(
                    url.EDITED_PARAM,
                    f"URL parameter {url.EDITED_PARAM}={url_warnings.echo(str(text))} {why}; "
                    f"using {cid} unedited."))
        for c in url.CONTROLS:
            value = float(seeded.get(c.name, c.default))
            keys.NUMBERS[c.name].set(value)
            keys.SLIDERS[c.name].set(c.slider_value(value))
        for name, key in (("objective", keys.OBJECTIVE), ("quotas", keys.QUOTAS),
                          ("top", keys.TOP_K), ("nodes", keys.NODE_CAP),
                          ("solver", keys.SOLVER), ("presentation", keys.PRESENTATION)):
            if name in seeded:
                key.set(seeded[name])
        spot, spot_warnings = url_spot.parse_spot_params(params)
        spot_keys: dict[str, keys.Key[Any]] = {
            "pools": keys.SPOT_POOLS, "recovery": keys.SPOT_RECOVERY,
            "spot_deadline": keys.SPOT_DEADLINE, "starts": keys.SPOT_STARTS}
        for name, value in spot.items():
            spot_keys[name].set(value)
        sweep = {k: float(seeded.get(k, url.DEFAULTS[k])) for k in url.SWEEP_PARAMS}
        keys.SWEEP_RANGE.set((sweep["sweep_from"], sweep["sweep_to"]))
        keys.SWEEP_STEP.set(sweep["sweep_step"])
        keys.init()
        noted = [*cleaning, *warnings, *plan_warnings, *spot_warnings]
        keys.URL_WARNINGS.set([w.text for w in noted])
        keys.URL_WARNING_VALUES.set({w.text: (w.param, param_in_use(w.param))
                                     for w in noted if w.param is not None})
    keys.init()


def current_url_warnings() -> list[str]:
    """The URL warnings still true: a warning about a parameter goes once its value changes
    from the one used in its place (the user fixed it)."""
    warnings = keys.URL_WARNINGS.get()
    seeded = keys.URL_WARNING_VALUES.get()
    kept = [w for w in warnings
            if w not in seeded or param_in_use(seeded[w][0]) == seeded[w][1]]
    if kept != warnings:
        keys.URL_WARNINGS.set(kept)
    return kept


def set_number(name: str, value: float) -> None:
    """Set a sidebar number and its slider (call from a callback, before the widgets)."""
    c = url.CONTROL_BY_NAME[name]
    value = round(min(max(float(value), c.low), c.high), 6)
    keys.NUMBERS[name].set(value)
    keys.SLIDERS[name].set(c.slider_value(value))


def on_slider(name: str) -> None:
    """The slider of number ``name`` moved: the number follows."""
    set_number(name, keys.SLIDERS[name].get())


def on_input(name: str) -> None:
    """A number was typed: the slider follows (stretched to show it)."""
    set_number(name, keys.NUMBERS[name].get())


def presentation() -> bool:
    """Whether the sidebar's presentation mode hides the research details."""
    return keys.PRESENTATION.get()


def scenario() -> Scenario:
    """The sidebar's scenario (raises InputError for values the core rejects)."""
    return Scenario(
        pw_usd_per_hour=keys.PW.get(), checkpoint_gb=keys.CHECKPOINT_GB.get(),
        buffer_checkpoints=keys.BUFFER.get(),
        objective=keys.OBJECTIVE.get(),
        use_quotas=keys.QUOTAS.get(), max_nodes=int(keys.NODE_CAP.get()))


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


def paper_scenario() -> None:
    """The sidebar's "Paper's scenario (Table IV)": :data:`dashboard.url.PAPER_SCENARIO`'s
    catalog, PW and objective (from a callback only; the URL follows at the end of the run)."""
    paper = url.PAPER_SCENARIO
    select_catalog(paper["catalog"])
    set_number("pw", paper["pw"])
    keys.OBJECTIVE.set(paper["objective"])


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
