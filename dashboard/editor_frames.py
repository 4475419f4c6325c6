"""The catalog editor's tables: a catalog as four data frames and back, validated by the core.

Pure functions (no Streamlit), so the editor's logic is tested without a browser. The frames
use the field names of our catalog format (``scaling`` is split into ``scaling_a/b/c``);
validation is the core's :func:`~deepvm_core.catalog.validation.parse_catalog`, whose problems
are mapped back to table, row and column here.

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

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.catalog import catalog_to_dict
from deepvm_core.catalog.provenance import carry_sources
from deepvm_core.catalog.schema import GPU_FIELDS
from deepvm_core.catalog.validation import catalog_from_json_text, parse_catalog
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
    TableSpec("gpu_types", "GPU VMs", (*_INSTANCE, "eflops", *_SCALING, "interruption_bucket"),
              ("name", "family")),
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
    "interruption_bucket": ("Spot bucket", "AWS Spot Instance Advisor interruption bucket: "
                            "0 <5%, 1 5-10%, 2 10-15%, 3 15-20%, 4 >20% reclaimed per month; "
                            "empty = unknown"),
    "on_demand_vcpus": ("On-demand vCPUs", "Most vCPUs of on-demand VMs of the family"),
    "spot_vcpus": ("Spot vCPUs", "Most vCPUs of spot VMs of the family"),
    "bandwidth_gbps": ("From Gbps", "min(BW(GPU), BW(CPU)) this entry starts at"),
    "max_gpu_vms": ("n_sat", "A memory node serves fewer than this many GPU VMs"),
}


def catalog_frames(catalog: Catalog) -> dict[str, pd.DataFrame]:
    """The four tables of ``catalog``, keyed by :attr:`TableSpec.key`. Rows are numbered from
    1 (the index, shown in the grid); a row keeps its number when others are deleted."""
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
        frames[spec.key] = pd.DataFrame(rows, columns=list(spec.columns), dtype="object",
                                        index=pd.RangeIndex(1, len(rows) + 1))
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

    Per-zone spot prices are kept for a row whose name and spot price are unchanged, and a GPU
    row's GPUs (``accelerator``, ``gpu_count``, ``gpu_memory_gb``: not columns of the grid,
    which fits the main column as it is) for a row whose name is unchanged; a new or renamed
    row has none, and the core derives them from its name
    (:mod:`deepvm_core.workload.gpu_hardware`).
    """
    base = catalog_to_dict(source)
    zones = {(r["name"], r["spot_usd_per_hour"]): r["spot_by_zone_usd_per_hour"]
             for kind in ("gpu_types", "cpu_types") for r in base[kind]
             if r.get("spot_by_zone_usd_per_hour")}
    gpus = {r["name"]: {k: r[k] for k in GPU_FIELDS} for r in base["gpu_types"]}
    data: dict[str, Any] = {k: v for k, v in base.items() if k not in TABLE_BY_KEY}
    for spec in TABLES:
        rows = []
        for record in frames[spec.key].to_dict("records"):
            row = {c: _cell(record.get(c), c not in spec.text_columns) for c in spec.columns}
            if spec.key == "gpu_types":
                abc = [row.pop(c) for c in _SCALING]
                row["scaling"] = None if all(v is None for v in abc) else dict(zip("abc", abc,
                                                                                    strict=True))
                row.update(gpus.get(row["name"], {}))
            if spec.key in ("gpu_types", "cpu_types"):
                zone = zones.get((row["name"], row["spot_usd_per_hour"]))
                if zone:
                    row["spot_by_zone_usd_per_hour"] = zone
            rows.append(row)
        data[spec.key] = carry_sources(source, rows) if spec.key == "gpu_types" else rows
    return data


def validate_frames(
    frames: Mapping[str, pd.DataFrame], source: Catalog
) -> tuple[Catalog | None, tuple[Problem, ...]]:
    """The catalog the tables describe, or ``None`` and every problem the core's validation
    found (an empty GPU table included: one rule, the core's)."""
    data = frames_to_dict(frames, source)
    try:
        catalog = parse_catalog(data, source=source.name)
    except CatalogError as exc:
        return None, exc.problems
    return catalog, ()


_WHERE = re.compile(r"^(?P<table>[a-z_]+)(?:\[(?P<index>\d+)\])?(?: \((?P<name>.*)\))?")
_TABLE_KEY = re.compile(r"\b(" + "|".join(TABLE_BY_KEY) + r")\b")


def _titled(text: str) -> str:
    """``text`` with each table key (``gpu_types``) replaced by the table's title."""
    return _TABLE_KEY.sub(lambda m: TABLE_BY_KEY[m[1]].title, text)


def _row_number(frames: Mapping[str, pd.DataFrame] | None, key: str, position: int) -> int:
    """The number of the row at ``position`` of table ``key``: its label in the grid (see
    :func:`catalog_frames`), or ``position + 1`` without ``frames``."""
    frame = frames.get(key) if frames is not None else None
    if frame is not None and position < len(frame):
        return int(frame.index[position])
    return position + 1


def problems_frame(problems: tuple[Problem, ...] | list[Problem],
                   frames: Mapping[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """One row per problem: table (by its title), row, instance, column, value and the core's
    message (table keys in it replaced by titles).

    With the editor's ``frames``, Row is the row's number in the grid, and a problem the core
    names by instance only (a duplicate name) gets the row of that name (the later ones, the
    first keeping the name); without them, Row is the 1-based position in the file. A
    catalog-level problem about a whole table is that table's, without row or column.
    """
    rows: list[dict[str, object]] = []
    by_name: dict[tuple[str, str], list[int]] = {}  # (table, name) -> rows of those problems
    for p in problems:
        match = _WHERE.match(p.where)
        key = match["table"] if match else ""
        name = match["name"] if match and match["name"] else ""
        field = p.field.replace("scaling.", "scaling_")
        row = None
        if match and match["index"] is not None:
            row = _row_number(frames, key, int(match["index"]))
        elif name and frames is not None and key in frames:
            by_name.setdefault((key, name), []).append(len(rows))
        if not match and p.field in TABLE_BY_KEY:  # "(catalog)": the whole table
            key, field = p.field, ""
        spec = TABLE_BY_KEY.get(key)
        rows.append({
            "Table": spec.title if spec else p.where,
            "Row": row,
            "Instance": name,
            "Column": COLUMN_LABELS.get(field, (field, ""))[0],
            "Value": "" if p.value is None else str(p.value),
            "Problem": _titled(p.message),
            "table_key": key if spec else "",
        })
    for (key, name), found in by_name.items():
        frame = frames[key]  # type: ignore[index]
        named = [i for i, cell in enumerate(frame["name"]) if _cell(cell) == name]
        for at, position in zip(found, named[-len(found):], strict=False):
            rows[at]["Row"] = int(frame.index[position])
    frame = pd.DataFrame(rows, columns=["Table", "Row", "Instance", "Column", "Value", "Problem",
                                        "table_key"])
    frame["Row"] = frame["Row"].astype("Int64")
    return frame


def parse_upload(file_name: str, content: bytes) -> Catalog:
    """A catalog from an uploaded JSON file, in our format or the research artifact's.

    Raises:
        CatalogError: malformed JSON or an invalid catalog (every problem listed; one without
            GPU VM types included).
    """
    return catalog_from_json_text(content, source=file_name)
