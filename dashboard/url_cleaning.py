"""A URL cleaned before it is read: one value per parameter the app reads. Pure (no Streamlit).

A parameter the app does not know is reported once and dropped, a repeated one keeps its last
usable value (the others are reported and dropped); a refused value is echoed cut to
:data:`~dashboard.url_warnings.ECHO_CHARS` characters. Whether a value is usable is asked of
its page's codec (:mod:`dashboard.url`, :mod:`dashboard.url_plan`, :mod:`dashboard.url_spot`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

from dashboard.url import DEFAULTS, EDITED_PARAM, parse_query_params
from dashboard.url_plan import (
    MTBI_PARAM,
    PLAN_PARAM_BY_NAME,
    PLAN_PARAMS,
    parse_mtbi,
    parse_plan_params,
)
from dashboard.url_spot import SPOT_PARAMS, parse_spot_params
from dashboard.url_warnings import UrlWarning, echo

#: The Instances page's filters (:mod:`dashboard.instance_filters` reads and writes them).
INSTANCE_PARAMS = ("gpu_models", "families", "shown", "show_all")
#: Every parameter the app reads (the scenario's, the Simulate sweep's, the job's, the
#: Instances and Spot markets pages').
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

