"""Issue 24, item 2: Regions ranks regions by the same job's expected time (objective speed)
and cost on each region's best cluster, and the chart's "best" bar is the best one (the
longest: the job's epochs per expected hour).

On the bundled regional catalogs, with the example job and with a job of one's own, the best
region has the least expected job time of the regions shown. The job times are checked against
the job model written independently (``tests/job_oracle.py``, closed form on the region's pick).
"""

from __future__ import annotations

import math

import pytest

from dashboard import charts, result_frames
from deepvm_core.catalog import Catalog
from deepvm_core.catalog.store import load_catalog
from deepvm_core.model import Scenario
from deepvm_core.pipeline.regions_job import compare_regions_for_job
from deepvm_core.workload.workload import Workload
from tests import job_oracle, oracle

REGIONAL = ("aws-eu-central-1-2025-h1", "aws-us-east-1-2025-h1", "aws-us-east-2-2025-h1",
            "aws-us-west-2-2025-h1")


@pytest.fixture(scope="module")
def by_region() -> dict[str, Catalog]:
    return {c.region: c for c in (load_catalog(n) for n in REGIONAL)}


JOBS = {"example": None,
        "own": Workload(epochs=30.0, reference_epoch_seconds=100.0, checkpoint_gb=0.3)}


@pytest.mark.parametrize("pw", [3.0, 10.0])
@pytest.mark.parametrize("job", list(JOBS))
def test_the_best_region_has_the_least_job_time(by_region: dict[str, Catalog], pw: float,
                                                job: str) -> None:
    workload = JOBS[job]
    rows = compare_regions_for_job(by_region, Scenario(pw, objective="speed"), workload)
    shown = [r for r in rows if r.best is not None]
    assert len(shown) == len(REGIONAL)
    hours = [r.job_hours for r in shown]
    assert all(h is not None and math.isfinite(h) for h in hours)
    assert hours[0] == min(h for h in hours if h is not None)
    assert hours == sorted(h for h in hours if h is not None)
    epochs = 90.0 if workload is None else workload.epochs
    t_ref = 960.0 if workload is None else workload.reference_epoch_seconds
    for r in shown:
        assert r.best is not None
        catalog = by_region[r.region]
        c = r.best
        config = oracle.OracleConfiguration(c.architecture, c.gpu, c.gpu_vms, c.cpu,
                                            c.memory_nodes, c.hourly_price_usd, 0, 0, 0, 0)
        want = job_oracle.evaluate(catalog, job_oracle.Job(epochs=epochs, t_ref=t_ref,
                                                           f_gb=0.3), config).expectation
        assert r.job_hours == pytest.approx(want.makespan_h, rel=1e-9)
        assert r.job_cost_usd == pytest.approx(want.cost_usd, rel=1e-9)
    # The chart: the best (green) bar is the longest, on top.
    frame = result_frames.region_frame(rows, pw, "speed")
    fig = charts.region_bars(frame, "speed")
    x = list(fig.data[0].x)
    assert fig.data[0].y[-1] == shown[0].region  # plotly draws the last row on top
    assert x[-1] == max(x)
    assert x[-1] == pytest.approx(epochs / hours[0])
    assert "epochs per hour" in fig.layout.xaxis.title.text
