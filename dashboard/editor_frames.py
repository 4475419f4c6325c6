"""The catalog editor's tables: a catalog as four data frames and back, validated by the core.

Pure functions (no Streamlit), so the editor's logic is tested without a browser. The frames
use the field names of our catalog format (``scaling`` is split into ``scaling_a/b/c``);
validation is the core's :func:`~deepvm_core.catalog.parse_catalog`, whose problems are mapped
back to table, row and column here.

Every cell is text, numbers included: the grid's number editor drops what is not a digit, so a
typed ``1e308`` became ``1308``; as text it reaches :func:`frames_to_dict` as typed, which reads
it with ``float`` (a cell that is not a number goes to the core as typed, which names it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from deepvm_core.catalog import Catalog, catalog_from_json_text, catalog_to_dict, parse_catalog
from deepvm_core.errors import CatalogError, Problem

_INSTANCE = ("name", "family", "on_demand_usd_per_hour", "spot_usd_per_hour", "vcpus",
             "memory_gib", "network_gbps")
_SCALING = ("scaling_a", "scaling_b", "scaling_c")


@dataclass(frozen=True)
class TableSpec:
    """One editable table: its catalog key, title, columns (in order) and text columns."""

    key: str
    title: str
    columns: tuple[str, ...]
    text_columns: tuple[str, ...]


TABLES = (
    TableSpec("gpu_types", "GPU VMs", (*_INSTANCE, "eflops", *_SCALING), ("name", "family")),
    TableSpec("cpu_types", "CPU VMs (memory nodes)", _INSTANCE, ("name", "family")),
    TableSpec("quotas", "Quotas (vCPUs per family)", ("family", "on_demand_vcpus", "spot_vcpus"),
              ("family",)),
    TableSpec("network_saturation", "Network saturation",
              ("bandwidth_gbps", "max_gpu_vms"), ()),
)
TABLE_BY_KEY = {t.key: t for t in TABLES}

#: Column headers and help shown in the editor, by field.
COLUMN_LABELS: dict[str, tuple[str, str]] = {
    "name": ("Name", "The provider's name, unique in the catalog"),
    "family": ("Family", "Quota family (AWS: G for g4dn.xlarge)"),
    "on_demand_usd_per_hour": ("OD $/h", "On-demand price, USD per hour"),
    "spot_usd_per_hour": ("Spot $/h", "Spot price, USD per hour"),
    "vcpus": ("vCPU", "Virtual CPUs, counted against quotas"),
    "memory_gib": ("GiB", "RAM in GiB (memory nodes must hold f x s)"),
    "network_gbps": ("Gbps", "Network bandwidth, Gbit/s"),
    "eflops": ("eFLOPS", "Measured deep-learning throughput; empty = needs eFLOPS"),
    "scaling": ("a, b, c", "Scaling parameters (all three, or none for K = 1)"),
    "scaling_a": ("a", "Logistic steepness per node (empty a, b, c: K = 1)"),
    "scaling_b": ("b", "Inflection point, nodes"),
    "scaling_c": ("c", "Asymptotic speedup"),
    "on_demand_vcpus": ("On-demand vCPUs", "Most vCPUs of on-demand VMs of the family"),
    "spot_vcpus": ("Spot vCPUs", "Most vCPUs of spot VMs of the family"),
    "bandwidth_gbps": ("From Gbps", "min(BW(GPU), BW(CPU)) this entry starts at"),
    "max_gpu_vms": ("n_sat", "A memory node serves fewer than this many GPU VMs"),
}


def catalog_frames(catalog: Catalog) -> dict[str, pd.DataFrame]:
    """The four tables of ``catalog``, keyed by :attr:`TableSpec.key`."""
    data = catalog_to_dict(catalog)
    frames = {}
    for spec in TABLES:
        rows = []
        for row in data[spec.key]:
            flat = dict(row)
            scaling = flat.pop("scaling", None) if spec.key == "gpu_types" else None
            if spec.key == "gpu_types":
                for axis in "abc":
                    flat[f"scaling_{axis}"] = scaling[axis] if scaling else None
            rows.append({c: flat.get(c) if c in spec.text_columns else number_text(flat.get(c))
                         for c in spec.columns})
        frames[spec.key] = pd.DataFrame(rows, columns=list(spec.columns), dtype="object")
    return frames


def number_text(value: float | None) -> str | None:
    """A number as the editor shows it: the shortest text that reads back as the same float
    (``0.1578``, ``16``, ``1e+308``); ``None`` stays empty."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _cell(value: Any, numeric: bool = False) -> Any:
    """A data-editor cell as a plain JSON value: NaN and blanks become ``None``; in a
    ``numeric`` column, text that reads as a number becomes that float."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, str):
        value = value.strip()
        if numeric and value:
            try:
                return float(value)
            except ValueError:
                return value
        return value or None
    return value


def frames_to_dict(frames: Mapping[str, pd.DataFrame], source: Catalog) -> dict[str, Any]:
    """Our catalog format from edited tables; metadata (name, region, ...) from ``source``.

    Per-zone spot prices are kept for a row whose name and spot price are unchanged.
    """
    base = catalog_to_dict(source)
    zones = {(r["name"], r["spot_usd_per_hour"]): r["spot_by_zone_usd_per_hour"]
             for kind in ("gpu_types", "cpu_types") for r in base[kind]
             if r.get("spot_by_zone_usd_per_hour")}
    data: dict[str, Any] = {k: v for k, v in base.items() if k not in TABLE_BY_KEY}
    for spec in TABLES:
        rows = []
        for record in frames[spec.key].to_dict("records"):
            row = {c: _cell(record.get(c), c not in spec.text_columns) for c in spec.columns}
            if spec.key == "gpu_types":
                abc = [row.pop(c) for c in _SCALING]
                row["scaling"] = None if all(v is None for v in abc) else dict(zip("abc", abc,
                                                                                    strict=True))
            if spec.key in ("gpu_types", "cpu_types"):
                zone = zones.get((row["name"], row["spot_usd_per_hour"]))
                if zone:
                    row["spot_by_zone_usd_per_hour"] = zone
            rows.append(row)
        data[spec.key] = rows
    return data


#: The editor's rule on top of the core's validation, which accepts a catalog without GPU VM
#: types (its recommendations then explain that nothing is feasible): the editor refuses one.
NO_GPU_PROBLEM = Problem("gpu_types", "", None,
                         "no GPU VM: a catalog needs at least one, or no cluster can be built")


def validate_frames(
    frames: Mapping[str, pd.DataFrame], source: Catalog
) -> tuple[Catalog | None, tuple[Problem, ...]]:
    """The catalog the tables describe, or ``None`` and every problem found (the core's, and
    :data:`NO_GPU_PROBLEM` for an empty GPU table)."""
    data = frames_to_dict(frames, source)
    extra = () if data["gpu_types"] else (NO_GPU_PROBLEM,)
    try:
        catalog = parse_catalog(data, source=source.name)
    except CatalogError as exc:
        return None, (*exc.problems, *extra)
    return (None, extra) if extra else (catalog, ())


_WHERE = re.compile(r"^(?P<table>[a-z_]+)(?:\[(?P<index>\d+)\])?(?: \((?P<name>.*)\))?")


def problems_frame(problems: tuple[Problem, ...] | list[Problem]) -> pd.DataFrame:
    """One row per problem: table, row (1-based, as the editor shows it), column, value and
    the core's message."""
    rows = []
    for p in problems:
        match = _WHERE.match(p.where)
        key = match["table"] if match else ""
        spec = TABLE_BY_KEY.get(key)
        index = match["index"] if match else None
        field = p.field.replace("scaling.", "scaling_")
        rows.append({
            "Table": spec.title if spec else p.where,
            "Row": int(index) + 1 if index is not None else None,
            "Instance": (match["name"] if match and match["name"] else "") or "",
            "Column": COLUMN_LABELS.get(field, (field, ""))[0],
            "Value": "" if p.value is None else str(p.value),
            "Problem": p.message,
            "table_key": key,
        })
    frame = pd.DataFrame(rows, columns=["Table", "Row", "Instance", "Column", "Value", "Problem",
                                        "table_key"])
    frame["Row"] = frame["Row"].astype("Int64")
    return frame


def parse_upload(file_name: str, content: bytes) -> Catalog:
    """A catalog from an uploaded JSON file, in our format or the research artifact's.

    Raises:
        CatalogError: malformed JSON or an invalid catalog (every problem listed), or one
            without GPU VM types (:data:`NO_GPU_PROBLEM`).
    """
    catalog = catalog_from_json_text(content, source=file_name)
    if not catalog.gpu_types:
        raise CatalogError([NO_GPU_PROBLEM], file_name)
    return catalog
