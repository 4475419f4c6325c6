"""A recommend export with the user's job: the job's inputs and the job model's estimate of the
pick (key ``job``), said in the export's ``summary`` (``deepvm recommend --epochs ...`` and
Recommend's download)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from deepvm_core.catalog import Catalog
from deepvm_core.io.plan_json import estimate_to_dict
from deepvm_core.pipeline.recommend_job import RecommendJob, estimate_configuration, job_summary
from deepvm_core.recommend.recommendation import Recommendation


def with_job_estimate(doc: dict[str, Any], rec: Recommendation, catalog: Catalog,
                      job: RecommendJob) -> dict[str, Any]:
    """A copy of the recommend export ``doc`` with the job's inputs and the estimate of the
    pick (``job``), its ``summary`` saying it. ``doc`` is not changed."""
    out = dict(doc)
    w = job.workload
    inputs = {"epochs": w.epochs, "reference_epoch_seconds": w.reference_epoch_seconds,
              "reference_gpu": w.reference_gpu, "reference_nodes": w.reference_nodes,
              "workload": w.kind, "tokens_per_second": w.tokens_per_second,
              "transformer": None if w.transformer is None else asdict(w.transformer),
              "speedup": job.speedup.name,
              "measurements": None if job.speedup.measurements is None
              else job.speedup.measurements.source}
    estimate = None if rec.best is None else estimate_configuration(rec, catalog, job, rec.best)
    out["job"] = {"inputs": inputs,
                  "chosen_estimate": None if estimate is None else estimate_to_dict(estimate)}
    if estimate is not None:
        out["summary"] = f"{doc['summary'].rstrip('.')}; {job_summary(estimate, w)}."
    return out
