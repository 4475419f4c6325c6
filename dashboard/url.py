"""The dashboard's URL: the scenario's query parameters (the sidebar's, the Simulate page's
sweep, the page) and their codec.

Pure (no Streamlit): :func:`parse_query_params` reads ``st.query_params.to_dict()`` into
scenario values, :func:`format_param` writes one value back. :mod:`dashboard.state` applies
them to the session. The other parameters have codecs of their own: the Plan a job page's
(:mod:`dashboard.url_plan`) and the Spot markets page's (:mod:`dashboard.url_spot`); the pages
and their slugs are :mod:`dashboard.url_pages`'s, and a URL is cleaned to one usable value per
parameter before any of them reads it (:mod:`dashboard.url_cleaning`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from dashboard.url_pages import DEFAULT_PAGE, PAGE_SLUGS
from dashboard.url_warnings import UrlWarning, echo, read_number, read_switch
from deepvm_core.catalog import store
from deepvm_core.catalog.gpu_filter import (
    ANY_GPU,
    MAX_GPU_MEMORY_GB,
    MAX_GPUS_PER_VM,
    GpuFilter,
    split_accelerators,
)
from deepvm_core.defaults import field_default
from deepvm_core.errors import InputError
from deepvm_core.model import DEFAULT_OBJECTIVE, MAX_NODES, OBJECTIVES, Scenario
from deepvm_core.recommend.recommendation import DEFAULT_SOLVER, DEFAULT_TOP_K, SOLVERS
from deepvm_core.recommend.recommendation import TOP_K_RANGE as CORE_TOP_K_RANGE
from deepvm_core.recommend.sweep import FIG3_PW_GRID
from deepvm_core.search.gpu_filter import resolve_gpu_models

DEFAULT_CATALOG = store.DEFAULT_CATALOG


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

#: The scenario's GPU filter in the URL (only when set): ``gpus`` (models, comma-separated,
#: the core's names: :func:`~deepvm_core.search.gpu_filter.resolve_gpu_models`),
#: ``min_gpu_gb`` (GB per GPU; 0: any) and ``gpus_per_vm`` (0: any). Their defaults are the
#: core's filter that admits every type (:data:`~deepvm_core.catalog.gpu_filter.ANY_GPU`).
GPU_FILTER_PARAMS = ("gpus", "min_gpu_gb", "gpus_per_vm")
GPUS_PER_VM_RANGE = (0, MAX_GPUS_PER_VM)

DEFAULTS: dict[str, Any] = {
    **{c.name: c.default for c in CONTROLS},
    "catalog": DEFAULT_CATALOG,
    "objective": DEFAULT_OBJECTIVE,  # the core's (speed), Scenario's field default too
    "quotas": field_default(Scenario, "use_quotas"),
    "top": DEFAULT_TOP_K,
    "nodes": field_default(Scenario, "max_nodes"),
    "solver": DEFAULT_SOLVER,
    "page": DEFAULT_PAGE,
    **dict(zip(("sweep_from", "sweep_to", "sweep_step"), FIG3_PW_GRID, strict=True)),
    "presentation": False,
    "gpus": list(ANY_GPU.accelerators),
    "min_gpu_gb": ANY_GPU.min_gpu_memory_gb or 0.0,
    "gpus_per_vm": ANY_GPU.gpus_per_vm or 0,
}
#: Parameters the URL holds only when they are not at their defaults.
OPTIONAL_PARAMS = ("presentation", *SWEEP_PARAMS, *GPU_FILTER_PARAMS)
_BOUNDS: dict[str, tuple[float, float]] = {
    **{c.name: (c.low, c.high) for c in CONTROLS},
    "sweep_from": SWEEP_SPAN, "sweep_to": SWEEP_SPAN, "sweep_step": SWEEP_STEP_RANGE,
    "min_gpu_gb": (0.0, MAX_GPU_MEMORY_GB),
}
_WHOLE_BOUNDS: dict[str, tuple[int, int]] = {
    "top": TOP_K_RANGE, "nodes": NODE_CAP_RANGE, "gpus_per_vm": GPUS_PER_VM_RANGE}
_CHOICES: dict[str, tuple[str, ...]] = {
    "objective": OBJECTIVES, "solver": SOLVERS, "page": PAGE_SLUGS}
#: The key of the active catalog's edit (kept on the server by sha256, like an upload); in the
#: URL whenever the active catalog is edited.
EDITED_PARAM = "edited"


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
        if key in _BOUNDS or key in _WHOLE_BOUNDS:
            number, why = read_number(text, key in _WHOLE_BOUNDS,
                                      *(_BOUNDS.get(key) or _WHOLE_BOUNDS[key]))
            if number is None:
                reject(key, text, why)
            else:
                values[key] = int(number) if key in _WHOLE_BOUNDS else number
        elif key == "gpus":
            models, problems = parse_gpu_models(text)
            values[key] = models
            warnings.extend(UrlWarning(key, f"URL parameter gpus={echo(text)}: {why}; using "
                                            f"{format_param(key, models) or 'any model'}.")
                            for why in problems)
        elif key in ("quotas", "presentation"):
            switch = read_switch(text)
            if switch is None:
                reject(key, text, "is not on or off")
            else:
                values[key] = switch
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


def parse_gpu_models(text: str) -> tuple[list[str], list[str]]:
    """The models of a URL's ``gpus`` as the core spells them, each once, and why each name
    that is not one was dropped (a count such as ``A100:8``, an unknown name with the close
    known ones)."""
    models: list[str] = []
    problems: list[str] = []
    for name in (part.strip() for part in text.split(",")):
        if not name:
            continue
        try:
            found = resolve_gpu_models(split_accelerators(name))
        except InputError as exc:
            problems.append(f"{echo(name)} {str(exc).partition(': ')[2]}")
            continue
        models += [m for m in found if m not in models]
    return models, problems


def gpu_filter_of(models: list[str], min_gpu_gb: float, gpus_per_vm: int) -> GpuFilter:
    """The core's :class:`GpuFilter` of the sidebar's values (0: any)."""
    return GpuFilter(tuple(models), min_gpu_gb or None, gpus_per_vm or None)


def format_param(key: str, value: Any) -> str:
    """How ``value`` is written in the URL."""
    if key in ("quotas", "presentation"):
        return "on" if value else "off"
    if key == "gpus":
        return ",".join(value)
    if key in _BOUNDS:
        return f"{float(value):g}"
    return str(value)

