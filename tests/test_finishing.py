"""Issue 24, item 2: Recommend never badges a cluster on which the job does not finish; it says
so and names the best cluster that does, or the PW that would allow one
(:mod:`deepvm_core.pipeline.finishing`).

The job is made unable to finish on g4dn.xlarge and g3s.xlarge (an MTBI of 3.6 s: a retry needs
minutes without an interruption) in the paper's catalog, aws-us-east-1-2023-10, whose prices
are read off the file: g5.xlarge spot 0.3018 USD/h, t3.xlarge on demand 0.1664 USD/h, so the
cheapest cluster with a g5.xlarge is TR 1 x g5.xlarge + 1 x t3.xlarge at 0.4682 USD/h.
"""

from __future__ import annotations

import pytest

from deepvm_core.catalog import Catalog
from deepvm_core.model import Scenario
from deepvm_core.pipeline.finishing import finishing_answer
from deepvm_core.pipeline.recommend_job import RecommendJob, recommend_job
from deepvm_core.recommend.recommendation import recommend
from deepvm_core.workload.workload import Workload


def job(aws_catalog: Catalog, *failing: str) -> RecommendJob:
    return recommend_job(aws_catalog, Workload(
        epochs=90.0, reference_epoch_seconds=960.0,
        mtbi_hours_by_gpu=dict.fromkeys(failing, 0.001)))


def test_a_cluster_that_finishes_is_recommended(aws_catalog: Catalog) -> None:
    j = job(aws_catalog)
    rec = recommend(aws_catalog, Scenario(3.0), top_k=3, speed=j.speed)
    answer = finishing_answer(rec, aws_catalog, j)
    assert answer is not None
    assert answer.finishes
    assert answer.sentence is None


def test_the_best_cluster_within_pw_that_finishes(aws_catalog: Catalog) -> None:
    """At PW 3 the top-k are all 17 x g4dn.xlarge (not finishing): the answer is a cluster of
    g5.xlarge (the one type left that finishes), within PW."""
    j = job(aws_catalog, "g4dn.xlarge")
    rec = recommend(aws_catalog, Scenario(3.0), top_k=3, speed=j.speed)
    assert rec.best is not None
    assert rec.best.gpu == "g4dn.xlarge"
    answer = finishing_answer(rec, aws_catalog, j)
    assert answer is not None
    assert not answer.finishes
    assert answer.pick is not None
    assert answer.pick.gpu in {"g5.xlarge", "g3s.xlarge"}
    assert answer.pick.hourly_price_usd <= 3.0
    assert answer.sentence is not None
    assert answer.sentence.startswith("The job is not expected to finish on TR: 17 x "
                                      "g4dn.xlarge")
    assert "not recommended" in answer.sentence
    assert f"finishes: {answer.pick.describe()}" in answer.sentence


def test_the_pw_that_would_allow_a_finishing_cluster(aws_catalog: Catalog) -> None:
    """At PW 0.45 only g4dn.xlarge clusters are affordable; the first that finishes is TR 1 x
    g5.xlarge + 1 x t3.xlarge at 0.3018 + 0.1664 = 0.4682 USD/h: lift PW to 0.47 USD/h."""
    j = job(aws_catalog, "g4dn.xlarge", "g3s.xlarge")
    rec = recommend(aws_catalog, Scenario(0.45), top_k=3, speed=j.speed)
    answer = finishing_answer(rec, aws_catalog, j)
    assert answer is not None
    assert not answer.finishes
    assert answer.pick is None
    assert answer.lift_pw_usd_per_hour == pytest.approx(0.47)
    assert answer.lift_configuration is not None
    assert answer.lift_configuration.hourly_price_usd == pytest.approx(0.4682)
    assert answer.sentence is not None
    assert "Lift PW to 0.47 USD/h for the first cluster that finishes" in answer.sentence


def test_no_cluster_finishes_at_any_price(aws_catalog: Catalog) -> None:
    j = job(aws_catalog, "g4dn.xlarge", "g3s.xlarge", "g5.xlarge")
    rec = recommend(aws_catalog, Scenario(3.0), top_k=3, speed=j.speed)
    answer = finishing_answer(rec, aws_catalog, j)
    assert answer is not None
    assert answer.pick is None
    assert answer.lift_pw_usd_per_hour is None
    assert answer.sentence is not None
    assert "finishes on no cluster of this catalog at any price" in answer.sentence


def test_cli_recommend_says_the_pick_is_not_recommended_and_names_the_pw(capsys):
    """2 epochs of 1,000 h with a checkpoint per epoch: a retry needs far more than the 2 h
    between interruptions of the types within PW 3, so the pick does not finish it, and the
    table says so and names the PW of the first cluster that does."""
    from cli_helpers import run_cli
    code, out, err = run_cli(capsys, "recommend", "--catalog", "aws-us-east-1-2025-h1", "--pw",
                             "3", "--epochs", "2", "--epoch-seconds", "3600000")
    assert code == 0, err
    assert "so it is not recommended" in out
    assert "Lift PW to" in out


@pytest.mark.parametrize(("mtbi", "compute", "expected"), [
    # a market that is never up (λ infinite): not blamed on the compute (issue 27, finding 8,
    # which read "9.9 h of compute, beyond the 114 years a plan accepts")
    (0.0, 9.9, "does not finish: its spot VMs are interrupted without pause (a mean time "
               "between interruptions of 0 h: a market that is never up)"),
    # no spot VM, and the compute itself past the horizon (2e6 h / 8766 h a year = 228.2
    # years; the horizon 1e6 h = 114.1 years)
    (None, 2e6, "does not finish: 228.2 years of compute, beyond the 114.1 years a plan "
                "accepts"),
    # an MTBI of 1 h, a restart of 30 min and 45 min to the next checkpoint: 1.2 h per retry
    (1.0, 9.9, "does not finish: an interruption every 1.0 h, but a retry needs 1.2 h without "
               "one (restart 30 min + 45 min to the next checkpoint)"),
])
def test_why_a_cluster_does_not_finish_names_the_cause(mtbi: float | None, compute: float,
                                                        expected: str) -> None:
    from deepvm_core.job.finish import unfinished_reason

    assert unfinished_reason(mtbi_hours=mtbi, restart_hours=0.5, segment_hours=0.75,
                             compute_hours=compute) == expected
