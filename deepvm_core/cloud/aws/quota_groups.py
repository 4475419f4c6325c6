"""EC2's vCPU quota groups and the families of the model: which AWS quota answers for which
instance family, and a catalog's quota rows from the values an account answered (pure: no AWS
call; :mod:`deepvm_core.cloud.aws.quotas` reads the values).

**Groups to families.** AWS's EC2 vCPU quotas are per group of instance families
(:data:`QUOTA_GROUPS`: "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances" and
"All Standard (A, C, D, H, I, M, R, T, Z) Spot Instance Requests", "... G and VT ...",
"... P ...", "... Trn ...", ...); the model has one quota per family (``model.md``). A quota is
matched by its name (punctuation and case ignored, so "All Standard (A C D H I M R T Z) Spot
Instance Requests" matches too) or by its code, and each family of a group gets the group's
whole value: an over-estimate when several families of one group run at once, since they share
it (``data/README.md``, "Quotas"). P spot was once two groups ("All P4, P3 and P2 Spot Instance
Requests", "All P5 Spot Instance Requests"): when those are answered, P gets the smallest
(noted). Families are named as
:func:`~deepvm_core.cloud.aws.instance_types.quota_family` names them.

**Which rows.** :func:`account_quotas` gives a row to every family of the catalog's types and
of its existing rows that is in a group the account answered; a row of a family in no AWS group
is kept as it was, and a family left without a row is unlimited (both noted). Values are whole
vCPUs (AWS answers a float such as ``5.0``; a fraction is rounded down).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from deepvm_core.catalog import Catalog, Quota
from deepvm_core.cloud.aws.client import MalformedAnswer


@dataclass(frozen=True)
class QuotaGroup:
    """One AWS EC2 vCPU quota group: its on-demand and spot quotas and the families they cover.

    Attributes:
        label: short name (``Standard``, ``G and VT``, ``P``).
        families: the families of the group, as
            :func:`~deepvm_core.cloud.aws.instance_types.quota_family` names them.
        on_demand: (quota code, quota name) of "Running On-Demand ... instances".
        spot: (quota code, quota name) of "All ... Spot Instance Requests", or ``None`` (the
            group has no spot quota).
        spot_aliases: older names of parts of the spot quota (AWS once split it); when the
            answer has them, the smallest value of the spot quota and these wins.
    """

    label: str
    families: tuple[str, ...]
    on_demand: tuple[str, str]
    spot: tuple[str, str] | None
    spot_aliases: tuple[str, ...] = ()


_STANDARD = ("A", "C", "D", "H", "I", "M", "R", "T", "Z")

#: AWS's EC2 vCPU quota groups (codes and names as the Service Quotas console shows them).
QUOTA_GROUPS: tuple[QuotaGroup, ...] = (
    QuotaGroup("Standard", _STANDARD,
               ("L-1216C47A", "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances"),
               ("L-34B43A08", "All Standard (A, C, D, H, I, M, R, T, Z) Spot Instance Requests")),
    QuotaGroup("G and VT", ("G",),
               ("L-DB2E81BA", "Running On-Demand G and VT instances"),
               ("L-3819A6DF", "All G and VT Spot Instance Requests")),
    QuotaGroup("P", ("P",),
               ("L-417A185B", "Running On-Demand P instances"),
               ("L-7212CCBC", "All P Spot Instance Requests"),
               spot_aliases=("All P4, P3 and P2 Spot Instance Requests",
                             "All P5 Spot Instance Requests")),
    QuotaGroup("Trn", ("Trn",),
               ("L-2C3B7624", "Running On-Demand Trn instances"),
               ("L-6B0D517C", "All Trn Spot Instance Requests")),
    QuotaGroup("Inf", ("Inf",),
               ("L-1945791B", "Running On-Demand Inf instances"),
               ("L-B5D1601B", "All Inf Spot Instance Requests")),
    QuotaGroup("DL", ("DL",),
               ("L-6E869C2A", "Running On-Demand DL instances"),
               ("L-85EED4F7", "All DL Spot Instance Requests")),
    QuotaGroup("F", ("F",),
               ("L-74FC7D96", "Running On-Demand F instances"),
               ("L-88CF9481", "All F Spot Instance Requests")),
    QuotaGroup("X", ("X",),
               ("L-7295265B", "Running On-Demand X instances"),
               ("L-E3A00192", "All X Spot Instance Requests")),
    QuotaGroup("HPC", ("HPC",),
               ("L-F7808C92", "Running On-Demand HPC instances"), None),
    QuotaGroup("High Memory", ("U",),
               ("L-43DA4232", "Running On-Demand High Memory instances"), None),
)


def group_of(family: str) -> QuotaGroup | None:
    """The AWS quota group of ``family``, or ``None`` (no EC2 vCPU quota group has it)."""
    return next((g for g in QUOTA_GROUPS if family in g.families), None)


def _key(name: object) -> str:
    """A quota name without case and punctuation: ``all p spot instance requests``."""
    return " ".join(re.sub(r"[^a-z0-9]+", " ", str(name).lower()).split())


@dataclass(frozen=True)
class GroupValues:
    """What the account's answer says of one group.

    Attributes:
        on_demand_vcpus, spot_vcpus: whole vCPUs, or ``None`` when not answered.
        notes: how the values were found, when not plainly (an older name, a default).
    """

    on_demand_vcpus: int | None
    spot_vcpus: int | None
    notes: tuple[str, ...] = ()


def _vcpus(item: Mapping[str, Any]) -> int:
    value = item.get("Value")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(
            value) or value < 0:
        raise MalformedAnswer(f"quota {item.get('QuotaName')!r} has value {value!r}, not a "
                              "number of vCPUs >= 0")
    return math.floor(value)


def group_values(items: Iterable[Mapping[str, Any]]) -> dict[str, GroupValues]:
    """Per group label (:data:`QUOTA_GROUPS`), the values of a ``ListServiceQuotas`` (or
    ``ListAWSDefaultServiceQuotas``) answer: ``Quotas`` items matched by name or code. A group
    none of whose quotas is answered is absent.

    Raises:
        MalformedAnswer: an item is not a mapping, or a matched quota's ``Value`` is not a
            number >= 0.
    """
    by_code: dict[str, Mapping[str, Any]] = {}
    by_name: dict[str, Mapping[str, Any]] = {}
    for item in items:
        if not isinstance(item, Mapping):
            raise MalformedAnswer("a Quotas item is not an object")
        by_code[str(item.get("QuotaCode"))] = item
        by_name[_key(item.get("QuotaName"))] = item

    def find(code_name: tuple[str, str] | None) -> Mapping[str, Any] | None:
        if code_name is None:
            return None
        code, name = code_name
        return by_name.get(_key(name)) or by_code.get(code)

    out: dict[str, GroupValues] = {}
    for group in QUOTA_GROUPS:
        on_demand, spot = find(group.on_demand), find(group.spot)
        notes: list[str] = []
        spots = [] if spot is None else [spot]
        spots += [by_name[_key(a)] for a in group.spot_aliases
                  if _key(a) in by_name and by_name[_key(a)] is not spot]
        spot_vcpus = min((_vcpus(i) for i in spots), default=None)
        if len(spots) > 1:
            notes.append(f"{group.label} spot: the smallest of "
                         + ", ".join(f"'{i.get('QuotaName')}' {_vcpus(i)}" for i in spots)
                         + " (AWS's older split of the group)")
        if on_demand is None and spot_vcpus is None:
            continue
        out[group.label] = GroupValues(None if on_demand is None else _vcpus(on_demand),
                                       spot_vcpus, tuple(notes))
    return out


def account_quotas(catalog: Catalog, values: Mapping[str, GroupValues]) -> tuple[
        tuple[Quota, ...], tuple[str, ...]]:
    """The quota rows of ``catalog`` with the account's ``values`` (:func:`group_values`), and
    notes (module docstring, "Which rows"): rows in the catalog's order, then new families in
    :data:`QUOTA_GROUPS` order. A group that answered only one of its two quotas keeps the
    catalog's value for the other (noted); with no such row the family stays unlimited."""
    type_families = {t.family for t in (*catalog.gpu_types, *catalog.cpu_types)}
    families = [q.family for q in catalog.quotas]
    families += sorted(type_families - set(families),
                       key=lambda f: (next((i for i, g in enumerate(QUOTA_GROUPS)
                                            if f in g.families), len(QUOTA_GROUPS)), f))
    rows: list[Quota] = []
    kept: list[str] = []
    half: list[str] = []
    unlimited: list[str] = []
    for family in families:
        old = catalog.quota(family)
        group = group_of(family)
        answer = values.get(group.label) if group is not None else None
        if answer is None:
            if old is not None:
                rows.append(old)
                kept.append(family)
            else:
                unlimited.append(family)
            continue
        on_demand, spot = answer.on_demand_vcpus, answer.spot_vcpus
        if on_demand is None or spot is None:
            if old is None:
                unlimited.append(family)
                continue
            half.append(family)
            on_demand = old.on_demand_vcpus if on_demand is None else on_demand
            spot = old.spot_vcpus if spot is None else spot
        rows.append(Quota(family, on_demand, spot))
    notes: list[str] = []
    for group in QUOTA_GROUPS:
        answer = values.get(group.label)
        mine = [q.family for q in rows if q.family in group.families]
        if answer is not None and mine:
            notes.append(f"{group.label} group ({_fmt(answer.on_demand_vcpus)} on-demand / "
                         f"{_fmt(answer.spot_vcpus)} spot vCPUs) -> family "
                         f"{', '.join(mine)}" + (" (each gets the group's value; they share it)"
                                                 if len(mine) > 1 else ""))
            notes.extend(answer.notes)
    if half:
        notes.append("the account answered only one of the on-demand and spot quotas of family "
                     f"{', '.join(half)}: the other keeps the catalog's value")
    if kept:
        notes.append(f"family {', '.join(kept)}: no AWS quota answered for it, the catalog's "
                     "row is kept")
    if unlimited:
        notes.append(f"family {', '.join(unlimited)}: no quota (unlimited)")
    return tuple(rows), tuple(notes)


def _fmt(value: int | None) -> str:
    return "-" if value is None else str(value)
