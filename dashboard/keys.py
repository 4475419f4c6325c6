"""Every key the dashboard keeps in ``st.session_state``: one typed registry.

A :class:`Key` names one entry, with its type (``Key[float]``) and the value a new session
starts with; ``KEY.get()`` and ``KEY.set(value)`` read and write it, typed. :func:`init`
gives a session every key of :data:`REGISTRY` that it lacks (the URL seeds the scenario and
the job first, see :mod:`dashboard.state`).

One mechanism keeps inputs across page switches: a widget whose key is a :class:`Key` with
``persist=True`` is created with ``key=KEY.name`` and ``persist_state=PERSIST`` (Streamlit
then keeps its value while another page is shown); a widget of a key with ``persist=False``
starts again from the default when its page is left. Never pass ``value=``/``index=`` to a
registered widget: its value is the key's. The value of a number of the sidebar lives in its
number input's key; its slider is a view of it.

Defaults come from the URL's codecs (:mod:`dashboard.url`, :mod:`dashboard.url_plan`,
:mod:`dashboard.url_spot`), whose defaults are the core's (``Scenario``, ``Workload``,
``plan_job``, ``recommend``).

Keys of a single page's transient widgets (buttons, the catalog editor's tables, expanders)
are not here: nothing reads them from elsewhere.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast

import streamlit as st

from dashboard import url, url_plan, url_spot
from deepvm_core.cloud.aws import DEFAULT_MAX_ATTEMPTS, SpotAggregate
from deepvm_core.model import Objective
from deepvm_core.recommend.recommendation import Solver

if TYPE_CHECKING:
    from deepvm_core.catalog import Catalog
    from deepvm_core.errors import Problem

T = TypeVar("T")

#: How long Streamlit keeps a registered widget's value when the widget is not drawn.
PERSIST: Literal["session"] = "session"


@dataclass(frozen=True)
class Key(Generic[T]):
    """One session-state entry.

    Attributes:
        name: the key in ``st.session_state`` (and of the widget that edits it, if any).
        default: the value a new session starts with (copied, so a dict is per session).
        persist: a widget edits it and keeps it across page switches (the widget is created
            with ``persist_state=PERSIST``).
    """

    name: str
    default: T
    persist: bool = False

    def initial(self) -> T:
        """A fresh copy of :attr:`default`."""
        return copy.copy(self.default)

    def get(self) -> T:
        """The session's value (set up by :func:`init`)."""
        return cast(T, st.session_state[self.name])

    def set(self, value: T) -> None:
        """Write the session's value (before its widget is drawn in this run)."""
        st.session_state[self.name] = value


def _kept(name: str, default: T) -> Key[T]:
    """A key of a widget whose value survives page switches."""
    return Key(name, default, persist=True)


# ----------------------------------------------------------------------------- sidebar

CATALOG: Key[str] = _kept("sb_catalog", url.DEFAULT_CATALOG)
#: The scenario's numbers, by URL name: the number input's key holds the value.
NUMBERS: dict[str, Key[float]] = {c.name: _kept(c.key, c.default) for c in url.CONTROLS}
#: Their sliders (a view: :func:`dashboard.state.on_slider` copies a move into the number).
SLIDERS: dict[str, Key[float]] = {
    c.name: _kept(c.slider_key, c.slider_value(c.default)) for c in url.CONTROLS}
PW, CHECKPOINT_GB, BUFFER = NUMBERS["pw"], NUMBERS["ckpt"], NUMBERS["buffer"]
OBJECTIVE: Key[Objective] = _kept("sb_objective", url.DEFAULTS["objective"])
QUOTAS: Key[bool] = _kept("sb_quotas", url.DEFAULTS["quotas"])
TOP_K: Key[int] = _kept("sb_top", url.DEFAULTS["top"])
NODE_CAP: Key[int] = _kept("sb_nodes", url.DEFAULTS["nodes"])
SOLVER: Key[Solver] = _kept("sb_solver", url.DEFAULTS["solver"])
PRESENTATION: Key[bool] = _kept("sb_presentation", url.DEFAULTS["presentation"])
#: The scenario's GPU filter (:func:`dashboard.url.gpu_filter_of`): models, least GB per GPU
#: (0: any), GPUs per VM (0: any).
GPU_MODELS: Key[list[str]] = _kept("sb_gpus", url.DEFAULTS["gpus"])
MIN_GPU_GB: Key[float] = _kept("sb_min_gpu_gb", url.DEFAULTS["min_gpu_gb"])
GPUS_PER_VM: Key[int] = _kept("sb_gpus_per_vm", url.DEFAULTS["gpus_per_vm"])

# ----------------------------------------------------------------------------- URL

#: Warnings about URL values that could not be used (shown until dismissed).
URL_WARNINGS: Key[list[str]] = Key("url_warnings", [])
#: URL warning text -> (its parameter, the URL text of the value used in its place): the
#: warning goes when the value changes (:func:`dashboard.state.current_url_warnings`).
URL_WARNING_VALUES: Key[dict[str, tuple[str, str | None]]] = Key("url_warning_values", {})
#: The page a shared link names, opened once (then popped).
URL_PAGE: Key[str | None] = Key("url_page", None)

#: Number input key -> why its last typed value was refused (shown next to it, see
#: :mod:`dashboard.typed_inputs`).
TYPED_REFUSED: Key[dict[str, str]] = Key("typed_refused", {})
#: Number input key -> the value in use (what a refused typed value is put back to).
TYPED_ACCEPTED: Key[dict[str, Any]] = Key("typed_accepted", {})

# ----------------------------------------------------------------------------- catalogs

#: Catalog id -> catalog uploaded in this session.
UPLOADS: Key[dict[str, Catalog]] = Key("uploads", {})
#: Catalog id -> the user's last valid edit of it (the active catalog of every page).
EDITS: Key[dict[str, Catalog]] = Key("edits", {})
#: Catalog id -> how many problems the editor's draft of it has.
INVALID_DRAFTS: Key[dict[str, int]] = Key("invalid_drafts", {})
#: Catalog id -> the catalog editor's draft tables (DataFrames by table key).
EDITOR_DRAFTS: Key[dict[str, dict[str, Any]]] = Key("ce_drafts", {})
#: The editor's open session (catalog id, widget version, frames), or None.
EDITOR_SESSION: Key[dict[str, Any] | None] = Key("ce_session", None)
#: The editor's widget version: bumped per session so that a widget key is never reused.
EDITOR_VERSION: Key[int] = Key("ce_version", 0)
#: A message of the editor for the next run: (kind, text), or None.
EDITOR_NOTICE: Key[tuple[str, str] | None] = Key("ce_notice", None)
#: The last upload that failed validation: (file name, problems), or None.
EDITOR_UPLOAD_PROBLEMS: Key[tuple[str, tuple[Problem, ...]] | None] = Key(
    "ce_upload_problems", None)
#: The "Save as" name field.
EDITOR_SAVE_NAME: Key[str] = Key("ce_save_name", "")

# ----------------------------------------------------------------------------- Plan a job

#: The job's inputs, by URL name (``plan_<name>``, the keys of the Plan page's widgets).
PLAN: dict[str, Key[Any]] = {p.name: _kept(p.key, p.default) for p in url_plan.PLAN_PARAMS}
#: A job is set (the Plan page was opened, or a link holds one): Recommend shows its cost.
PLAN_ACTIVE: Key[bool] = Key("plan_active", False)
#: GPU type name -> MTBI hours the user typed (before the scale).
PLAN_MTBI: Key[dict[str, float]] = Key("plan_mtbi", {})
#: Why the MTBI table's last refused cells were refused (shown until the next edit).
PLAN_MTBI_REFUSED: Key[list[str]] = Key("plan_mtbi_refused", [])
#: The MTBI table's widget version: bumped to show the values in use after a refusal.
PLAN_MTBI_VERSION: Key[int] = Key("plan_mtbi_version", 0)
#: The uploaded measurements CSV: (file name, text), or None for the bundled one.
PLAN_MEASUREMENTS: Key[tuple[str, str] | None] = Key("plan_measurements", None)
#: The upload whose untrusted scaling fits the user confirmed (the plan uses its rows only
#: then: :func:`deepvm_core.hardware.coverage.combine_measurements`), or None.
PLAN_MEASUREMENTS_CONFIRMED: Key[tuple[str, str] | None] = Key("plan_measurements_confirmed",
                                                                None)
#: Calibrate relative eFLOPS from the one-node times too.
PLAN_CALIBRATE_EFLOPS: Key[bool] = Key("plan_cal_eflops", False)

# ----------------------------------------------------------------------------- Spot markets

#: Trace file (relative to the per-user traces folder) -> its pool ``TYPE@ZONE`` ("" unused);
#: the pools the planner replays on every page (``pools`` in the URL).
SPOT_POOLS: Key[dict[str, str]] = Key("spot_pools", {})
#: The planner's recovery policy on those pools (``recovery`` in the URL).
SPOT_RECOVERY: Key[str] = _kept("spot_recovery", url_spot.SPOT_DEFAULTS["recovery"])
#: The page's deadline for the policy backtests, hours; 0: 1.5 x compute hours.
SPOT_DEADLINE: Key[float] = _kept("spot_deadline_h", url_spot.SPOT_DEFAULTS["spot_deadline"])
#: Start times of the page's backtests.
SPOT_STARTS: Key[int] = _kept("spot_starts", url_spot.SPOT_DEFAULTS["starts"])
#: Messages about uploads and pools that could not be used (shown until the next change).
SPOT_ERRORS: Key[list[str]] = Key("spot_errors", [])
#: Upload widget version (bumped after each upload so the widget starts empty).
SPOT_UPLOAD_VERSION: Key[int] = Key("spot_upload_version", 0)
#: Why the last "Fetch the public traces" failed, or None.
SPOT_FETCH_ERROR: Key[str | None] = Key("spot_fetch_error", None)
#: What the last successful fetch did, to say once after the page reloads; or None.
SPOT_FETCH_NOTICE: Key[str | None] = Key("spot_fetch_notice", None)

# ----------------------------------------------------------------------------- Recommend

#: Which of the top-k the card shows and the export marks chosen (0-based).
REC_CHOSEN: Key[int] = Key("rec_chosen", 0)

# ----------------------------------------------------------------------------- Instances

#: The scaling charts' largest n (starts at 64 on each visit).
INSTANCES_N_MAX: Key[int] = Key("inst_n_max", 64)
#: The filters (in the page's URL, :mod:`dashboard.instance_filters`): GPU models, instance
#: families, how many types are shown, and "show all".
INSTANCES_MODELS: Key[list[str]] = _kept("inst_models", [])
INSTANCES_FAMILIES: Key[list[str]] = _kept("inst_families", [])
INSTANCES_SHOWN: Key[int] = _kept("inst_shown", 12)
INSTANCES_ALL: Key[bool] = _kept("inst_all", False)

# ----------------------------------------------------------------------------- Simulate

SWEEP_RANGE: Key[tuple[float, float]] = _kept(
    "sim_pw_range", (url.DEFAULTS["sweep_from"], url.DEFAULTS["sweep_to"]))
SWEEP_STEP: Key[float] = _kept("sim_pw_step", url.DEFAULTS["sweep_step"])
SWEEP_NORMALISED: Key[bool] = _kept("sim_normalised", True)

# ----------------------------------------------------------------------------- Live prices

LIVE_REGIONS: Key[list[str]] = _kept("lp_regions", ["us-east-1"])
LIVE_MORE_REGIONS: Key[str] = _kept("lp_more_regions", "")
LIVE_TYPES: Key[str] = _kept("lp_types", "")
LIVE_SPOT: Key[SpotAggregate] = _kept("lp_spot", "min")
LIVE_PROFILE: Key[str] = _kept("lp_profile", "")
LIVE_ATTEMPTS: Key[int] = _kept("lp_attempts", DEFAULT_MAX_ATTEMPTS)
#: The region whose fetch result is shown (the first again when the page is left).
LIVE_VIEW_REGION: Key[str | None] = Key("lp_view_region", None)
#: This session's last successful fetch (a :class:`dashboard.catalog_state.LastFetch`), or None.
LAST_FETCH: Key[Any] = Key("last_fetch", None)
#: The last fetch's failure: (message, FetchError kind or None), or None.
LIVE_ERROR: Key[tuple[str, str | None] | None] = Key("lp_error", None)
#: The fetched catalog just made active, to announce once; or None.
LIVE_NOTICE: Key[str | None] = Key("lp_notice", None)
#: A region whose catalog a card's "Refresh prices" asked Live prices to rebuild from
#: SkyPilot's public catalog on arrival (:mod:`dashboard.skypilot_view`), or None.
SKY_AUTOSTART: Key[str | None] = Key("lp_sky_autostart", None)
#: The last SkyPilot refresh's failure: (message, FetchError kind or None), or None.
SKY_ERROR: Key[tuple[str, str | None] | None] = Key("lp_sky_error", None)

# ----------------------------------------------------------------------------- Regions

REGION_CATALOGS: Key[list[str]] = _kept("rg_catalogs", [])
#: The fetch (its time, None for none) the selection was last seeded for; "never" at first.
REGION_SEEDED_FOR: Key[Any] = Key("rg_seeded_for", "never")


def _registry() -> tuple[Key[Any], ...]:
    keys = [v for v in globals().values() if isinstance(v, Key)]
    keys += [*NUMBERS.values(), *SLIDERS.values(), *PLAN.values()]
    unique = {k.name: k for k in keys}
    return tuple(unique.values())


#: Every registered key, once.
REGISTRY: tuple[Key[Any], ...] = _registry()
NAMES = frozenset(k.name for k in REGISTRY)


def init() -> None:
    """Give the session every registered key it lacks, at its default."""
    ss = st.session_state
    for key in REGISTRY:
        if key.name not in ss:
            ss[key.name] = key.initial()
