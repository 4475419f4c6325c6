"""JSON export of a recommendation: one schema for the CLI (``--format json``) and the dashboard's
"Download configuration" button, so a launched cluster can always be traced to its inputs.

Schema (``EXPORT_SCHEMA_VERSION`` 1)::

    {
      "schema_version": 1, "tool": "deepvm-studio", "tool_version": "...",
      "generated_at": "2026-11-22T01:02:03Z",           # only with a timestamp
      "inputs": {"pw_usd_per_hour", "checkpoint_gb", "buffer_checkpoints", "objective",
                 "use_quotas", "max_nodes", "top_k", "solver"},
      "catalog": {"name", "sha256", "provider", "region", "prices_date"},
      "deepvm": [configuration, ...],                     # top-k, best first
      "deepvm_noscale": configuration | null,
      "cost_first": configuration | null,
      "performance_first": configuration | null,
      "best_per_architecture": {"single_anchor": configuration | null,
                                "tiering": configuration | null},
      "chosen": configuration | null,                     # the one picked (default: deepvm[0])
      "explanation": {...},                               # only when nothing is feasible
      "architecture_notes": {"tiering": {...}},           # architectures with no configuration
      "notes": ["..."]
    }

A configuration is ``{"architecture", "gpu": {"name", "spot", "on_demand"}, "cpu": {"name",
"on_demand"} | null, "hourly_price", "objective", "performance", ...}``: ``gpu.spot`` and
``gpu.on_demand`` count GPU VMs, ``cpu.on_demand`` memory nodes, ``objective`` is the value of
the chosen objective; the rest (``z_paper``, ``scaling_factor``, ``cluster_flopp``,
``summary``) are extras.
"""

from __future__ import annotations

from datetime import UTC, datetime
from importlib import metadata
from typing import Any

from deepvm_core.catalog import Catalog
from deepvm_core.model import Configuration, Objective
from deepvm_core.policies import Explanation, Recommendation

EXPORT_SCHEMA_VERSION = 1


def tool_version() -> str:
    """The installed package version (``0+unknown`` when run from a source tree)."""
    try:
        return metadata.version("deepvm-studio")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def configuration_to_dict(
    config: Configuration | None, objective: Objective, *, noscale: bool = False
) -> dict[str, Any] | None:
    """The export form of one configuration (``None`` stays ``None``)."""
    if config is None:
        return None
    return {
        "architecture": config.architecture,
        "gpu": {"name": config.gpu, "spot": config.gpu_spot, "on_demand": config.gpu_on_demand},
        "cpu": None if config.cpu is None else {"name": config.cpu,
                                                "on_demand": config.memory_nodes},
        "hourly_price": round(config.hourly_price_usd, 10),
        "objective": config.objective_value(objective, noscale=noscale),
        "performance": config.performance,
        "z_paper": config.z_paper,
        "scaling_factor": config.scaling_factor,
        "cluster_flopp": config.cluster_flopp,
        "summary": config.describe(),
    }


def explanation_to_dict(explanation: Explanation | None,
                        objective: Objective) -> dict[str, Any] | None:
    """The export form of an explanation."""
    if explanation is None:
        return None
    return {
        "summary": explanation.summary,
        "binding": list(explanation.binding),
        "cheapest_feasible_usd_per_hour": explanation.cheapest_feasible_usd_per_hour,
        "cheapest_configuration": configuration_to_dict(explanation.cheapest_configuration,
                                                        objective),
    }


def recommendation_to_dict(
    rec: Recommendation,
    catalog: Catalog,
    *,
    chosen: Configuration | None = None,
    timestamp: datetime | None = None,
) -> dict[str, Any]:
    """The export document of ``rec`` (see the module doc).

    Args:
        chosen: the configuration the user picked; defaults to the first recommendation.
        timestamp: adds ``generated_at`` (UTC, ISO 8601); omit for reproducible output.
    """
    s = rec.scenario
    obj = s.objective
    doc: dict[str, Any] = {
        "schema_version": EXPORT_SCHEMA_VERSION,
        "tool": "deepvm-studio",
        "tool_version": tool_version(),
    }
    if timestamp is not None:
        doc["generated_at"] = timestamp.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    doc.update({
        "inputs": {
            "pw_usd_per_hour": s.pw_usd_per_hour,
            "checkpoint_gb": s.checkpoint_gb,
            "buffer_checkpoints": s.buffer_checkpoints,
            "objective": obj,
            "use_quotas": s.use_quotas,
            "max_nodes": s.max_nodes,
            "top_k": rec.top_k,
            "solver": rec.solver,
        },
        "catalog": {
            "name": catalog.name,
            "sha256": rec.catalog_sha256,
            "provider": catalog.provider,
            "region": catalog.region,
            "prices_date": catalog.prices_date,
        },
        "deepvm": [configuration_to_dict(c, obj) for c in rec.deepvm],
        "deepvm_noscale": configuration_to_dict(rec.deepvm_noscale, obj, noscale=True),
        "cost_first": configuration_to_dict(rec.cost_first, obj),
        "performance_first": configuration_to_dict(rec.performance_first, obj),
        "best_per_architecture": {
            "single_anchor": configuration_to_dict(rec.best_single_anchor, obj),
            "tiering": configuration_to_dict(rec.best_tiering, obj),
        },
        "chosen": configuration_to_dict(chosen if chosen is not None else rec.best, obj),
    })
    if rec.explanation is not None:
        doc["explanation"] = explanation_to_dict(rec.explanation, obj)
    if rec.architecture_notes:
        doc["architecture_notes"] = {
            k: explanation_to_dict(v, obj) for k, v in rec.architecture_notes.items()}
    doc["notes"] = list(rec.notes)
    return doc
