"""The Spot markets page's URL parameters and their codec (issue 15): the pools, the recovery
policy, the page's deadline and the number of start times. Pure (no Streamlit)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dashboard.url_warnings import UrlWarning, echo
from deepvm_core.job.backtest import DEFAULT_STARTS, MAX_STARTS, RECOVERY_POLICIES

#: The Spot markets page's parameters. ``pools`` (``TYPE@ZONE=FILE`` joined by ``|``, FILE
#: relative to the per-user traces folder) and ``recovery`` are in the URL on every page once
#: set (the planner uses them everywhere); ``spot_deadline`` (hours, 0: 1.5 x compute hours)
#: and ``starts`` on every page when not at their defaults.
SPOT_DEFAULTS: dict[str, Any] = {"recovery": "failover", "spot_deadline": 0.0,
                                 "starts": DEFAULT_STARTS}
SPOT_PARAMS = ("pools", *SPOT_DEFAULTS)
SPOT_STARTS_RANGE = (1, MAX_STARTS)


def parse_spot_params(params: Mapping[str, str | list[str]]
                      ) -> tuple[dict[str, Any], list[UrlWarning]]:
    """The Spot markets values a URL asks for (``pools`` as file -> pool name), and a warning
    per value that cannot be used (files are checked by the page)."""
    values: dict[str, Any] = {}
    warnings: list[UrlWarning] = []
    for name in SPOT_PARAMS:
        if name not in params:
            continue
        raw = params[name]
        text = str((raw[-1] if raw else "") if isinstance(raw, list) else raw).strip()
        if name == "pools":
            pools: dict[str, str] = {}
            for item in filter(None, text.split("|")):
                pool, sep, rel = item.partition("=")
                gpu, at, zone = pool.partition("@")
                if not sep or not rel.strip() or not at or not gpu.strip() or not zone.strip():
                    warnings.append(UrlWarning(name, f"URL parameter pools: {echo(item)} is "
                                                     "not TYPE@ZONE=FILE; left out."))
                    continue
                pools[rel.strip()] = pool.strip()
            values[name] = pools
        elif name == "recovery":
            if text in RECOVERY_POLICIES:
                values[name] = text
            else:
                warnings.append(UrlWarning(name, f"URL parameter recovery={echo(text)} is not "
                                                 f"one of {', '.join(RECOVERY_POLICIES)}; "
                                                 "using the default failover."))
        else:
            low, high = (0.0, 1e6) if name == "spot_deadline" else SPOT_STARTS_RANGE
            try:
                number: float = float(text) if name == "spot_deadline" else int(text)
            except ValueError:
                number = math.nan
            if not math.isfinite(number) or not low <= number <= high:
                warnings.append(UrlWarning(name, f"URL parameter {name}={echo(text)} is not a "
                                                 f"number in {low:g}..{high:g}; using the "
                                                 f"default {SPOT_DEFAULTS[name]:g}."))
                continue
            values[name] = number
    return values, warnings


def format_spot_pools(pools: Mapping[str, str]) -> str:
    """``pools`` (file -> pool name) as the URL writes it; unused files left out."""
    return "|".join(f"{name}={rel}" for rel, name in pools.items() if name.strip())
