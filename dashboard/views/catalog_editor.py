"""Catalog editor: edit, upload, download, reset and save the active catalog.

The tables start from the active catalog (or this session's draft of it). Every valid state of
the tables becomes the active catalog of every page at once; while a cell is invalid, the core's
problems are listed and the last valid catalog stays in use.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st
from streamlit.elements.lib.column_types import ColumnConfig

from dashboard import catalog_state, editor_frames, keys, plain_view, uploads, widgets
from dashboard.editor_frames import COLUMN_LABELS, TABLES, TableSpec
from dashboard.plain_view import words
from dashboard.server_paths import hide_paths
from deepvm_core.catalog import Catalog, store
from deepvm_core.catalog.artifact import catalog_to_artifact_dict
from deepvm_core.catalog.catalog import catalog_to_dict
from deepvm_core.catalog.schema import MAX_CATALOG_BYTES
from deepvm_core.errors import CatalogError, DeepVMError, Problem
from deepvm_core.hardware.typos import typo_warnings


def editor_key(spec: TableSpec, version: int) -> str:
    return f"ce_{spec.key}_{version}"


def forget(cid: str) -> None:
    """Drop the edits and draft of catalog ``cid``; the tables restart from its source."""
    keys.EDITS.get().pop(cid, None)
    keys.INVALID_DRAFTS.get().pop(cid, None)
    keys.EDITOR_DRAFTS.get().pop(cid, None)
    keys.EDITOR_SESSION.set(None)


def on_reset(cid: str) -> None:
    forget(cid)
    keys.EDITOR_NOTICE.set(("info", "Edits discarded: back to the catalog as stored."))


def on_upload() -> None:
    """Callback of the uploader: an accepted file becomes the active catalog."""
    ss = st.session_state
    uploaded = ss.get("ce_upload")
    if uploaded is None:
        return
    try:
        catalog = editor_frames.parse_upload(uploaded.name, uploaded.getvalue())
    except CatalogError as exc:
        keys.EDITOR_UPLOAD_PROBLEMS.set((uploaded.name, tuple(exc.problems)))
        return
    cid = catalog_state.keep_upload(catalog)
    forget(cid)
    catalog_state.select_catalog(cid)
    keys.EDITOR_UPLOAD_PROBLEMS.set(None)
    keys.EDITOR_NOTICE.set(("success", f"Loaded {uploaded.name} as catalog {catalog.name!r} "
                           f"({len(catalog.gpu_types)} GPU and {len(catalog.cpu_types)} CPU "
                           "types). It is now the active catalog."))


def saved_names() -> set[str]:
    """Names a new saved catalog cannot take: the saved and the bundled catalogs'."""
    return {e.name for e in store.list_catalogs() if e.kind in ("user", "bundled")}


def free_name(name: str, taken: set[str]) -> str:
    """``name-2``, ``name-3``, ...: the first not in ``taken``."""
    number = 2
    while f"{name}-{number}" in taken:
        number += 1
    return f"{name}-{number}"


def on_save(cid: str, catalog: Catalog) -> None:
    """Callback: save ``catalog`` as a new named user catalog and switch to it. A name already
    saved is refused (a saved catalog is never replaced) and a free one is offered."""
    name = keys.EDITOR_SAVE_NAME.get().strip()
    try:
        name = store.check_name(name)
        taken = saved_names()
        if name in taken:
            offer = free_name(name, taken)
            keys.EDITOR_SAVE_NAME.set(offer)
            keys.EDITOR_NOTICE.set((
                "error", f"Not saved: a saved catalog is already named {name!r}, and saving "
                f"would replace it. The name is now {offer!r}, which is free: press Save again "
                "to use it, or type another."))
            return
        path = store.save_user_catalog(catalog, name)
    except (DeepVMError, OSError) as exc:
        keys.EDITOR_NOTICE.set(("error", f"Not saved: {hide_paths(str(exc))}"))
        return
    forget(cid)
    catalog_state.select_catalog(f"user:{name}")
    keys.EDITOR_NOTICE.set(("success", f"Saved as {name!r} ({path.name}); it is now the "
                            "active catalog, listed in the sidebar."))


def notices() -> None:
    notice = keys.EDITOR_NOTICE.get()
    keys.EDITOR_NOTICE.set(None)
    if notice is not None:
        kind, text = notice
        getattr(st, kind)(text)
    failed = keys.EDITOR_UPLOAD_PROBLEMS.get()
    if failed:
        name, problems = failed
        st.error(words(f"{name} was not loaded: {len(problems)} problem(s). The active catalog is "
                       "unchanged."), icon=":material/error:")
        show_problems(problems)


def show_problems(problems: tuple[Problem, ...] | list[Problem],
                  frames: dict[str, Any] | None = None,
                  key: str | None = None) -> None:
    """A table of ``problems`` (with the editor's ``frames``, rows numbered as in the grid);
    with ``key``, only those of that table (``""``: those of no table)."""
    frame = editor_frames.problems_frame(problems, frames)
    if key is not None:
        frame = frame[frame["table_key"] == key]
    if not frame.empty:
        plain_view.dataframe(frame.drop(columns="table_key"), hide_index=True)


def session_for(active: catalog_state.ActiveCatalog) -> dict[str, Any]:
    """The editor's base tables; restarted (new widget keys) when the catalog changes or the
    editors were not on screen in the last run (the page was left)."""
    ss = st.session_state
    session = keys.EDITOR_SESSION.get()
    if (session is None or session["source"] != active.id
            or not all(editor_key(t, session["version"]) in ss for t in TABLES)):
        version = keys.EDITOR_VERSION.get() + 1  # never reuse a widget key
        keys.EDITOR_VERSION.set(version)
        draft = keys.EDITOR_DRAFTS.get().get(active.id)
        base = draft if draft is not None else editor_frames.catalog_frames(active.catalog)
        session = {"source": active.id, "version": version, "base": base}
        keys.EDITOR_SESSION.set(session)
    return session


#: Widths (px) of the editor's columns, so that the GPU grid fits the main column at a 1440 px
#: wide window (issue 20 item 17); the others take Streamlit's default.
COLUMN_WIDTHS = {"name": 105, "family": 58, "on_demand_usd_per_hour": 68,
                 "spot_usd_per_hour": 68, "vcpus": 50, "memory_gib": 50, "network_gbps": 50,
                 "eflops": 62, "scaling_a": 95, "scaling_b": 95, "scaling_c": 95,
                 "interruption_bucket": 84}


def column_config(spec: TableSpec) -> dict[str, ColumnConfig]:
    """Text cells throughout (see :mod:`editor_frames`), numbers aligned right; the index is
    the row number the problems name."""
    config = {"_index": st.column_config.NumberColumn(
        "Row", disabled=True, width=40, help="The row's number, as the problems below name it")}
    for column in spec.columns:
        label, help_text = COLUMN_LABELS[column]
        numeric = column not in spec.text_columns
        if numeric:
            help_text += " (a number: 0.25, 16, 1e308)"
        config[column] = st.column_config.TextColumn(
            words(label), help=help_text, alignment="right" if numeric else None,
            width=COLUMN_WIDTHS.get(column))
    return config


def toolbar(active: catalog_state.ActiveCatalog, problems: tuple[Problem, ...]) -> None:
    catalog = active.catalog
    with st.container(border=True):
        up, down, keep = st.columns([0.36, 0.3, 0.34], gap="medium")
        up.file_uploader("Upload a catalog (JSON: ours or the research artifact's)",
                         type=["json"], key="ce_upload", on_change=on_upload,
                         max_upload_size=uploads.TRANSPORT_MB,
                         help=f"At most {MAX_CATALOG_BYTES / 2**20:g} MiB.")
        with down:
            st.markdown("**Download** the catalog in use")
            stem = catalog.name + ("-edited" if active.edited else "")
            st.download_button("Our format (JSON)", json.dumps(catalog_to_dict(catalog), indent=2),
                               file_name=f"{stem}.json", mime="application/json",
                               key="ce_download_ours", on_click="ignore",
                               icon=":material/download:")
            st.download_button("Artifact format (JSON)",
                               json.dumps(catalog_to_artifact_dict(catalog), indent=2),
                               file_name=f"{stem}-artifact.json", mime="application/json",
                               key="ce_download_artifact", on_click="ignore",
                               icon=":material/download:",
                               help="The research artifact's format: loses region, price date, "
                                    "source and the saturation table")
        with keep:
            st.text_input("Save as a named catalog", key=keys.EDITOR_SAVE_NAME.name,
                          placeholder="my-catalog",
                          help="A new name: letters, digits, '.', '_' or '-'. A saved catalog "
                               "is never replaced.")
            save, reset = st.columns(2)
            save.button("Save", key="ce_save", icon=":material/save:", type="primary",
                        on_click=on_save, args=(active.id, catalog), disabled=bool(problems),
                        help="Fix the problems first" if problems else None, width="stretch")
            reset.button("Reset", key="ce_reset", icon=":material/restart_alt:",
                         on_click=on_reset, args=(active.id,),
                         disabled=not (active.edited or problems),
                         help="Discard the edits: back to the catalog as stored",
                         width="stretch")


def main() -> None:
    active = catalog_state.active_catalog()
    st.title("Catalog editor")
    st.caption(words(f"Editing {widgets.catalog_named(active)}. Valid edits apply on every "
                     "page at once."))
    # Fixed containers: the toolbar keeps its place whether or not a notice shows, so a file
    # being uploaded is not re-mounted (and lost) by the rerun its first half triggers.
    with st.container():
        notices()
    status = st.container()
    toolbar_slot = st.container()
    session = session_for(active)
    problems_slots, frames = {}, {}
    places = [st.container(), st.container(), *st.columns(2, gap="medium")]
    for spec, place in zip(TABLES, places, strict=True):
        with place:
            st.markdown(words(f"**{spec.title}**"))
            frames[spec.key] = st.data_editor(
                session["base"][spec.key], key=editor_key(spec, session["version"]),
                num_rows="dynamic", hide_index=False, column_config=column_config(spec),
                placeholder="–")
            problems_slots[spec.key] = st.container()
    keys.EDITOR_DRAFTS.get()[active.id] = frames

    catalog, problems = editor_frames.validate_frames(frames, active.source)
    if problems:  # the sidebar of the other pages says so
        keys.INVALID_DRAFTS.get()[active.id] = len(problems)
    else:
        keys.INVALID_DRAFTS.get().pop(active.id, None)
    if catalog is not None:
        if catalog.sha256 == active.source.sha256:
            keys.EDITS.get().pop(active.id, None)
        else:
            catalog_state.keep_edit(active.id, catalog)
        active = catalog_state.active_catalog()
    with status:
        if problems:
            st.error(words(f"{len(problems)} problem(s) in the tables. The last valid catalog "
                           f"({widgets.escape_md(active.label)}) stays in use on every page "
                           "until they are fixed."),
                     icon=":material/error:")
            show_problems(problems, frames, "")
        else:
            st.success(words(f"Valid: **{widgets.escape_md(active.label)}** is in use on every "
                             f"page (sha256 `{active.catalog.sha256[:12]}…`)."),
                       icon=":material/check_circle:")
            plausible = typo_warnings(active.catalog, active.source)
            if plausible:  # valid, but it looks like a typo: said, never blocking
                st.warning(words(f"{len(plausible)} value(s) look like typos (still in use):\n\n"
                                 + "\n".join(f"- {widgets.escape_md(str(p))}" for p in plausible)),
                           icon=":material/warning:")
            if active.catalog.warnings:
                with st.expander(words(f"{len(active.catalog.warnings)} warning(s)")):
                    show_problems(active.catalog.warnings, frames)
    for key, slot in problems_slots.items():
        with slot:
            show_problems(problems, frames, key)
    with toolbar_slot:
        toolbar(active, problems)


widgets.run_page(main)
