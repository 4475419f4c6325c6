"""Validation: a raw catalog (parsed JSON, in our format or the artifact's) -> a :class:`Catalog`.

Loading never stops at the first problem and never drops a row silently: every problem is
collected with its row, field and value (the rows are read by
:mod:`deepvm_core.catalog.row_readers`), and an invalid catalog raises one
:class:`~deepvm_core.errors.CatalogError` that lists them all. The rules are those of
:data:`~deepvm_core.catalog.rules.RULES` and :func:`~deepvm_core.catalog.catalog.catalog_problems`,
the same the types check when built directly. Soft problems (a spot price above the on-demand
price, a GPU type without eFLOPS or without scaling parameters) are kept as
``Catalog.warnings``. Schema version 1 files load too; they have no interruption buckets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Final

from deepvm_core.catalog.artifact import (
    ARTIFACT_FIELD_NAMES,
    from_artifact_dict,
    is_artifact_format,
)
from deepvm_core.catalog.catalog import Catalog, catalog_problems
from deepvm_core.catalog.json_input import JsonInputError, parse_json_bounded
from deepvm_core.catalog.row_readers import (
    Collector,
    read_gpu_extras,
    read_instance,
    read_quotas,
    read_saturation,
    row_label,
)
from deepvm_core.catalog.rules import row_count_problem
from deepvm_core.catalog.schema import (
    MAX_CATALOG_BYTES,
    READABLE_SCHEMA_VERSIONS,
    SCHEMA_VERSION,
)
from deepvm_core.catalog.types import CpuType, GpuType
from deepvm_core.errors import CatalogError, Problem

#: A catalog file must have a GPU VM type: one rule for ``deepvm catalog validate``, loading,
#: uploads and the dashboard's Catalog editor (a :class:`Catalog` built in code may be empty,
#: e.g. a region without those types in a comparison, and so may an export's rows).
NO_GPU_TYPES_MESSAGE: Final = "no GPU VM: a catalog needs at least one, or no cluster can be built"


def parse_catalog(data: object, source: str = "catalog", *,
                  require_gpu_types: bool = True) -> Catalog:
    """Validate a catalog in our format (a parsed JSON object) and build a :class:`Catalog`.

    A catalog without GPU VM types is invalid (:data:`NO_GPU_TYPES_MESSAGE`), unless
    ``require_gpu_types`` is False: only for the rows an export holds, which are the types its
    configurations use (none when nothing was feasible), not a catalog.

    Raises:
        CatalogError: listing every problem found (row, field, value, message).
    """
    c = Collector()
    if not isinstance(data, Mapping):
        raise CatalogError([Problem("(file)", "(root)", type(data).__name__,
                                    "a catalog must be a JSON object")], source)
    version = data.get("schema_version")
    if isinstance(version, bool) or version not in READABLE_SCHEMA_VERSIONS:
        readable = " or ".join(str(v) for v in READABLE_SCHEMA_VERSIONS)
        c.error("(catalog)", "schema_version", version,
                f"must be {readable} (this program reads schema versions {readable} and writes "
                f"{SCHEMA_VERSION})")
    meta: dict[str, str] = {}
    for key in ("name", "provider", "region", "prices_date"):
        value = c.text(data, "(catalog)", key)
        meta[key] = value or ""
    source_text = data.get("source", "")
    if not isinstance(source_text, str):
        c.error("(catalog)", "source", source_text, "must be a text")
        source_text = ""

    too_many = [p for kind in ("gpu_types", "cpu_types") if isinstance(data.get(kind), list)
                and (p := row_count_problem(kind, len(data[kind]))) is not None]
    if too_many:  # refused before its rows are validated one by one
        raise CatalogError(too_many, source)
    gpus: list[GpuType] = []
    cpus: list[CpuType] = []
    for kind in ("gpu_types", "cpu_types"):
        rows = data.get(kind)
        if not isinstance(rows, list):
            c.error("(catalog)", kind, rows, "must be a list of instance types")
            continue
        for i, row in enumerate(rows):
            common = read_instance(c, kind, i, row)
            if kind == "gpu_types":
                gpu = read_gpu_extras(c, i, row, common, buckets=version != 1)
                if gpu is not None:
                    gpus.append(gpu)
            elif common is not None:
                cpu = c.build(row_label(kind, i, row), CpuType, **common)
                if cpu is not None:
                    cpus.append(cpu)

    if require_gpu_types and isinstance(data.get("gpu_types"), list) and not data["gpu_types"]:
        c.error("(catalog)", "gpu_types", [], NO_GPU_TYPES_MESSAGE)
    quotas = read_quotas(c, data.get("quotas", []))
    saturation = read_saturation(c, data.get("network_saturation"))
    for problem in catalog_problems(tuple(gpus), tuple(cpus), quotas, saturation or ()):
        if saturation is not None or problem.field != "network_saturation":
            c.errors.append(problem)

    if c.errors or saturation is None:
        raise CatalogError(c.errors, source)
    return Catalog(
        name=meta["name"],
        provider=meta["provider"],
        region=meta["region"],
        prices_date=meta["prices_date"],
        source=source_text,
        gpu_types=tuple(gpus),
        cpu_types=tuple(cpus),
        quotas=quotas,
        saturation=saturation,
        warnings=tuple(c.warnings),
    )


def json_problem(exc: JsonInputError) -> Problem:
    """The catalog problem of JSON text that was not read."""
    return Problem(exc.where, "(json)", exc.value, exc.reason)


def catalog_from_json_text(text: str | bytes, source: str = "catalog") -> Catalog:
    """Parse JSON text in either format (ours or the artifact's) and validate it.

    Problems found in an artifact file name the artifact's rows and fields. The text is read
    within bounds (:func:`deepvm_core.catalog.json_input.parse_json_bounded`): at most
    :data:`~deepvm_core.catalog.schema.MAX_CATALOG_BYTES` bytes and
    :data:`~deepvm_core.catalog.json_input.MAX_JSON_DEPTH` levels of nesting.

    Raises:
        CatalogError: too large, too deeply nested, not text, malformed JSON (with line and
            column), or an invalid catalog.
    """
    try:
        data = parse_json_bounded(text, max_bytes=MAX_CATALOG_BYTES)
    except JsonInputError as exc:
        raise CatalogError([json_problem(exc)], source) from None
    if not is_artifact_format(data):
        return parse_catalog(data, source)
    stem = Path(source).stem if source != "catalog" else "artifact-import"
    try:
        return parse_catalog(from_artifact_dict(data, name=stem), source)
    except CatalogError as exc:  # speak the artifact's field names back to its user
        raise CatalogError([
            replace(p, field=ARTIFACT_FIELD_NAMES.get(p.field, p.field))
            if p.where.startswith(("instances[", "quotas[")) else p
            for p in exc.problems], source) from None
