"""Shared state of the dashboard: the scenario in the session and the URL.

Every session key is registered in :mod:`dashboard.keys` (name, type, default). On a session's
first run the URL's query parameters seed the scenario's and the job's keys (invalid values
fall back to the defaults with a warning; the codecs are :mod:`dashboard.url`,
:mod:`dashboard.url_plan` and :mod:`dashboard.url_spot`); once per run the URL is rewritten
from them, so the address bar is always a link that restores the same scenario. The catalogs
offered and the active one are :mod:`dashboard.catalog_state`'s.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from dashboard import (
    catalog_state,
    instance_filters,
    keys,
    url,
    url_cleaning,
    url_plan,
    url_spot,
    url_warnings,
)
from dashboard.plain_view import presentation as presentation  # the one reader, re-exported
from deepvm_core.catalog.gpu_filter import GpuFilter
from deepvm_core.errors import DeepVMError
from deepvm_core.model import Scenario

OBJECTIVE_LABELS = {"speed": "Training speed", "paper": "Paper's Z",
                    "performance": "Performance"}
SOLVER_LABELS = {"enumerate": "Exact enumeration", "ilp": "Integer program (PuLP/CBC)"}


# ----------------------------------------------------------------------------- URL


def wanted_params(page: str) -> dict[str, str]:
    """The URL of the session's current scenario on ``page``: parameter -> text. Presentation
    mode, the GPU filter and, on the Simulate page, its sweep only when not at their defaults;
    the job once set (Plan a job), on every page (Recommend shows its cost and time)."""
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
    optional: dict[str, Any] = {"presentation": keys.PRESENTATION.get(),
                                "gpus": keys.GPU_MODELS.get(),
                                "min_gpu_gb": keys.MIN_GPU_GB.get(),
                                "gpus_per_vm": keys.GPUS_PER_VM.get()}
    if page == "simulate":
        (start, stop), step = keys.SWEEP_RANGE.get(), keys.SWEEP_STEP.get()
        optional.update(sweep_from=start, sweep_to=stop, sweep_step=step)
    for key in url.OPTIONAL_PARAMS:
        if key in optional and optional[key] != url.DEFAULTS[key]:
            texts[key] = url.format_param(key, optional[key])
    texts.update(instance_filters.wanted(page))
    edited = catalog_state.edit_key(keys.CATALOG.get())
    if edited is not None:
        texts[url.EDITED_PARAM] = edited
    if keys.PLAN_ACTIVE.get():
        for p in url_plan.PLAN_PARAMS:
            value = keys.PLAN[p.name].get()
            if value != p.default:
                texts[p.name] = url_plan.format_plan_param(p.name, value)
        if keys.PLAN_MTBI.get():
            texts[url_plan.MTBI_PARAM] = url_plan.format_mtbi(keys.PLAN_MTBI.get())
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
        catalog_state.recall_upload(str(st.query_params.get("catalog", "")))
        ids = catalog_state.catalog_choices()
        params, cleaning = url_cleaning.single_values(
            {k: st.query_params.get_all(k) for k in st.query_params}, ids)
        seeded, warnings = url.parse_query_params(params, ids)
        plan_seeded, plan_warnings = url_plan.parse_plan_params(params)
        plan_warnings += instance_filters.seed(params)
        keys.URL_PAGE.set(seeded.get("page"))
        keys.PLAN_ACTIVE.set(any(p.name in params for p in url_plan.PLAN_PARAMS)
                             or url_plan.MTBI_PARAM in params)
        mtbi, mtbi_warnings = url_plan.parse_mtbi(params.get(url_plan.MTBI_PARAM, ""))
        keys.PLAN_MTBI.set(mtbi)
        plan_warnings += mtbi_warnings
        for name, value in plan_seeded.items():
            keys.PLAN[name].set(value)
        if "catalog" in seeded:
            keys.CATALOG.set(seeded["catalog"])
        if url.EDITED_PARAM in params:
            keys.EDITS.set(keys.EDITS.initial())
            text, cid = params[url.EDITED_PARAM], seeded.get("catalog", keys.CATALOG.default)
            why = catalog_state.recall_edit(cid, str(text))
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
                          ("solver", keys.SOLVER), ("presentation", keys.PRESENTATION),
                          ("gpus", keys.GPU_MODELS), ("min_gpu_gb", keys.MIN_GPU_GB),
                          ("gpus_per_vm", keys.GPUS_PER_VM)):
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
        plan_warnings += _mtbi_of_the_catalog()
        noted = [*cleaning, *warnings, *plan_warnings, *spot_warnings]
        keys.URL_WARNINGS.set([w.text for w in noted])
        keys.URL_WARNING_VALUES.set({w.text: (w.param, param_in_use(w.param))
                                     for w in noted if w.param is not None})
    keys.init()


def _mtbi_of_the_catalog() -> list[url_warnings.UrlWarning]:
    """Drop the URL's MTBI overrides of types the link's catalog lacks, one warning each
    (:func:`dashboard.url_plan.mtbi_in_catalog`); nothing when the catalog cannot be read (the
    page says why)."""
    overrides = keys.PLAN_MTBI.get()
    if not overrides:
        return []
    try:
        catalog = catalog_state.active_catalog().catalog
    except DeepVMError:
        return []
    kept, dropped = url_plan.mtbi_in_catalog(overrides, catalog)
    keys.PLAN_MTBI.set(kept)
    return dropped


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


def gpu_filter() -> GpuFilter:
    """The sidebar's GPU filter (raises InputError for values the core rejects)."""
    return url.gpu_filter_of(keys.GPU_MODELS.get(), float(keys.MIN_GPU_GB.get()),
                             int(keys.GPUS_PER_VM.get()))


def scenario() -> Scenario:
    """The sidebar's scenario (raises InputError for values the core rejects)."""
    return Scenario(
        pw_usd_per_hour=keys.PW.get(), checkpoint_gb=keys.CHECKPOINT_GB.get(),
        buffer_checkpoints=keys.BUFFER.get(),
        objective=keys.OBJECTIVE.get(),
        use_quotas=keys.QUOTAS.get(), max_nodes=int(keys.NODE_CAP.get()),
        gpu_filter=gpu_filter())


def paper_scenario() -> None:
    """The sidebar's "Paper's scenario (Table IV)": :data:`dashboard.url.PAPER_SCENARIO`'s
    catalog, PW and objective (from a callback only; the URL follows at the end of the run)."""
    paper = url.PAPER_SCENARIO
    catalog_state.select_catalog(paper["catalog"])
    set_number("pw", paper["pw"])
    keys.OBJECTIVE.set(paper["objective"])

