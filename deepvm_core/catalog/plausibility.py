"""Catalog values that are valid but look like typos (issue 20, item 7): warnings, never errors.

A catalog that passes validation can still hold a slip of the keyboard (a spot price typed as
45 instead of 0.45). :func:`plausibility_warnings` names, as :class:`Problem` warnings:

* a spot price above the type's on-demand price (spot is the discounted market);
* a price that changed by :data:`PRICE_CHANGE_FACTOR` or more against the catalog it came from
  (``base``): ``new / old >= 10`` or ``<= 1/10``;
* a GPU type whose eFLOPS per spot USD/hour, ``eflops / spot``, is more than
  :data:`EFLOPS_PER_USD_FACTOR` times outside the range ``[lo, hi]`` of the reference types
  (``base``'s GPU types, else the catalog's other GPU types): ``value > 10 hi`` or
  ``value < lo / 10``.

The catalog editor shows them under "Valid" and ``deepvm catalog validate`` prints them (no
``base`` there: the first and the last rule).
"""

from __future__ import annotations

from typing import Final

import numpy as np

from deepvm_core.catalog.catalog import Catalog
from deepvm_core.catalog.types import GpuType, InstanceType
from deepvm_core.errors import Problem

#: A price this many times higher or lower than in the base catalog is named.
PRICE_CHANGE_FACTOR: Final = 10.0
#: eFLOPS per spot USD this many times outside the reference range is named.
EFLOPS_PER_USD_FACTOR: Final = 10.0
_PRICES = ("on_demand_usd_per_hour", "spot_usd_per_hour")


def _types(catalog: Catalog) -> tuple[InstanceType, ...]:
    return (*catalog.gpu_types, *catalog.cpu_types)


def _spot_above_on_demand(catalog: Catalog) -> list[Problem]:
    types = _types(catalog)
    spot = np.array([t.spot_usd_per_hour for t in types], dtype=np.float64)
    on_demand = np.array([t.on_demand_usd_per_hour for t in types], dtype=np.float64)
    return [Problem(types[i].name, "spot_usd_per_hour", float(spot[i]),
                    f"is above the on-demand price {on_demand[i]:g} USD/hour (spot is normally "
                    "cheaper): a typo?")
            for i in np.flatnonzero(spot > on_demand)]


def _price_changes(catalog: Catalog, base: Catalog) -> list[Problem]:
    old_by_name = {t.name: t for t in _types(base)}
    pairs = [(t, old_by_name[t.name]) for t in _types(catalog) if t.name in old_by_name]
    out: list[Problem] = []
    for field in _PRICES:
        new = np.array([getattr(t, field) for t, _ in pairs], dtype=np.float64)
        old = np.array([getattr(o, field) for _, o in pairs], dtype=np.float64)
        ratio = new / old
        far = (ratio >= PRICE_CHANGE_FACTOR) | (ratio <= 1.0 / PRICE_CHANGE_FACTOR)
        out += [Problem(pairs[i][0].name, field, float(new[i]),
                        f"is {ratio[i]:.3g}x the {old[i]:g} USD/hour of {base.name}: a typo?")
                for i in np.flatnonzero(far)]
    return out


def _eflops_per_usd(gpus: tuple[GpuType, ...]) -> tuple[list[GpuType], np.ndarray]:
    rated = [g for g in gpus if g.eflops is not None]
    values = np.array([float(g.eflops or 0.0) / g.spot_usd_per_hour for g in rated],
                      dtype=np.float64)
    return rated, values


def _eflops_outliers(catalog: Catalog, base: Catalog | None) -> list[Problem]:
    rated, values = _eflops_per_usd(catalog.gpu_types)
    out: list[Problem] = []
    if base is not None:
        _, reference = _eflops_per_usd(base.gpu_types)
        if reference.size == 0:
            return out
        lows = np.full(values.shape, reference.min())
        highs = np.full(values.shape, reference.max())
        where = f"{base.name}'s"
    else:  # each type against the others
        if values.size < 2:
            return out
        others = np.where(np.eye(values.size, dtype=bool), np.nan, values[np.newaxis, :])
        lows, highs = np.nanmin(others, axis=1), np.nanmax(others, axis=1)
        where = "the other types'"
    far = (values > EFLOPS_PER_USD_FACTOR * highs) | (values < lows / EFLOPS_PER_USD_FACTOR)
    return [Problem(rated[i].name, "eflops", rated[i].eflops,
                    f"gives {values[i]:.4g} eFLOPS per spot USD/hour, far outside "
                    f"{where} {lows[i]:.4g}..{highs[i]:.4g}: check its eFLOPS and prices")
            for i in np.flatnonzero(far)]


def plausibility_warnings(catalog: Catalog, base: Catalog | None = None
                          ) -> tuple[Problem, ...]:
    """Valid values of ``catalog`` that look like typos (rules in the module docstring),
    against ``base``, the catalog it was edited from, when given."""
    out = _spot_above_on_demand(catalog)
    if base is not None:
        out += _price_changes(catalog, base)
    out += _eflops_outliers(catalog, base)
    return tuple(out)
