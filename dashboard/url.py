"""The dashboard's URL: its pages and the scenario's query parameters, and their codec.

Pure (no Streamlit): :func:`parse_query_params` reads ``st.query_params.to_dict()`` into
scenario values, :func:`format_param` writes one value back. :mod:`state` applies them to the
session.

A page's slug is both its URL path (``/simulate``) and the value of the ``page`` parameter
(``/?page=simulate``, which the root URL honours). The path wins: ``/simulate?page=plan``
shows Simulate, and the rewritten URL says ``page=simulate``.

A URL is cleaned before it is read (:func:`single_values`): a parameter the app does not know
is reported once and dropped, a repeated one keeps its last usable value (the others are
reported and dropped). A refused value is echoed cut to :data:`ECHO_CHARS` characters.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from dashboard.url_spot import SPOT_PARAMS, parse_spot_params
from dashboard.url_warnings import UrlWarning, echo
from deepvm_core.catalog import store
from deepvm_core.defaults import field_default
from deepvm_core.errors import WorkloadError
from deepvm_core.job.montecarlo import DEFAULT_TRIALS
from deepvm_core.job.objectives import DEFAULT_GOAL
from deepvm_core.model import DEFAULT_OBJECTIVE, MAX_NODES, OBJECTIVES, Scenario
from deepvm_core.pipeline.plan import DEFAULT_SEED, GOALS
from deepvm_core.recommend.recommendation import DEFAULT_SOLVER, DEFAULT_TOP_K, SOLVERS
from deepvm_core.recommend.recommendation import TOP_K_RANGE as CORE_TOP_K_RANGE
from deepvm_core.recommend.sweep import FIG3_PW_GRID
from deepvm_core.units import MINUTES_PER_HOUR
from deepvm_core.workload.speedup import SPEEDUP_MODELS, SpeedupModel
from deepvm_core.workload.workload import EXAMPLE_EPOCH_SECONDS, EXAMPLE_EPOCHS, Workload

DEFAULT_CATALOG = store.DEFAULT_CATALOG
@dataclass(frozen=True)
class PageSpec:
    """One page: slug (URL path), title, script (relative to ``dashboard/``) and icon."""

    slug: str
    title: str
    file: str
    icon: str


PAGES = (
    PageSpec("recommend", "Recommend", "views/recommend.py", ":material/recommend:"),
    PageSpec("plan", "Plan a job", "views/plan.py", ":material/schedule:"),
    PageSpec("instances", "Instances", "views/instances.py", ":material/memory:"),
    PageSpec("catalog", "Catalog editor", "views/catalog_editor.py", ":material/edit_note:"),
    PageSpec("simulate", "Simulate", "views/simulate.py", ":material/show_chart:"),
    PageSpec("live", "Live prices", "views/live_prices.py", ":material/cloud_download:"),
    PageSpec("regions", "Regions", "views/regions.py", ":material/public:"),
    PageSpec("spot", "Spot markets", "views/spot_markets.py", ":material/ssid_chart:"),
    PageSpec("method", "Method", "views/method.py", ":material/menu_book:"),
)
PAGE_BY_SLUG = {p.slug: p for p in PAGES}


def unknown_path(app_url: str | None, base_path: str = "") -> str | None:
    """The path of ``app_url`` (``st.context.url`` of the root page) when it names no page,
    else ``None``: ``http://host/nonexistent`` -> ``/nonexistent``; the root URL (under the
    server's ``base_path``) and the pages' own paths are known."""
    if not app_url:
        return None
    path = "/" + app_url.split("://", 1)[-1].partition("/")[2].strip("/")
    base = "/" + base_path.strip("/")
    rest = path.removeprefix(base) if path == base or path.startswith(base.rstrip("/") + "/") \
        else path
    rest = rest.strip("/")
    return None if rest in ("", "root", *PAGE_BY_SLUG) else "/" + rest
PAGE_SLUGS = tuple(PAGE_BY_SLUG)
DEFAULT_PAGE = "recommend"


@dataclass(frozen=True, kw_only=True)
class NumberControl:
    """A number of the scenario: its URL parameter, bounds and default, and the sidebar's
    number input and slider for it (kept in sync).

    ``sb_<name>`` is the number input's key and holds the value; ``sb_<name>_slider`` is the
    slider's; ``<name>`` is also the URL parameter. The number input (and the URL) accept
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

    @property
    def slider_key(self) -> str:
        return f"sb_{self.name}_slider"

    def slider_range(self, value: float) -> tuple[float, float]:
        """The slider's bounds for ``value``: the default span, stretched to hold it."""
        return self.slider_low, max(self.slider_high, float(math.ceil(value)))

    def slider_value(self, value: float) -> float:
        low, high = self.slider_range(value)
        return min(max(value, low), high)


#: The paper's Table IV asks at PW 3 USD/hour.
TABLE_IV_PW_USD_PER_HOUR = 3.0
#: The sidebar's scenario numbers. PW has no core default (it is the user's question); the
#: sidebar starts at Table IV's 3 USD/hour.
DEFAULT_PW_USD_PER_HOUR = TABLE_IV_PW_USD_PER_HOUR
CONTROLS = (
    NumberControl(name="pw", label="PW: pricing willingness (USD/hour)",
                  help="The most you pay per hour for the whole cluster.",
                  default=DEFAULT_PW_USD_PER_HOUR, low=0.0, high=1000.0,
                  slider_low=0.0, slider_high=20.0, slider_step=0.05, input_step=0.01,
                  fmt="%.2f"),
    NumberControl(name="ckpt", label="Checkpoint size (GB)",
                  help="Size f of one checkpoint of the model being trained, in GB (10^9 "
                       "bytes).",
                  default=field_default(Scenario, "checkpoint_gb"), low=0.01, high=10000.0,
                  slider_low=0.05, slider_high=20.0, slider_step=0.05, input_step=0.05,
                  fmt="%.2f"),
    NumberControl(name="buffer", label="Buffer (checkpoints per memory node)",
                  help="How many checkpoints one Tiering memory node keeps in RAM (may be "
                       "fractional).",
                  default=field_default(Scenario, "buffer_checkpoints"), low=0.1, high=1000.0,
                  slider_low=0.5, slider_high=16.0, slider_step=0.5, input_step=0.1,
                  fmt="%.1f"),
)
CONTROL_BY_NAME = {c.name: c for c in CONTROLS}
#: The paper's scenario (Table IV): its catalog, PW 3 USD/hour and its objective Z. The
#: sidebar's "Paper's scenario" button sets these (the other controls keep their values).
PAPER_SCENARIO: dict[str, Any] = {"catalog": store.PAPER_CATALOG,
                                  "pw": TABLE_IV_PW_USD_PER_HOUR, "objective": "paper"}
TOP_K_RANGE = CORE_TOP_K_RANGE  # what recommend accepts (deepvm_core.recommend.recommendation)
NODE_CAP_RANGE = (1, MAX_NODES)  # the core's cap (deepvm_core.model)

#: The Simulate page's PW sweep (USD/hour): the slider's span and the step's bounds. Its
#: parameters are in the URL of that page only, and only when not at their defaults.
SWEEP_SPAN = (0.0, 50.0)
SWEEP_STEP_RANGE = (0.01, 10.0)
SWEEP_PARAMS = ("sweep_from", "sweep_to", "sweep_step")

DEFAULTS: dict[str, Any] = {
    **{c.name: c.default for c in CONTROLS},
    "catalog": DEFAULT_CATALOG,
    "objective": DEFAULT_OBJECTIVE,  # the core's (speed); Scenario's own field default is paper
    "quotas": field_default(Scenario, "use_quotas"),
    "top": DEFAULT_TOP_K,
    "nodes": field_default(Scenario, "max_nodes"),
    "solver": DEFAULT_SOLVER,
    "page": DEFAULT_PAGE,
    **dict(zip(("sweep_from", "sweep_to", "sweep_step"), FIG3_PW_GRID, strict=True)),
    "presentation": False,
}
#: Parameters the URL holds only when they are not at their defaults.
OPTIONAL_PARAMS = ("presentation", *SWEEP_PARAMS)
_BOUNDS: dict[str, tuple[float, float]] = {
    **{c.name: (c.low, c.high) for c in CONTROLS},
    "sweep_from": SWEEP_SPAN, "sweep_to": SWEEP_SPAN, "sweep_step": SWEEP_STEP_RANGE,
}
_CHOICES: dict[str, tuple[str, ...]] = {
    "objective": OBJECTIVES, "solver": SOLVERS, "page": PAGE_SLUGS}
_TRUE = {"1", "true", "on", "yes"}
_FALSE = {"0", "false", "off", "no"}


def parse_query_params(
    params: Mapping[str, str | list[str]], catalog_ids: Collection[str]
) -> tuple[dict[str, Any], list[UrlWarning]]:
    """The scenario values a URL asks for, and a warning per value that cannot be used.

    ``params`` is ``st.query_params.to_dict()`` (or :func:`single_values`' first result);
    unknown parameters are ignored here (:func:`single_values` reports them).
    """
    values: dict[str, Any] = {}
    warnings: list[UrlWarning] = []

    def reject(key: str, raw: str, why: str) -> None:
        warnings.append(UrlWarning(key, f"URL parameter {key}={echo(raw)} {why}; using the "
                                        f"default {format_param(key, DEFAULTS[key])}."))

    for key, raw in params.items():
        text = (raw[-1] if isinstance(raw, list) and raw else raw) if raw is not None else ""
        text = str(text).strip()
        if key in _BOUNDS:
            low, high = _BOUNDS[key]
            try:
                number = float(text)
            except ValueError:
                reject(key, text, "is not a number")
                continue
            if not math.isfinite(number):
                reject(key, text, "is not a finite number")
                continue
            if not low <= number <= high:
                reject(key, text, f"is outside {low:g}..{high:g}")
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
        elif key in ("quotas", "presentation"):
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
    start = values.get("sweep_from", DEFAULTS["sweep_from"])
    stop = values.get("sweep_to", DEFAULTS["sweep_to"])
    if start > stop:
        key = "sweep_to" if "sweep_to" in values else "sweep_from"
        reject(key, format_param(key, values.pop(key)),
               f"leaves the sweep empty (from {start:g} to {stop:g})")
    return values, warnings


def format_param(key: str, value: Any) -> str:
    """How ``value`` is written in the URL."""
    if key in ("quotas", "presentation"):
        return "on" if value else "off"
    if key in _BOUNDS:
        return f"{float(value):g}"
    return str(value)


# ----------------------------------------------------------------------------- Plan a job


@dataclass(frozen=True)
class PlanParam:
    """One input of the Plan a job page: URL parameter, kind, default and bounds.

    ``kind`` is ``float``, ``int``, ``choice`` (``choices``), ``bool`` or ``text`` (a GPU type
    name, checked against the catalog by the page). The URL holds it on that page only, and
    only when it is not at its default; the session key is ``plan_<name>``.
    """

    name: str
    kind: str
    default: Any
    low: float = 0.0
    high: float = math.inf
    choices: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"plan_{self.name}"


#: ``wait_min`` when W is each GPU type's Spot Advisor bucket default (``Workload.wait_hours``
#: None): a number input needs a number.
BUCKET_WAIT_MIN = -1.0

PLAN_PARAMS = (
    PlanParam("epochs", "float", EXAMPLE_EPOCHS, 1e-6, 1e7),  # the bundled ResNet-50 job
    PlanParam("epoch_s", "float", EXAMPLE_EPOCH_SECONDS, 1e-6, 1e7),
    PlanParam("ref", "text", ""),  # "": Workload.reference_gpu None (top spot-FLOPP type)
    PlanParam("ref_nodes", "int", field_default(Workload, "reference_nodes"), 1, 100_000),
    PlanParam("speedup", "choice", field_default(SpeedupModel, "name"), choices=SPEEDUP_MODELS),
    PlanParam("ckpt_every", "int", field_default(Workload, "checkpoint_every_epochs"), 0,
              1_000_000),  # 0: auto (Daly)
    # R, W and δ0 have no upper bound here: the core's Workload bounds them and the page shows
    # its message naming the bound, with the value kept in the URL (issue 16).
    PlanParam("restart_min", "float", field_default(Workload, "restart_hours") * MINUTES_PER_HOUR,
              0.0),
    # W: the core's None (each type's bucket default) is BUCKET_WAIT_MIN here (issue 25)
    PlanParam("wait_min", "float", BUCKET_WAIT_MIN if field_default(Workload, "wait_hours") is None
              else field_default(Workload, "wait_hours") * MINUTES_PER_HOUR, BUCKET_WAIT_MIN),
    PlanParam("disk_gbps", "float", field_default(Workload, "disk_gb_per_second"), 1e-6,
              1_000.0),
    PlanParam("ckpt_fixed_s", "float", field_default(Workload, "checkpoint_fixed_seconds"), 0.0),
    PlanParam("mtbi_scale", "float", field_default(Workload, "mtbi_scale"), 0.25, 4.0),
    PlanParam("goal", "choice", DEFAULT_GOAL, choices=GOALS),
    PlanParam("deadline_h", "float", 0.0, 0.0, 1e6),  # 0: none (plan_job's None)
    PlanParam("budget_usd", "float", 0.0, 0.0, 1e9),  # 0: none (plan_job's None)
    PlanParam("trials", "int", DEFAULT_TRIALS, 0, 100_000),
    PlanParam("seed", "int", DEFAULT_SEED, 0, 2**31 - 1),
    PlanParam("pw_off", "bool", False),  # plan_job's pw_usd_per_hour=None
)
PLAN_PARAM_BY_NAME = {p.name: p for p in PLAN_PARAMS}
#: The key of the active catalog's edit (kept on the server by sha256, like an upload); in the
#: URL whenever the active catalog is edited.
EDITED_PARAM = "edited"
#: The user's MTBI per GPU type (``name:hours,name:hours``, hours before the scale); like the
#: job's inputs, in the URL once a job is set and when not empty.
MTBI_PARAM = "mtbi"


def format_mtbi_hours(hours: float) -> str:
    """An MTBI as the table and the URL write it: the shortest text that reads back as the
    same float (``19``, ``1e-09``, ``0.35``)."""
    text = repr(float(hours))
    return text.removesuffix(".0") if "e" not in text else text


def mtbi_refusal(name: str, text: str) -> str | None:
    """Why ``text`` cannot be the MTBI of GPU type ``name`` (``None``: it can): not a number,
    or refused by the core's rule for ``Workload.mtbi_hours_by_gpu`` (its message)."""
    try:
        hours = float(str(text).strip())
    except ValueError:
        return f"MTBI of {name}: {echo(str(text))} is not a number of hours"
    try:
        Workload(epochs=1.0, reference_epoch_seconds=1.0, mtbi_hours_by_gpu={name: hours})
    except WorkloadError as exc:
        return f"MTBI of {name}: {str(text).strip()} h {exc.problems[0].message}"
    return None


def format_mtbi(overrides: Mapping[str, float]) -> str:
    """The ``mtbi`` parameter of ``overrides`` (GPU type -> hours), by name."""
    return ",".join(f"{name}:{format_mtbi_hours(h)}" for name, h in sorted(overrides.items()))


def parse_mtbi(text: str) -> tuple[dict[str, float], list[UrlWarning]]:
    """The MTBI overrides of an ``mtbi`` parameter, and a warning per entry refused."""
    values: dict[str, float] = {}
    warnings: list[UrlWarning] = []
    for entry in filter(None, (e.strip() for e in text.split(","))):
        name, sep, hours = entry.rpartition(":")
        why = (mtbi_refusal(name.strip(), hours) if sep and name.strip() else
               f"{echo(entry)} is not name:hours")
        if why is None:
            values[name.strip()] = float(hours)
        else:
            warnings.append(UrlWarning(MTBI_PARAM, f"URL parameter {MTBI_PARAM}: {why}; using "
                                                   "the default MTBI for it."))
    return values, warnings


def parse_plan_params(params: Mapping[str, str | list[str]]
                      ) -> tuple[dict[str, Any], list[UrlWarning]]:
    """The Plan page's inputs a URL asks for, and a warning per value that cannot be used."""
    values: dict[str, Any] = {}
    warnings: list[UrlWarning] = []
    for p in PLAN_PARAMS:
        if p.name not in params:
            continue
        raw = params[p.name]
        text = str((raw[-1] if raw else "") if isinstance(raw, list) else raw).strip()

        def reject(why: str, p: PlanParam = p, text: str = text) -> None:
            warnings.append(UrlWarning(
                p.name, f"URL parameter {p.name}={echo(text)} {why}; using the default "
                        f"{format_plan_param(p.name, p.default) or 'none'}."))

        if p.kind == "text":
            values[p.name] = text
        elif p.kind == "bool":
            if text.lower() in _TRUE | _FALSE:
                values[p.name] = text.lower() in _TRUE
            else:
                reject("is not on or off")
        elif p.kind == "choice":
            if text in p.choices:
                values[p.name] = text
            else:
                reject(f"is not one of {', '.join(p.choices)}")
        else:
            try:
                number: float = int(text) if p.kind == "int" else float(text)
            except ValueError:
                reject("is not a whole number" if p.kind == "int" else "is not a number")
                continue
            if not math.isfinite(number):
                reject("is not a finite number")
            elif not p.low <= number <= p.high:
                reject(f"is outside {p.low:g}..{p.high:g}")
            else:
                values[p.name] = number
    return values, warnings


def format_plan_param(name: str, value: Any) -> str:
    """How a Plan page input is written in the URL."""
    p = PLAN_PARAM_BY_NAME[name]
    if p.kind == "bool":
        return "on" if value else "off"
    if p.kind == "float":
        return f"{float(value):g}"
    return str(value)


# ----------------------------------------------------------------------------- cleaning

#: Every parameter the app reads (the scenario's, the Simulate sweep's, the job's).
#: The Instances page's filters (:mod:`dashboard.instance_filters` reads and writes them).
INSTANCE_PARAMS = ("gpu_models", "families", "shown", "show_all")
KNOWN_PARAMS: frozenset[str] = frozenset(
    [*DEFAULTS, *(p.name for p in PLAN_PARAMS), MTBI_PARAM, EDITED_PARAM, *INSTANCE_PARAMS,
     *SPOT_PARAMS])


def usable(key: str, text: str, catalog_ids: Collection[str]) -> bool:
    """Whether ``key=text`` alone is a value the app takes."""
    if key == MTBI_PARAM:
        return not parse_mtbi(text)[1]
    if key == EDITED_PARAM:
        return bool(text)
    if key in PLAN_PARAM_BY_NAME:
        return not parse_plan_params({key: text})[1]
    if key in SPOT_PARAMS:
        return not parse_spot_params({key: text})[1]
    return not parse_query_params({key: text}, catalog_ids)[1]


def single_values(params: Mapping[str, list[str]], catalog_ids: Collection[str],
                  known: Collection[str] = KNOWN_PARAMS,
                  is_usable: Callable[[str, str], bool] | None = None,
                  ) -> tuple[dict[str, str], list[UrlWarning]]:
    """One value per known parameter of a URL (``params``: every value of every parameter,
    in order), and a warning per unknown parameter and per repeated one.

    A repeated parameter keeps its last usable value (its last value when none is usable, so
    that the parsers report it); the warning names the values dropped.
    """
    check = is_usable or (lambda key, text: usable(key, text, catalog_ids))
    single: dict[str, str] = {}
    warnings: list[UrlWarning] = []
    for key, raw in params.items():
        given = [str(v).strip() for v in raw] or [""]
        if key not in known:
            warnings.append(UrlWarning(None, f"URL parameter {echo(key)} is not one this app "
                                             "reads; it was ignored and removed."))
            continue
        if len(given) == 1:
            single[key] = given[0]
            continue
        good = [i for i, v in enumerate(given) if check(key, v)]
        kept = good[-1] if good else len(given) - 1
        single[key] = given[kept]
        bad = [echo(v) for i, v in enumerate(given) if i not in good]
        dropped = [echo(v) for i, v in enumerate(given) if i != kept]
        unusable = f" ({', '.join(bad)} not usable)" if bad and good else ""
        warnings.append(UrlWarning(
            key, f"URL parameter {key} is given {len(given)} times{unusable}; using "
                 f"{echo(given[kept])} and dropping {', '.join(dropped)}."))
    return single, warnings
