"""What the Plan a job page draws, computed outside the page: the MTBI table
(``job_frames``) and the frontier's points and marks (``plan_compute.frontier_points``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dashboard import job_frames, plan_compute
from deepvm_core.catalog.store import load_catalog
from deepvm_core.model import Scenario
from deepvm_core.pipeline.plan import plan_job
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import Workload

#: The Spot Advisor bucket's MTBI in hours (docs/method.md, issue 25: 1.9 h at > 20 %, the
#: development traces' median, doubled per bucket below), and 7.6 h for a type without a bucket.
BUCKET_HOURS = {0: 30.4, 1: 15.2, 2: 7.6, 3: 3.8, 4: 1.9, None: 7.6}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog("aws-us-east-1-2023-10")


def test_mtbi_table_shows_the_bucket_defaults_and_the_overrides(catalog) -> None:
    first = catalog.gpu_types[0].name
    frame = job_frames.mtbi_frame(catalog, {first: 3.5})
    assert list(frame["GPU type"]) == [g.name for g in catalog.gpu_types]
    for g, (_, row) in zip(catalog.gpu_types, frame.iterrows(), strict=True):
        if g.name == first:
            assert (row["Source"], row[job_frames.MTBI_COLUMN]) == ("user", "3.5")
        else:
            expected = "advisor" if g.interruption_bucket is not None else "default"
            assert row["Source"] == expected
            assert float(row[job_frames.MTBI_COLUMN]) == BUCKET_HOURS[g.interruption_bucket]


def test_mtbi_overrides_keep_only_changed_positive_finite_hours(catalog) -> None:
    names = [g.name for g in catalog.gpu_types]
    defaults = [str(BUCKET_HOURS[g.interruption_bucket]) for g in catalog.gpu_types]
    edited = pd.DataFrame({"GPU type": names, job_frames.MTBI_COLUMN: defaults})
    assert job_frames.mtbi_overrides(catalog, edited, {}) == ({}, [])
    edited.loc[0, job_frames.MTBI_COLUMN] = "1.25"
    edited.loc[1, job_frames.MTBI_COLUMN] = None  # a cleared cell: the default
    assert job_frames.mtbi_overrides(catalog, edited, {}) == ({names[0]: 1.25}, [])


def test_mtbi_cells_read_what_a_person_types(catalog) -> None:
    """Item 4: scientific notation and values below the old grid's 0.01 are read as typed; a
    refused cell keeps the value in use and says why."""
    names = [g.name for g in catalog.gpu_types]
    edited = pd.DataFrame({"GPU type": names[:3],
                           job_frames.MTBI_COLUMN: ["1e-9", "0.005", "abc"]})
    overrides, refused = job_frames.mtbi_overrides(catalog, edited, {names[2]: 7.0})
    assert overrides == {names[0]: 1e-9, names[1]: 0.005, names[2]: 7.0}
    assert refused == [f"MTBI of {names[2]}: 'abc' is not a number of hours"]
    edited[job_frames.MTBI_COLUMN] = ["0", "-2", "nan"]
    overrides, refused = job_frames.mtbi_overrides(catalog, edited, {})
    assert overrides == {}
    assert refused == [f"MTBI of {names[0]}: 0 h must be greater than 0",
                       f"MTBI of {names[1]}: -2 h must be greater than 0",
                       f"MTBI of {names[2]}: nan h must be a finite number"]


@pytest.fixture(scope="module")
def plan(catalog):
    scenario = Scenario(3.0, use_quotas=False)
    workload = Workload(epochs=30, reference_epoch_seconds=61.16)
    return plan_job(catalog, scenario, workload, pw_usd_per_hour=3.0,
                    speedup=SpeedupModel("fitted"), trials=0)


def test_frontier_points_mark_the_chosen_and_the_policies(plan) -> None:
    points = plan_compute.frontier_points(plan, limit=10)
    assert points.marks[plan.best[0].index] == "best"
    deepvm = plan.policies.deepvm[0].index
    if deepvm != plan.best[0].index:
        assert points.marks[deepvm] == "deepvm"
    assert set(points.frontier) == {int(i) for i in plan.frontier}
    # At most 10 background points, plus the frontier and the marked, ascending and unique.
    assert len(points.shown) <= 10 + len(points.frontier) + len(points.marks)
    assert set(points.frontier) | set(points.marks) <= set(points.shown.tolist())
    assert list(points.shown) == sorted(set(points.shown.tolist()))
    # The same sample on every call (the chart must not flicker between reruns).
    assert np.array_equal(plan_compute.frontier_points(plan, limit=10).shown, points.shown)
    assert points.finishing == int(np.count_nonzero(plan.finishes))

