"""Replaying an export: run its recommendation again and say whether it comes out the same.

An export (:mod:`deepvm_core.io.export`) holds its inputs and, since issue 9, the rows of the
instance types its configurations use, with their quotas and the saturation table. Replaying
it:

1. reads the file within bounds (:mod:`deepvm_core.catalog.json_input`);
2. rebuilds the scenario from ``inputs`` (PW, f, s, objective, quotas, node cap, top-k,
   solver);
3. finds the catalog: a catalog on this machine (bundled, saved or fetched) with the export's
   name and exactly its ``sha256``; else the catalog rebuilt from the export's own rows (the
   types a recommendation does not use can only lose to those it uses, so the rows it holds
   decide the same recommendation);
4. runs :func:`~deepvm_core.recommend.recommendation.recommend` and compares every configuration of
the export
   (the top-k, ``chosen``, the policies' choices, the best of each architecture) with the new
   one: the same instance types, counts and hourly price.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from deepvm_core.catalog import Catalog, store
from deepvm_core.catalog.json_input import JsonInputError, read_json_file
from deepvm_core.catalog.schema import MAX_CATALOG_BYTES, SCHEMA_VERSION
from deepvm_core.catalog.validation import parse_catalog
from deepvm_core.errors import CatalogError, DeepVMError
from deepvm_core.io.export import (
    configuration_to_dict,
    gpu_filter_from_dict,
    recommendation_to_dict,
)
from deepvm_core.model import OBJECTIVES, Scenario
from deepvm_core.recommend.recommendation import SOLVERS, Recommendation, Solver, recommend
from deepvm_core.workload.speed import SpeedBasis, speed_basis

#: The largest export file read, bytes (its rows are a subset of one catalog).
MAX_EXPORT_BYTES = MAX_CATALOG_BYTES
#: The export's single configurations compared, by key path.
_SINGLE = ("chosen", "deepvm_noscale", "cost_first", "performance_first",
           "best_per_architecture.single_anchor", "best_per_architecture.tiering")


class ExportError(DeepVMError):
    """An export that cannot be replayed: unreadable, not an export, or its catalog can be
    neither found nor rebuilt."""


@dataclass(frozen=True)
class ReplayResult:
    """What replaying an export found.

    Attributes:
        matches: every configuration of the export came out the same.
        differences: one line per configuration that did not (empty when ``matches``).
        catalog_origin: where the catalog came from, in words.
        catalog: the catalog the recommendation ran on.
        recommendation: the new recommendation.
        replayed: its export document (with the export's ``chosen`` when it is among the new
            top-k).
        notes: other facts (a different tool version).
    """

    matches: bool
    differences: tuple[str, ...]
    catalog_origin: str
    catalog: Catalog
    recommendation: Recommendation
    replayed: dict[str, Any]
    notes: tuple[str, ...]


def read_export(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The export document in ``path``.

    Raises:
        ExportError: unreadable, too large, not JSON, or not an object with ``inputs`` and
            ``catalog``.
    """
    try:
        doc = read_json_file(path, max_bytes=MAX_EXPORT_BYTES)
    except JsonInputError as exc:
        raise ExportError(f"export {str(path)!r} is not readable JSON: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("inputs"), Mapping) or (
            not isinstance(doc.get("catalog"), Mapping)):
        raise ExportError(f"{str(path)!r} is not an export of 'deepvm recommend --format json' "
                          "(no 'inputs' and 'catalog' objects)")
    return doc


def _input(inputs: Mapping[str, Any], key: str) -> Any:
    if key not in inputs:
        raise ExportError(f"the export's inputs have no {key!r}")
    return inputs[key]


def scenario_of(doc: Mapping[str, Any]) -> tuple[Scenario, int, Solver]:
    """The scenario, top-k and solver of an export's ``inputs``.

    Raises:
        ExportError: a missing input, or one out of range.
    """
    inputs = doc["inputs"]
    objective, solver = _input(inputs, "objective"), _input(inputs, "solver")
    if objective not in OBJECTIVES or solver not in SOLVERS:
        raise ExportError(f"the export's objective {objective!r} or solver {solver!r} is not "
                          "one this program knows")
    try:
        scenario = Scenario(_input(inputs, "pw_usd_per_hour"), _input(inputs, "checkpoint_gb"),
                            _input(inputs, "buffer_checkpoints"), objective,
                            _input(inputs, "use_quotas"), _input(inputs, "max_nodes"),
                            gpu_filter_from_dict(inputs.get("gpu_filter")))
    except DeepVMError as exc:
        raise ExportError(f"the export's inputs are invalid: {exc}") from None
    if scenario.use_quotas not in (True, False):
        raise ExportError(f"the export's use_quotas {scenario.use_quotas!r} is not true or false")
    top_k = _input(inputs, "top_k")
    return scenario, top_k, solver


def _stored_catalog(name: str, sha256: str) -> tuple[Catalog, str] | None:
    """A catalog on this machine called ``name`` with exactly ``sha256``."""
    for entry in store.list_catalogs():
        if entry.name != name:
            continue
        try:
            catalog = store.load_catalog(entry.path)
        except DeepVMError:
            continue
        if catalog.sha256 == sha256:
            return catalog, f"{entry.kind} catalog {name} (sha256 matches)"
    return None


def rebuild_catalog(record: Mapping[str, Any]) -> Catalog:
    """The catalog of the rows an export holds (``catalog.instance_types``, ``quotas``,
    ``network_saturation``), validated like any catalog.

    Raises:
        ExportError: the export holds no rows, or they are invalid.
    """
    rows = record.get("instance_types")
    if not isinstance(rows, Mapping):
        raise ExportError(
            f"the export's catalog {record.get('name')!r} (sha256 "
            f"{str(record.get('sha256'))[:12]}...) is not on this machine unchanged, and the "
            "export holds no instance rows to rebuild it from (it predates them)")
    data = {
        "schema_version": SCHEMA_VERSION,
        **{key: record.get(key) for key in ("name", "provider", "region", "prices_date",
                                            "source")},
        "gpu_types": rows.get("gpu_types"),
        "cpu_types": rows.get("cpu_types"),
        "quotas": record.get("quotas", []),
        "network_saturation": record.get("network_saturation"),
    }
    try:
        return parse_catalog(data, source="the export's catalog rows",
                             require_gpu_types=False)  # rows of its configurations only
    except CatalogError as exc:
        raise ExportError(exc.one_line()) from None


def catalog_of(doc: Mapping[str, Any]) -> tuple[Catalog, str]:
    """The catalog to replay ``doc`` on, and where it came from (module doc, step 3).

    Raises:
        ExportError: neither found nor rebuildable.
    """
    record = doc["catalog"]
    name, sha256 = record.get("name"), record.get("sha256")
    if isinstance(name, str) and isinstance(sha256, str) and not record.get("edited"):
        found = _stored_catalog(name, sha256)
        if found is not None:
            return found
    catalog = rebuild_catalog(record)
    why = "edited" if record.get("edited") else "not on this machine unchanged"
    return catalog, (f"rebuilt from the export's {len(catalog.gpu_types)} GPU and "
                     f"{len(catalog.cpu_types)} CPU types (catalog {name}: {why})")


def _identity(config: object) -> tuple[Any, ...] | None:
    """What must be equal: architecture, instance types and counts, hourly price."""
    if not isinstance(config, Mapping):
        return None
    gpu, cpu = (part if isinstance(part := config.get(key), Mapping) else {}
                for key in ("gpu", "cpu"))
    price = config.get("hourly_price")
    return (config.get("architecture"), gpu.get("name"), gpu.get("spot"), gpu.get("on_demand"),
            cpu.get("name"), cpu.get("on_demand"),
            round(price, 8) if isinstance(price, (int, float)) else price)


def _summary(config: object) -> str:
    if not isinstance(config, Mapping):
        return "none"
    return str(config.get("summary") or _identity(config))


def _at(doc: Mapping[str, Any], path: str) -> object:
    value: object = doc
    for key in path.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def compare_exports(exported: Mapping[str, Any], replayed: Mapping[str, Any]) -> list[str]:
    """The configurations of ``exported`` that ``replayed`` does not reproduce, one line each
    (``chosen`` need only be among the new top-k)."""
    out: list[str] = []
    listed = exported.get("deepvm")
    old: list[Any] = listed if isinstance(listed, list) else []
    new: list[Any] = replayed["deepvm"]
    for i in range(max(len(old), len(new))):
        before = old[i] if i < len(old) else None
        after = new[i] if i < len(new) else None
        if _identity(before) != _identity(after):
            out.append(f"deepvm[{i}]: exported {_summary(before)}; now {_summary(after)}")
    for path in _SINGLE:
        before, after = _at(exported, path), _at(replayed, path)
        if path == "chosen" and before is not None:
            if all(_identity(before) != _identity(c) for c in new):
                out.append(f"chosen: exported {_summary(before)}; now not among the top "
                           f"{len(new)}")
        elif _identity(before) != _identity(after):
            out.append(f"{path}: exported {_summary(before)}; now {_summary(after)}")
    return out


def _job_speed(doc: Mapping[str, Any], catalog: Catalog,
               scenario: Scenario) -> SpeedBasis | None:
    """The speed basis of the export's job (``job.inputs``), or ``None`` (the example job's).
    A measurement table is found again by its bundled name only."""
    job = doc.get("job")
    if not isinstance(job, Mapping) or not isinstance(job.get("inputs"), Mapping):
        return None
    inputs = job["inputs"]
    from deepvm_core.hardware.measurements import bundled_measurements_paths, load_measurements
    from deepvm_core.workload.speedup import SpeedupModel
    from deepvm_core.workload.workload import example_workload

    table = None
    bundled = bundled_measurements_paths()
    if inputs.get("measurements") is not None:
        if inputs["measurements"] not in bundled:
            raise ExportError(f"job.inputs.measurements {inputs['measurements']!r}: only a "
                              "bundled measurement table can be found again")
        table = load_measurements(bundled[inputs["measurements"]])
    try:
        workload = example_workload(
            epochs=inputs["epochs"], reference_epoch_seconds=inputs["reference_epoch_seconds"],
            reference_gpu=inputs["reference_gpu"], reference_nodes=inputs["reference_nodes"],
            checkpoint_gb=scenario.checkpoint_gb)
        return speed_basis(catalog, workload, SpeedupModel(inputs["speedup"], table))
    except (KeyError, DeepVMError) as exc:
        raise ExportError(f"the export's job cannot be read: {exc}") from None


def replay(doc: Mapping[str, Any]) -> ReplayResult:
    """Run the recommendation of an export again and compare (module doc).

    Raises:
        ExportError: the export cannot be replayed.
        DeepVMError: the recommendation itself fails (a search space too large).
    """
    scenario, top_k, solver = scenario_of(doc)
    catalog, origin = catalog_of(doc)
    try:
        rec = recommend(catalog, scenario, solver, top_k=top_k,
                        speed=_job_speed(doc, catalog, scenario))
    except DeepVMError as exc:
        raise ExportError(f"the export's recommendation cannot be run again: {exc}") from None
    wanted = _identity(doc.get("chosen"))
    chosen = next((c for c in rec.deepvm
                   if _identity(configuration_to_dict(c, scenario.objective)) == wanted), None)
    replayed = recommendation_to_dict(rec, catalog, chosen=chosen)
    notes = []
    version = doc.get("tool_version")
    if version != replayed["tool_version"]:
        notes.append(f"exported by version {version}, replayed by {replayed['tool_version']}")
    differences = compare_exports(doc, replayed)
    return ReplayResult(matches=not differences, differences=tuple(differences),
                        catalog_origin=origin, catalog=catalog, recommendation=rec,
                        replayed=replayed, notes=tuple(notes))
