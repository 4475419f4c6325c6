"""Catalog diffs: how a fetched catalog's prices differ from the catalog it was fetched against,
and every field an edited catalog changed.

:func:`price_diff` compares two catalogs instance type by instance type (on-demand and spot
USD per hour, old and new, and the change in percent); :func:`summarize_price_diff` counts the
result the way the dashboard's Live prices page and ``deepvm fetch --diff`` report it.
:func:`catalog_changes` lists every field that differs between a catalog and the one it was
derived from, one line each (what an export of an edited catalog records). All are pure: the
catalogs are not changed.
"""

from __future__ import annotations

import fnmatch
import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.catalog.catalog import catalog_to_dict
from deepvm_core.units import PRICE_TOLERANCE_USD

Kind = Literal["gpu", "cpu"]


class DiffStatus:
    """Values of :attr:`PriceChange.status`."""

    CHANGED = "changed"
    SAME = "unchanged"
    ADDED = "added"
    MISSING = "missing"


#: Note on a GPU type of the new catalog without eFLOPS (the solvers leave it out until eFLOPS
#: is given).
NEEDS_EFLOPS = "needs eFLOPS"
#: Note on a GPU type of the new catalog whose eFLOPS is an estimate, not a measurement.
ESTIMATED_EFLOPS = "eFLOPS estimated"
#: Note on a type of the old catalog the new one lacks (the fetch notes say why).
NOT_FETCHED = "not fetched (see the notes)"


@dataclass(frozen=True)
class PriceChange:
    """One instance type's prices in the old and the new catalog.

    Attributes:
        name: the instance type (``g4dn.xlarge``).
        kind: ``gpu`` or ``cpu`` (the new catalog's kind when both have the type).
        status: one of :class:`DiffStatus`: ``changed`` (a price moved by more than the
            tolerance), ``unchanged``, ``added`` (only in the new catalog) or ``missing`` (only
            in the old one).
        note: :data:`NEEDS_EFLOPS` for a GPU type of the new catalog without eFLOPS,
            :data:`ESTIMATED_EFLOPS` for one whose eFLOPS is estimated, :data:`NOT_FETCHED` for
            a missing type, else empty.
        on_demand_old, on_demand_new: on-demand price, USD per hour, or ``None`` where the
            catalog lacks the type.
        spot_old, spot_new: spot price, USD per hour, or ``None`` likewise.
        on_demand_change_pct, spot_change_pct: ``100 * (new - old) / old``, percent, or
            ``None`` where undefined (a price absent, or an old price of 0).
    """

    name: str
    kind: Kind
    status: str
    note: str
    on_demand_old: float | None
    on_demand_new: float | None
    spot_old: float | None
    spot_new: float | None
    on_demand_change_pct: float | None
    spot_change_pct: float | None

    @property
    def needs_eflops(self) -> bool:
        """True for a GPU type of the new catalog without eFLOPS."""
        return self.note == NEEDS_EFLOPS


@dataclass(frozen=True)
class PriceDiffSummary:
    """Counts over a :func:`price_diff` result.

    Attributes:
        fetched: types in the new catalog (every row that is not ``missing``).
        changed, unchanged, added, missing: rows of each :class:`DiffStatus`.
        needs_eflops: GPU types of the new catalog without eFLOPS.
        median_spot_change_pct: median of the defined spot changes, percent (``None`` when
            there is none).
    """

    fetched: int
    changed: int
    unchanged: int
    added: int
    missing: int
    needs_eflops: int
    median_spot_change_pct: float | None


def change_percent(old: float | None, new: float | None) -> float | None:
    """``100 * (new - old) / old``, percent; ``None`` when either is ``None`` or ``old`` is 0."""
    if old is None or new is None or old == 0:
        return None
    return 100.0 * (new - old) / old


def price_diff(old: Catalog, new: Catalog, requested: Sequence[str] | None = None,
               tolerance: float = PRICE_TOLERANCE_USD) -> tuple[PriceChange, ...]:
    """Per instance type, ``old``'s and ``new``'s on-demand and spot USD/hour and the change.

    Args:
        old: the catalog compared with (for a fetch: the base catalog).
        new: the catalog compared (for a fetch: the fetched one).
        requested: the instance type names or globs that were fetched; ``old``'s types that
            match none of them are left out. ``None``: all of ``old``'s types.
        tolerance: a price moving by at most this much, USD per hour, is ``unchanged``.

    Returns:
        ``old``'s types in its order (GPU types, then CPU types; ``missing`` when ``new`` lacks
        them), then the types only ``new`` has (``added``), in ``new``'s order.
    """
    old_types = {t.name: t for t in (*old.gpu_types, *old.cpu_types)
                 if requested is None or any(fnmatch.fnmatchcase(t.name, p) for p in requested)}
    new_types = {t.name: t for t in (*new.gpu_types, *new.cpu_types)}
    out = []
    for name in [*old_types, *(n for n in new_types if n not in old_types)]:
        before, after = old_types.get(name), new_types.get(name)
        if after is None:
            status, note = DiffStatus.MISSING, NOT_FETCHED
        else:
            note = "" if not isinstance(after, GpuType) else (
                NEEDS_EFLOPS if after.eflops is None else
                ESTIMATED_EFLOPS if after.eflops_source.startswith("estimated") else "")
            if before is None:
                status = DiffStatus.ADDED
            elif (abs(after.on_demand_usd_per_hour - before.on_demand_usd_per_hour) > tolerance
                  or abs(after.spot_usd_per_hour - before.spot_usd_per_hour) > tolerance):
                status = DiffStatus.CHANGED
            else:
                status = DiffStatus.SAME
        either = after if after is not None else before
        od_old = before.on_demand_usd_per_hour if before else None
        od_new = after.on_demand_usd_per_hour if after else None
        spot_old = before.spot_usd_per_hour if before else None
        spot_new = after.spot_usd_per_hour if after else None
        out.append(PriceChange(
            name=name, kind="gpu" if isinstance(either, GpuType) else "cpu", status=status,
            note=note, on_demand_old=od_old, on_demand_new=od_new, spot_old=spot_old,
            spot_new=spot_new, on_demand_change_pct=change_percent(od_old, od_new),
            spot_change_pct=change_percent(spot_old, spot_new)))
    return tuple(out)


def summarize_price_diff(changes: Sequence[PriceChange]) -> PriceDiffSummary:
    """Counts of each status, the types needing eFLOPS and the median spot change."""
    def count(status: str) -> int:
        return sum(c.status == status for c in changes)

    spot = [c.spot_change_pct for c in changes if c.spot_change_pct is not None]
    return PriceDiffSummary(
        fetched=len(changes) - count(DiffStatus.MISSING),
        changed=count(DiffStatus.CHANGED),
        unchanged=count(DiffStatus.SAME),
        added=count(DiffStatus.ADDED),
        missing=count(DiffStatus.MISSING),
        needs_eflops=sum(c.needs_eflops for c in changes),
        median_spot_change_pct=float(statistics.median(spot)) if spot else None,
    )


# ----------------------------------------------------------------------------- every field

#: Texts longer than this are shown cut in :func:`catalog_changes`.
_SHOWN_CHARS = 60
_ABSENT = object()
_META_FIELDS = ("name", "provider", "region", "prices_date", "source")


def _show(value: object) -> str:
    if value is _ABSENT:
        return "(none)"
    if isinstance(value, str) and len(value) > _SHOWN_CHARS:
        return f"{json.dumps(value[:_SHOWN_CHARS])[:-1]}...\" ({len(value)} characters)"
    return json.dumps(value, sort_keys=True)


def _compare(path: str, old: object, new: object, out: list[str]) -> None:
    """Append ``path: old -> new`` for every leaf that differs; objects are compared key by key
    (``path.key``), in the old one's key order, then the keys only the new one has."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in [*old, *(k for k in new if k not in old)]:
            _compare(f"{path}.{key}", old.get(key, _ABSENT), new.get(key, _ABSENT), out)
    elif old is _ABSENT or new is _ABSENT or old != new:
        out.append(f"{path}: {_show(old)} -> {_show(new)}")


def _compare_rows(kind: str, old: Mapping[Any, Any], new: Mapping[Any, Any],
                  out: list[str]) -> None:
    """Rows keyed by name (or family, or index): removed, changed, then added ones."""
    for key, row in old.items():
        if key not in new:
            out.append(f"{kind}[{key}]: removed")
        else:
            _compare(f"{kind}[{key}]", row, new[key], out)
    out.extend(f"{kind}[{key}]: added" for key in new if key not in old)


def catalog_changes(base: Catalog, edited: Catalog) -> list[str]:
    """Every field in which ``edited`` differs from ``base``, one line each, e.g.
    ``gpu_types[g4dn.xlarge].spot_usd_per_hour: 0.1578 -> 0.2``.

    Values are shown as JSON (``null``, ``"text"``; ``(none)`` for a field one side lacks, long
    texts cut). Order: metadata, GPU types, CPU types (rows by name: each of ``base``'s removed
    or changed, then the added ones), quotas (by family), the saturation table (by position).
    An empty list: the catalogs have the same content (the same ``sha256``). Warnings are not
    compared.
    """
    old, new = catalog_to_dict(base), catalog_to_dict(edited)
    out: list[str] = []
    for key in _META_FIELDS:
        _compare(key, old[key], new[key], out)
    for kind in ("gpu_types", "cpu_types"):
        _compare_rows(kind, {r["name"]: r for r in old[kind]}, {r["name"]: r for r in new[kind]},
                      out)
    _compare_rows("quotas", {q["family"]: q for q in old["quotas"]},
                  {q["family"]: q for q in new["quotas"]}, out)
    _compare_rows("network_saturation", dict(enumerate(old["network_saturation"])),
                  dict(enumerate(new["network_saturation"])), out)
    return out
