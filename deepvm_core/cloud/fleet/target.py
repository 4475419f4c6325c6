"""What to launch: the chosen configuration of an export, as a :class:`FleetPlan`.

An export is the JSON of ``deepvm recommend --format json`` or the dashboard's "Download
configuration" button (:mod:`deepvm_core.io.export`). The configuration to launch is:

1. the export's ``chosen`` configuration when it has one (not ``null``);
2. else the first DeepVM recommendation (``deepvm[0]``);
3. else nothing: the export is refused (nothing was feasible).

A plan JSON (``deepvm plan --format json``) is an export too; when its chosen configuration
was evaluated on spot traces, ``chosen.estimate.pools`` (``TYPE@ZONE``, failover order) gives
the zones the spot workers may use, in that order (:attr:`FleetPlan.pool_zones`).

The plan id is the first :data:`PLAN_ID_LENGTH` hex digits of the export file's SHA-256, so
one export file always maps to the same tag value ``deepvm:plan`` on AWS.

No I/O here except :func:`read_export`; no boto3.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from deepvm_core.cloud.fleet.errors import FleetInputError
from deepvm_core.cloud.fleet.zones import spot_cap, spot_zone_ids
from deepvm_core.market.pools import ZONE_NAME

PLAN_ID_LENGTH = 12
PLAN_ID_PATTERN = re.compile(r"^[0-9a-f]{8,64}$")

#: Tag keys on every fleet and instance.
TAG_PLAN = "deepvm:plan"
TAG_ROLE = "deepvm:role"
TAG_CATALOG = "deepvm:catalog"

Role = Literal["spot-worker", "fallback-worker", "anchor", "memory-node"]
#: ``fallback-worker``: the spot workers' type launched on demand by ``deepvm watch`` (the
#: on-demand fallback of a recovery policy).
ROLES: tuple[Role, ...] = ("spot-worker", "fallback-worker", "anchor", "memory-node")

_INSTANCE_TYPE = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$")


@dataclass(frozen=True)
class FleetPart:
    """One ``CreateFleet`` request of a plan.

    Attributes:
        role: ``spot-worker`` (spot GPU VMs), ``fallback-worker`` (the same on demand, launched
            by ``deepvm watch``), ``anchor`` (the on-demand GPU VM of a Single Anchor cluster)
            or ``memory-node`` (the on-demand CPU VMs of a Tiering cluster).
        instance_type: EC2 instance type (``g4dn.xlarge``).
        count: instances to launch.
    """

    role: Role
    instance_type: str
    count: int

    @property
    def market(self) -> Literal["spot", "on-demand"]:
        """``spot`` for the workers, ``on-demand`` for the anchor and the memory nodes."""
        return "spot" if self.role == "spot-worker" else "on-demand"

    @property
    def uses_gpu_template(self) -> bool:
        """True when the part launches from the GPU launch template."""
        return self.role != "memory-node"

    def describe(self) -> str:
        """``17 x g4dn.xlarge spot (spot-worker)``."""
        return f"{self.count} x {self.instance_type} {self.market} ({self.role})"


@dataclass(frozen=True)
class FleetPlan:
    """The chosen configuration of an export, ready to become fleet requests.

    Attributes:
        plan_id: the tag value ``deepvm:plan`` (hex digits of the export file's SHA-256).
        export_sha256: SHA-256 of the export file's bytes.
        catalog_name: the export's catalog (tag ``deepvm:catalog``).
        catalog_region: the catalog's AWS region (the default launch region).
        prices_date: the date of the catalog's prices.
        architecture: ``single_anchor`` or ``tiering``.
        summary: the configuration in one line (``TR: 17 x g4dn.xlarge spot + ...``).
        hourly_price_usd: the whole cluster, USD per hour, at the catalog's prices.
        spot: the spot workers, or ``None`` when there are none.
        on_demand: the anchor or the memory nodes, or ``None`` when there are none.
        chosen_from: ``chosen`` or ``deepvm[0]`` (where the configuration came from).
        pool_zones: the availability zones of the spot pools the plan's backtest chose, in
            failover order (a plan JSON's ``chosen.estimate.pools``, ``TYPE@ZONE``); empty
            when the configuration was not evaluated on spot traces.
        spot_zone_ids: the zone IDs of the GPU type's spot prices, cheapest first (empty
            without per-zone prices; :mod:`~deepvm_core.cloud.fleet.zones`).
        planned_zone_id: the zone ID the spot workers are pinned to (the cheapest), or
            ``None``.
        spot_cap_usd_per_hour: PW minus the on-demand part, USD per hour: the spot request's
            default ``MaxTotalPrice``; ``None`` without PW.
    """

    plan_id: str
    export_sha256: str
    catalog_name: str
    catalog_region: str
    prices_date: str
    architecture: str
    summary: str
    hourly_price_usd: float
    spot: FleetPart | None
    on_demand: FleetPart | None
    chosen_from: str
    pool_zones: tuple[str, ...] = ()
    spot_zone_ids: tuple[str, ...] = ()
    planned_zone_id: str | None = None
    spot_cap_usd_per_hour: float | None = None

    @property
    def parts(self) -> tuple[FleetPart, ...]:
        """The parts to launch, spot workers first."""
        return tuple(p for p in (self.spot, self.on_demand) if p is not None)


def export_bytes(export: Mapping[str, Any]) -> bytes:
    """The bytes of ``export`` as the CLI and the dashboard write it (2-space JSON, newline)."""
    return (json.dumps(export, indent=2) + "\n").encode("utf-8")


def plan_id_of(data: bytes) -> str:
    """The plan id of an export file's bytes."""
    return hashlib.sha256(data).hexdigest()[:PLAN_ID_LENGTH]


def check_plan_id(plan_id: str) -> str:
    """``plan_id`` if it looks like one (8 to 64 lower-case hex digits); else an error."""
    text = plan_id.strip().lower()
    if not PLAN_ID_PATTERN.match(text):
        raise FleetInputError(f"plan id {plan_id!r} is not valid: expected hex digits such as "
                              "'3f2a9c01b7de' (printed by 'deepvm launch' and in launch.txt)")
    return text


def read_export(path: str | Path) -> tuple[dict[str, Any], bytes]:
    """The export document at ``path`` and the file's bytes."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise FleetInputError(f"export file {str(p)!r} does not exist") from None
    except OSError as exc:
        raise FleetInputError(f"cannot read export file {str(p)!r}: {exc.strerror}") from None
    try:
        doc = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FleetInputError(f"export file {str(p)!r} is not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise FleetInputError(f"export file {str(p)!r} is not a JSON object")
    return doc, data


def _field(mapping: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in mapping:
        raise FleetInputError(f"the export's {where} has no {key!r}")
    return mapping[key]


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FleetInputError(f"the export's {where} = {value!r} is not a count (an integer >= 0)")
    return value


def _instance_type(value: Any, where: str) -> str:
    if not isinstance(value, str) or not _INSTANCE_TYPE.match(value):
        raise FleetInputError(f"the export's {where} = {value!r} is not an EC2 instance type")
    return value


def chosen_configuration(export: Mapping[str, Any]) -> tuple[Mapping[str, Any], str]:
    """The configuration to launch and where it came from (``chosen`` or ``deepvm[0]``)."""
    chosen = export.get("chosen")
    if isinstance(chosen, Mapping):
        return chosen, "chosen"
    ranked = export.get("deepvm")
    if isinstance(ranked, list) and ranked and isinstance(ranked[0], Mapping):
        return ranked[0], "deepvm[0]"
    explanation = export.get("explanation")
    why = ""
    if isinstance(explanation, Mapping) and explanation.get("summary"):
        why = f": {explanation['summary']}"
    raise FleetInputError("the export has no configuration to launch (no 'chosen' and no "
                          f"'deepvm' recommendation){why}")


def pool_zones_of(config: Mapping[str, Any], gpu_type: str, where: str) -> tuple[str, ...]:
    """The zones of ``config``'s ``estimate.pools`` (``TYPE@ZONE``, failover order), each once;
    empty without an estimate or pools. Every pool must be of ``gpu_type``."""
    estimate = config.get("estimate")
    if not isinstance(estimate, Mapping) or estimate.get("pools") in (None, []):
        return ()
    pools = estimate["pools"]
    if not isinstance(pools, list):
        raise FleetInputError(f"the export's {where}.estimate.pools = {pools!r} is not a list "
                              "of TYPE@ZONE")
    zones: list[str] = []
    for i, pool in enumerate(pools):
        name, sep, zone = str(pool).partition("@")
        if not isinstance(pool, str) or not sep or not ZONE_NAME.match(zone):
            raise FleetInputError(f"the export's {where}.estimate.pools[{i}] = {pool!r} is not "
                                  "TYPE@ZONE (g4dn.xlarge@us-east-1a)")
        if name != gpu_type:
            raise FleetInputError(f"the export's {where}.estimate.pools[{i}] = {pool!r} is not "
                                  f"a pool of the configuration's GPU type {gpu_type}")
        if zone not in zones:
            zones.append(zone)
    return tuple(zones)


def plan_from_export(export: Mapping[str, Any], data: bytes | None = None) -> FleetPlan:
    """The :class:`FleetPlan` of an export document.

    Args:
        export: the export document (``deepvm recommend --format json``).
        data: the export file's bytes (for the plan id); default :func:`export_bytes`.
    """
    raw = export_bytes(export) if data is None else data
    catalog = export.get("catalog")
    if not isinstance(catalog, Mapping):
        raise FleetInputError("the export has no 'catalog' object: is it the JSON of "
                              "'deepvm recommend --format json'?")
    provider = catalog.get("provider")
    if provider != "aws":
        raise FleetInputError(f"the export's catalog {catalog.get('name')!r} is of provider "
                              f"{provider!r}: only AWS catalogs can be launched on EC2")
    config, source = chosen_configuration(export)
    where = source
    architecture = _field(config, "architecture", where)
    gpu = _field(config, "gpu", where)
    if not isinstance(gpu, Mapping):
        raise FleetInputError(f"the export's {where}.gpu is not an object")
    gpu_type = _instance_type(_field(gpu, "name", f"{where}.gpu"), f"{where}.gpu.name")
    n_spot = _count(gpu.get("spot", 0), f"{where}.gpu.spot")
    n_anchor = _count(gpu.get("on_demand", 0), f"{where}.gpu.on_demand")
    cpu = config.get("cpu")
    n_memory = 0
    cpu_type = None
    if cpu is not None:
        if not isinstance(cpu, Mapping):
            raise FleetInputError(f"the export's {where}.cpu is not an object")
        cpu_type = _instance_type(_field(cpu, "name", f"{where}.cpu"), f"{where}.cpu.name")
        n_memory = _count(cpu.get("on_demand", 0), f"{where}.cpu.on_demand")
    if n_anchor and n_memory:
        raise FleetInputError(f"the export's {where} has both on-demand GPU VMs and memory "
                              "nodes; a DeepVM cluster is Single Anchor or Tiering, not both")
    spot = FleetPart("spot-worker", gpu_type, n_spot) if n_spot else None
    on_demand: FleetPart | None = None
    if n_anchor:
        on_demand = FleetPart("anchor", gpu_type, n_anchor)
    elif n_memory and cpu_type is not None:
        on_demand = FleetPart("memory-node", cpu_type, n_memory)
    if spot is None and on_demand is None:
        raise FleetInputError(f"the export's {where} has no instance to launch")
    price = config.get("hourly_price")
    if isinstance(price, bool) or not isinstance(price, (int, float)) or price < 0:
        raise FleetInputError(f"the export's {where}.hourly_price = {price!r} is not a price")
    name = catalog.get("name")
    region = catalog.get("region")
    if not isinstance(name, str) or not name or not isinstance(region, str):
        raise FleetInputError("the export's catalog has no name or region")
    summary = config.get("summary")
    zone_ids, planned = spot_zone_ids(export, config, gpu_type, where) if spot else ((), None)
    cap = spot_cap(export, [] if on_demand is None else
                   [(on_demand.instance_type, on_demand.count)]) if spot else None
    return FleetPlan(
        plan_id=plan_id_of(raw),
        export_sha256=hashlib.sha256(raw).hexdigest(),
        catalog_name=name,
        catalog_region=region,
        prices_date=str(catalog.get("prices_date") or "unknown"),
        architecture=str(architecture),
        summary=str(summary) if summary else " + ".join(p.describe() for p in
                                                         (spot, on_demand) if p),
        hourly_price_usd=float(price),
        spot=spot,
        on_demand=on_demand,
        chosen_from=source,
        pool_zones=pool_zones_of(config, gpu_type, where) if spot is not None else (),
        spot_zone_ids=zone_ids,
        planned_zone_id=planned,
        spot_cap_usd_per_hour=cap,
    )
