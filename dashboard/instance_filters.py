"""The Instances page's filters: GPU model, instance family, and how many types are shown.

A catalog of today lists 50 GPU types, so the page shows the best ``shown`` (by spot FLOPP)
of the types that pass the filters, or all of them. The filters are in the page's URL (only
there, and only when not at their defaults), like the Simulate page's sweep:

* ``gpu_models``: accelerator models, comma-separated (``A100,H100``; :func:`model_of`);
* ``families``: instance families, comma-separated (``g5,p4d``; :func:`family_of`);
* ``shown``: how many types the tables and charts show (1..:data:`SHOWN_RANGE`'s high);
* ``show_all``: ``on`` shows every type that passes the filters in the table (the charts keep
  at most :data:`CHART_TYPES` bars and :data:`SCALING_LINES` curves: readable).

A model or family that the active catalog does not have is dropped when the page is drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from dashboard import keys, url_cleaning, url_warnings
from deepvm_core.hardware.accelerators import accelerator_of_instance

#: Most bars of the FLOPP chart and most curves of the scaling charts (readable at a glance).
CHART_TYPES = 30
SCALING_LINES = 10
SHOWN_RANGE = (1, 1000)
#: The model of a type the accelerator table does not know (the simulated catalog's ``A``).
OTHER = "other"
PARAMS = url_cleaning.INSTANCE_PARAMS
_KEYS: dict[str, keys.Key[Any]] = {
    "gpu_models": keys.INSTANCES_MODELS, "families": keys.INSTANCES_FAMILIES,
    "shown": keys.INSTANCES_SHOWN, "show_all": keys.INSTANCES_ALL}
DEFAULTS: dict[str, Any] = {name: key.default for name, key in _KEYS.items()}
_TRUE, _FALSE = {"1", "true", "on", "yes"}, {"0", "false", "off", "no"}


def model_of(instance_type: str) -> str:
    """The accelerator model of an instance type (``p4d.24xlarge`` -> ``A100``), else
    :data:`OTHER`."""
    acc = accelerator_of_instance(instance_type)
    return OTHER if acc is None else acc.name


def family_of(instance_type: str) -> str:
    """The instance family: the name before its first ``.`` (``p4d.24xlarge`` -> ``p4d``)."""
    return instance_type.partition(".")[0]


def parse(params: Mapping[str, str | list[str]]
          ) -> tuple[dict[str, Any], list[url_warnings.UrlWarning]]:
    """The filters a URL asks for, and a warning per value that cannot be used."""
    values: dict[str, Any] = {}
    warnings: list[url_warnings.UrlWarning] = []
    for name in PARAMS:
        if name not in params:
            continue
        raw = params[name]
        text = str((raw[-1] if raw else "") if isinstance(raw, list) else raw).strip()
        if name in ("gpu_models", "families"):
            values[name] = [v.strip() for v in text.split(",") if v.strip()]
        elif name == "show_all":
            if text.lower() in _TRUE | _FALSE:
                values[name] = text.lower() in _TRUE
            else:
                warnings.append(url_warnings.UrlWarning(
                    name, f"URL parameter show_all={url_warnings.echo(text)} is not on or off; "
                          "using the default off."))
        else:
            low, high = SHOWN_RANGE
            try:
                number = int(text)
            except ValueError:
                number = low - 1
            if low <= number <= high:
                values[name] = number
            else:
                warnings.append(url_warnings.UrlWarning(
                    name, f"URL parameter shown={url_warnings.echo(text)} is not a whole number in "
                          f"{low}..{high}; using the default {DEFAULTS['shown']}."))
    return values, warnings


def format_param(name: str, value: Any) -> str:
    """How filter ``name`` is written in the URL."""
    if name in ("gpu_models", "families"):
        return ",".join(value)
    if name == "show_all":
        return "on" if value else "off"
    return str(int(value))


def seed(params: Mapping[str, str | list[str]]) -> list[url_warnings.UrlWarning]:
    """Set the filters' keys from a URL (a session's first run); returns the warnings."""
    values, warnings = parse(params)
    for name, value in values.items():
        _KEYS[name].set(value)
    return warnings


def wanted(page: str) -> dict[str, str]:
    """The filters' URL parameters: on the Instances page those not at their defaults, none
    elsewhere (:func:`dashboard.state.wanted_params` adds them)."""
    if page != "instances":
        return {}
    return {name: format_param(name, _KEYS[name].get()) for name in PARAMS
            if _KEYS[name].get() != DEFAULTS[name]}


def select(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """The filter widgets for GPU types ``names`` (best first); returns the names that pass
    the filters, and the names shown (the best ``shown`` of them, or all)."""
    models = sorted({model_of(n) for n in names})
    families = sorted({family_of(n) for n in names})
    # values the catalog does not have (another catalog's, a link's) would break the widgets
    keys.INSTANCES_MODELS.set([m for m in keys.INSTANCES_MODELS.get() if m in models])
    keys.INSTANCES_FAMILIES.set([f for f in keys.INSTANCES_FAMILIES.get() if f in families])
    left, middle, count, every = st.columns([0.32, 0.32, 0.18, 0.18], vertical_alignment="bottom")
    left.multiselect("GPU model", models, key=keys.INSTANCES_MODELS.name,
                     persist_state=keys.PERSIST, placeholder="All models",
                     help="The accelerator of each type (data/accelerators.csv).")
    middle.multiselect("Instance family", families, key=keys.INSTANCES_FAMILIES.name,
                       persist_state=keys.PERSIST, placeholder="All families",
                       help="The part of the name before the dot (g5, p4d, ...).")
    count.number_input("Types shown", *SHOWN_RANGE, step=1, key=keys.INSTANCES_SHOWN.name,
                       persist_state=keys.PERSIST, disabled=keys.INSTANCES_ALL.get(),
                       help="The best types by spot FLOPP among those that pass the filters.")
    every.toggle("Show all", key=keys.INSTANCES_ALL.name, persist_state=keys.PERSIST,
                 help=f"Every type in the table; the charts keep the best {CHART_TYPES} bars "
                      f"and {SCALING_LINES} curves.")
    chosen_models = set(keys.INSTANCES_MODELS.get())
    chosen_families = set(keys.INSTANCES_FAMILIES.get())
    passing = [n for n in names
               if (not chosen_models or model_of(n) in chosen_models)
               and (not chosen_families or family_of(n) in chosen_families)]
    shown = passing if keys.INSTANCES_ALL.get() else passing[:int(keys.INSTANCES_SHOWN.get())]
    return passing, shown
