"""Catalog values that are valid but look like typos (issue 20, item 7; issue 27, finding 3):
warnings, never errors.

A catalog that passes validation can still hold a slip of the keyboard (a spot price typed as
45 instead of 0.45, an extra zero). :func:`plausibility_warnings` names, as :class:`Problem`
warnings, each against a stated reference:

* a spot price above the type's on-demand price (spot is the discounted market);
* a spot price below :data:`MIN_SPOT_SHARE` (10 %) of the type's on-demand price: AWS sells
  spot at most 90 % below on-demand (the bundled catalogs' deepest discounts are exactly 90 %);
* a value that changed by :data:`PRICE_CHANGE_FACTOR` or more against the catalog it came from
  (``base``): ``new / old >= 10`` or ``<= 1/10``, for the prices, eFLOPS, vCPUs, memory and
  network;
* a GPU type whose eFLOPS per spot USD/hour, ``eflops / spot``, is more than
  :data:`EFLOPS_PER_USD_FACTOR` times outside the range ``[lo, hi]`` of the reference types
  (``base``'s GPU types, else the catalog's other GPU types): ``value > 10 hi`` or
  ``value < lo / 10``;
* vCPUs more than :data:`VCPU_SIZE_FACTOR` (2) times off the size in an AWS name (``large``
  2 vCPUs, ``xlarge`` 4, ``<N>xlarge`` 4N): of the 1,395 EC2 types of EC2's
  DescribeInstanceTypes (moto 5.2.5's copy) none is further off than 2x (hpc7a, m2);
* memory per vCPU more than :data:`SHAPE_FACTOR` (4) times outside the range of the type's
  peers: the other types of its family (the name before the ``.``) in the catalog, else every
  other type of the catalog with memory (a family keeps one GiB per vCPU; across EC2 a
  family's sizes span at most 16x, the burstable t3's nano to xlarge);
* network Gbps ``>= 2x`` or ``<= 1/2`` the figure of ``data/instance-network.csv`` (EC2's
  DescribeInstanceTypes), else more than :data:`SHAPE_FACTOR` times outside its family
  peers' range (only a family: across families it spans 0.3 to 3,200 Gbps).

The eFLOPS of a GPU type against the accelerator table's estimate is a hardware rule
(:func:`deepvm_core.hardware.typos.typo_warnings`, which adds it to these). The catalog editor
shows them under "Valid", ``deepvm catalog validate`` and ``deepvm catalog import`` print them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

import numpy as np

from deepvm_core.bundled import NETWORK_TABLE, bundled_network_gbps
from deepvm_core.catalog.catalog import Catalog
from deepvm_core.catalog.types import GpuType, InstanceType
from deepvm_core.errors import Problem

#: A price this many times higher or lower than in the base catalog is named.
PRICE_CHANGE_FACTOR: Final = 10.0
#: eFLOPS per spot USD this many times outside the reference range is named.
EFLOPS_PER_USD_FACTOR: Final = 10.0
#: The least share of its on-demand price a spot price can be: AWS's deepest spot discount is
#: 90 %. A share below it (with :data:`_ROUNDING` for rounded prices) is named.
MIN_SPOT_SHARE: Final = 0.1
_ROUNDING: Final = 0.01
#: vCPUs more than this many times off the size in an AWS name are named.
VCPU_SIZE_FACTOR: Final = 2.0
#: Memory per vCPU (and network, without a table row) this many times outside the peers'
#: range is named.
SHAPE_FACTOR: Final = 4.0
#: A network figure this many times off ``data/instance-network.csv`` is named.
NETWORK_TABLE_FACTOR: Final = 2.0
#: The fields compared with the catalog an edit came from, and their units.
_CHANGED: Final = {"on_demand_usd_per_hour": " USD/hour", "spot_usd_per_hour": " USD/hour",
                   "eflops": " eFLOPS", "vcpus": " vCPUs", "memory_gib": " GiB",
                   "network_gbps": " Gbps"}


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


def _spot_below_floor(catalog: Catalog) -> list[Problem]:
    out: list[Problem] = []
    for t in _types(catalog):
        share = t.spot_usd_per_hour / t.on_demand_usd_per_hour
        if share < MIN_SPOT_SHARE * (1.0 - _ROUNDING):
            out.append(Problem(t.name, "spot_usd_per_hour", t.spot_usd_per_hour,
                               f"is {share:.1%} of the on-demand price "
                               f"{t.on_demand_usd_per_hour:g} USD/hour, while AWS sells spot "
                               f"at most {1 - MIN_SPOT_SHARE:.0%} below on-demand: a typo?"))
    return out


def _price_changes(catalog: Catalog, base: Catalog) -> list[Problem]:
    old_by_name = {t.name: t for t in _types(base)}
    pairs = [(t, old_by_name[t.name]) for t in _types(catalog) if t.name in old_by_name]
    out: list[Problem] = []
    for field, unit in _CHANGED.items():
        both = [(t, getattr(t, field, None), getattr(o, field, None)) for t, o in pairs]
        both = [(t, n, o) for t, n, o in both if n is not None and o is not None]
        new = np.array([n for _, n, _ in both], dtype=np.float64)
        old = np.array([o for _, _, o in both], dtype=np.float64)
        ratio = new / old
        far = (ratio >= PRICE_CHANGE_FACTOR) | (ratio <= 1.0 / PRICE_CHANGE_FACTOR)
        out += [Problem(both[i][0].name, field, both[i][1],
                        f"is {ratio[i]:.3g}x the {old[i]:g}{unit} of {base.name}: a typo?")
                for i in np.flatnonzero(far)]
    return out


def size_vcpus(name: str) -> int | None:
    """The vCPUs an AWS name's size stands for (``large`` 2, ``xlarge`` 4, ``<N>xlarge``
    4N), or ``None`` (another size: ``metal``, ``medium``, ..., or not an AWS name)."""
    family, dot, size = name.partition(".")
    if not dot or not family:
        return None
    if size == "large":
        return 2
    match = re.fullmatch(r"(\d*)xlarge", size)
    return None if match is None else 4 * int(match.group(1) or 1)


def _vcpus_off_size(catalog: Catalog) -> list[Problem]:
    out: list[Problem] = []
    for t in _types(catalog):
        expected = size_vcpus(t.name)
        if expected is None:
            continue
        ratio = t.vcpus / expected
        if ratio > VCPU_SIZE_FACTOR or ratio < 1.0 / VCPU_SIZE_FACTOR:
            out.append(Problem(t.name, "vcpus", t.vcpus,
                               f"is {ratio:.3g}x the {expected} vCPUs of size "
                               f"{t.name.partition('.')[2]} in AWS's names (no EC2 type is "
                               f"more than {VCPU_SIZE_FACTOR:g}x off): a typo?"))
    return out


def _family(name: str) -> str:
    return name.partition(".")[0]


def _outside_peers(catalog: Catalog, field: str, value: Callable[[InstanceType], float | None],
                   what: str, *, family_only: bool = False) -> list[Problem]:
    """Types whose ``value`` is more than :data:`SHAPE_FACTOR` times outside the range of its
    peers: its family's other types in ``catalog``, else (unless ``family_only``) every other
    type with a value."""
    types = [(t, v) for t in _types(catalog) if (v := value(t)) is not None]
    out: list[Problem] = []
    for t, v in types:
        family = [w for o, w in types if o is not t and _family(o.name) == _family(t.name)]
        peers, whose = (family, f"the {_family(t.name)} types'") if family else (
            [] if family_only else [w for o, w in types if o is not t], "the other types'")
        if not peers:
            continue
        lo, hi = min(peers), max(peers)
        if v > SHAPE_FACTOR * hi or v < lo / SHAPE_FACTOR:
            out.append(Problem(t.name, field, getattr(t, field),
                               f"gives {v:.3g}{what}, far outside {whose} {lo:.3g}..{hi:.3g}"
                               ": a typo?"))
    return out


def _memory_per_vcpu(catalog: Catalog) -> list[Problem]:
    return _outside_peers(
        catalog, "memory_gib",
        lambda t: None if t.memory_gib is None else t.memory_gib / t.vcpus, " GiB per vCPU")


def _network_table(catalog: Catalog) -> list[Problem]:
    table = bundled_network_gbps()
    out: list[Problem] = []
    for t in _types(catalog):
        known = table.get(t.name)
        if known is None:
            continue
        ratio = t.network_gbps / known
        if ratio >= NETWORK_TABLE_FACTOR or ratio <= 1.0 / NETWORK_TABLE_FACTOR:
            out.append(Problem(t.name, "network_gbps", t.network_gbps,
                               f"is {ratio:.3g}x the {known:g} Gbps of {t.name} in "
                               f"data/{NETWORK_TABLE}: a typo?"))
    return out


def _network_peers(catalog: Catalog) -> list[Problem]:
    table = bundled_network_gbps()
    unlisted = {t.name for t in _types(catalog) if t.name not in table}
    return [p for p in _outside_peers(catalog, "network_gbps", lambda t: t.network_gbps,
                                      " Gbps", family_only=True)
            if p.where in unlisted]


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


def row_warnings(catalog: Catalog) -> tuple[Problem, ...]:
    """The rules that read one type's own values and a fixed reference only (its on-demand
    price, its name's size, ``data/instance-network.csv``): a typo of one type never names
    another."""
    return tuple(_spot_above_on_demand(catalog) + _spot_below_floor(catalog)
                 + _vcpus_off_size(catalog) + _network_table(catalog))


def plausibility_warnings(catalog: Catalog, base: Catalog | None = None
                          ) -> tuple[Problem, ...]:
    """Valid values of ``catalog`` that look like typos (rules in the module docstring),
    against ``base``, the catalog it was edited from, when given: :func:`row_warnings`, then
    the rules against the type's peers."""
    out = [*row_warnings(catalog), *_memory_per_vcpu(catalog), *_network_peers(catalog)]
    if base is not None:
        out += _price_changes(catalog, base)
    out += _eflops_outliers(catalog, base)
    return tuple(out)
