"""Shared state of the dashboard: the scenario controls, the URL, and the active catalog.

The scenario lives in ``st.session_state`` under ``sb_*`` keys (set up once with
``setdefault``). On a session's first run the URL's query parameters seed those keys (invalid
values fall back to the defaults with a warning); on every run the URL is rewritten from them,
so the address bar is always a link that restores the same scenario.

Catalogs are identified by an id: a bundled catalog by its name, the others as ``kind:name``
(``user:my-copy``, ``fetched:aws-2026-01``, ``upload:artifact_data``). The user's edits are
kept per id in ``st.session_state["edits"]`` (last valid :class:`Catalog`); an edited catalog
is the active catalog of every page.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

import compute
from deepvm_core import store
from deepvm_core.aws import FetchResult
from deepvm_core.catalog import Catalog
from deepvm_core.errors import DeepVMError
from deepvm_core.model import MAX_NODES, OBJECTIVES, Scenario
from deepvm_core.policies import SOLVERS

DEFAULT_CATALOG = "aws-us-east-1-2023-10"
SIMULATED_CATALOG = "paper-simulated"
OBJECTIVE_LABELS = {"paper": "Paper's Z", "performance": "Performance"}
KIND_LABELS = {"bundled": "bundled", "user": "saved", "fetched": "fetched", "upload": "uploaded"}
KIND_NOTES = {"bundled": "bundled with the app", "user": "your saved copy",
              "fetched": "fetched from the provider", "upload": "uploaded, this session only"}
PAGE_SLUGS = ("recommend", "instances", "catalog", "simulate", "live", "regions", "method")
DEFAULT_PAGE = "recommend"
TOP_K_RANGE = (1, 20)
NODE_CAP_RANGE = (1, MAX_NODES)  # the core's cap (deepvm_core.model)
SOLVER_LABELS = {"enumerate": "Exact enumeration", "ilp": "Integer program (PuLP/CBC)"}


@dataclass(frozen=True)
class NumberControl:
    """A number the sidebar edits with a slider and a number input kept in sync.

    ``sb_<name>`` holds the value; ``sb_<name>_slider`` and ``sb_<name>_input`` are the two
    widgets; ``<name>`` is also the URL parameter. The number input (and the URL) accept
    ``[low, high]``; the slider spans ``[slider_low, slider_high]`` and grows to show a larger
    typed value.
    """

    name: str
    label: str
    help: str
    default: float
    low: float
    high: float
    slider_low: float
    slider_high: float
    slider_step: float
    input_step: float
    fmt: str

    @property
    def key(self) -> str:
        return f"sb_{self.name}"

    def slider_range(self, value: float) -> tuple[float, float]:
        """The slider's bounds for ``value``: the default span, stretched to hold it."""
        return self.slider_low, max(self.slider_high, float(math.ceil(value)))

    def slider_value(self, value: float) -> float:
        low, high = self.slider_range(value)
        return min(max(value, low), high)


CONTROLS = (
    NumberControl("pw", "PW: pricing willingness (USD/hour)",
                  "The most you pay per hour for the whole cluster.",
                  3.0, 0.0, 1000.0, 0.0, 20.0, 0.05, 0.01, "%.2f"),
    NumberControl("ckpt", "Checkpoint size (GB)",
                  "Size f of one checkpoint of the model being trained, in GB (10^9 bytes).",
                  0.3, 0.01, 10000.0, 0.05, 20.0, 0.05, 0.05, "%.2f"),
    NumberControl("buffer", "Buffer (checkpoints per memory node)",
                  "How many checkpoints one Tiering memory node keeps in RAM (may be fractional).",
                  2.0, 0.1, 1000.0, 0.5, 16.0, 0.5, 0.1, "%.1f"),
)
CONTROL_BY_NAME = {c.name: c for c in CONTROLS}
DEFAULTS: dict[str, Any] = {
    **{c.name: c.default for c in CONTROLS},
    "catalog": DEFAULT_CATALOG, "objective": "paper", "quotas": True, "top": 3,
    "nodes": 256, "solver": "enumerate",
    "page": DEFAULT_PAGE,
}
_CHOICES: dict[str, tuple[str, ...]] = {
    "objective": OBJECTIVES, "solver": SOLVERS, "page": PAGE_SLUGS}
_TRUE = {"1", "true", "on", "yes"}
_FALSE = {"0", "false", "off", "no"}


# ----------------------------------------------------------------------------- URL


def parse_query_params(
    params: Mapping[str, str | list[str]], catalog_ids: Collection[str]
) -> tuple[dict[str, Any], list[str]]:
    """The scenario values a URL asks for, and a warning per value that cannot be used.

    Pure: ``params`` is ``st.query_params.to_dict()``; unknown parameters are ignored.
    """
    values: dict[str, Any] = {}
    warnings: list[str] = []

    def reject(key: str, raw: str, why: str) -> None:
        warnings.append(f"URL parameter {key}={raw!r} {why}; using the default "
                        f"{format_param(key, DEFAULTS[key])}.")

    for key, raw in params.items():
        text = (raw[-1] if isinstance(raw, list) and raw else raw) if raw is not None else ""
        text = str(text).strip()
        if key in CONTROL_BY_NAME:
            c = CONTROL_BY_NAME[key]
            try:
                number = float(text)
            except ValueError:
                reject(key, text, "is not a number")
                continue
            if not math.isfinite(number):
                reject(key, text, "is not a finite number")
                continue
            if not c.low <= number <= c.high:
                reject(key, text, f"is outside {c.low:g}..{c.high:g}")
                continue
            values[key] = number
        elif key in ("top", "nodes"):
            low, high = TOP_K_RANGE if key == "top" else NODE_CAP_RANGE
            try:
                number = int(text)
            except ValueError:
                reject(key, text, "is not a whole number")
                continue
            if not low <= number <= high:
                reject(key, text, f"is outside {low}..{high}")
                continue
            values[key] = number
        elif key == "quotas":
            if text.lower() in _TRUE | _FALSE:
                values[key] = text.lower() in _TRUE
            else:
                reject(key, text, "is not on or off")
        elif key in _CHOICES:
            if text in _CHOICES[key]:
                values[key] = text
            else:
                reject(key, text, f"is not one of {', '.join(_CHOICES[key])}")
        elif key == "catalog":
            if text in catalog_ids:
                values[key] = text
            else:
                reject(key, text, "is not a catalog available here")
    return values, warnings


def format_param(key: str, value: Any) -> str:
    """How ``value`` is written in the URL."""
    if key == "quotas":
        return "on" if value else "off"
    if key in CONTROL_BY_NAME:
        return f"{float(value):g}"
    return str(value)


def sync_query_params(page: str) -> None:
    """Write the current scenario (and ``page``) into the URL, touching only changed keys."""
    ss = st.session_state
    wanted = {
        "catalog": ss.sb_catalog,
        **{c.name: ss[c.key] for c in CONTROLS},
        "objective": ss.sb_objective,
        "quotas": ss.sb_quotas,
        "top": ss.sb_top,
        "nodes": ss.sb_nodes,
        "solver": ss.sb_solver,
        "page": page,
    }
    for key, value in wanted.items():
        text = format_param(key, value)
        if st.query_params.get(key) != text:
            st.query_params[key] = text


# ----------------------------------------------------------------------------- session


def init_state() -> None:
    """Set up every shared key once per session; the URL seeds them on the first run."""
    ss = st.session_state
    if "sb_catalog" not in ss:
        seeded, warnings = parse_query_params(st.query_params.to_dict(), catalog_choices())
        ss["url_warnings"] = warnings
        ss["url_page"] = seeded.get("page")
    else:
        seeded = {}
    ss.setdefault("sb_catalog", seeded.get("catalog", DEFAULTS["catalog"]))
    for c in CONTROLS:
        value = float(seeded.get(c.name, c.default))
        ss.setdefault(c.key, value)
        ss.setdefault(f"{c.key}_input", value)
        ss.setdefault(f"{c.key}_slider", c.slider_value(value))
    ss.setdefault("sb_objective", seeded.get("objective", DEFAULTS["objective"]))
    ss.setdefault("sb_quotas", seeded.get("quotas", DEFAULTS["quotas"]))
    ss.setdefault("sb_top", seeded.get("top", DEFAULTS["top"]))
    ss.setdefault("sb_nodes", seeded.get("nodes", DEFAULTS["nodes"]))
    ss.setdefault("sb_solver", seeded.get("solver", DEFAULTS["solver"]))
    ss.setdefault("edits", {})  # catalog id -> last valid edited Catalog
    ss.setdefault("uploads", {})  # catalog id -> uploaded Catalog
    ss.setdefault("last_fetch", None)  # LastFetch of the Live prices page, or None
    ss.setdefault("kept", {})  # page widget key -> value, kept across page switches
    ss.setdefault("url_warnings", [])


def set_number(name: str, value: float) -> None:
    """Set a sidebar number and both of its widgets (call from a callback, before widgets)."""
    c = CONTROL_BY_NAME[name]
    value = round(min(max(float(value), c.low), c.high), 6)
    st.session_state[c.key] = value
    st.session_state[f"{c.key}_input"] = value
    st.session_state[f"{c.key}_slider"] = c.slider_value(value)


def on_slider(name: str) -> None:
    set_number(name, st.session_state[f"sb_{name}_slider"])


def on_input(name: str) -> None:
    set_number(name, st.session_state[f"sb_{name}_input"])


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
        result: what :func:`deepvm_core.aws.fetch_catalogs` returned.
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
