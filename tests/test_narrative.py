"""Why a recommendation: the sentences under the Recommend card
(deepvm_core.recommend.narrative)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deepvm_core.catalog import Catalog
from deepvm_core.model import Scenario
from deepvm_core.recommend.narrative import why
from deepvm_core.recommend.recommendation import recommend
from tests.factories import catalogs, scenarios


def test_table_iv_sentences(aws_catalog: Catalog) -> None:
    """PW 3.0 USD/h (model.md, Table IV). From the configurations:

    * DeepVM: Tiering, 17 g4dn.xlarge spot + 1 c5.xlarge, performance 6374.78.
    * Cost-First: Single Anchor, 16 g4dn.xlarge (15 spot + 1 on-demand), performance 6017.03.
    * Performance-First: Single Anchor, 7 g5.xlarge (6 + 1), performance 4872 (K = 1).

    Strongest baseline first: 6374.78 / 6017.03 = 1.0595 -> 5.9 %; 6374.78 / 4872 = 1.3085
    -> 31 %. The memory node: 1 x c5.xlarge on demand at 0.17 USD/h. Under the paper's
    objective the sentence compares the paper's proxy, performance ("training throughput").
    """
    rec = recommend(aws_catalog, Scenario(3.0, objective="paper"))
    assert why(rec, catalog=aws_catalog) == (
        "17 g4dn.xlarge spot VMs deliver 5.9 % more training throughput than Cost-First "
        "(16 g4dn.xlarge), and 31 % more than Performance-First (7 g5.xlarge), within the "
        "same budget of 3.00 USD/h.",
        "One c5.xlarge on-demand memory node keeps the checkpoints safe from spot reclaims "
        "for 0.17 USD/h.",
    )
    # without the catalog, the memory node's price is left out
    assert why(rec)[1] == "One c5.xlarge on-demand memory node keeps the checkpoints safe " \
        "from spot reclaims."


def test_single_anchor_sentences(aws_catalog: Catalog) -> None:
    """The best Single Anchor at PW 3.0 is Cost-First's own pick (16 g4dn.xlarge, 6017.03):
    6017.03 / 4872 = 1.2350 -> 24 % more than Performance-First (objective paper)."""
    rec = recommend(aws_catalog, Scenario(3.0, objective="paper"))
    assert why(rec, rec.best_single_anchor, aws_catalog) == (
        "16 g4dn.xlarge VMs, also Cost-First's pick, deliver 24 % more training throughput "
        "than Performance-First (7 g5.xlarge), within the same budget of 3.00 USD/h.",
        "One on-demand g4dn.xlarge anchors the 15 spot VMs and keeps the checkpoints, so a "
        "spot reclaim never loses the training state.",
    )


def test_a_stronger_baseline_is_said(aws_catalog: Catalog) -> None:
    """PW 5.0: Performance-First (14 g5.xlarge, 14 x 696 = 9744) beats DeepVM(Z)'s Tiering
    choice (29 g4dn.xlarge spot + 2 t3.xlarge), and the sentence says so."""
    rec = recommend(aws_catalog, Scenario(5.0, objective="paper"))
    best = rec.best
    assert best is not None
    assert rec.performance_first is not None
    assert rec.performance_first.performance > best.performance
    first = why(rec, catalog=aws_catalog)[0]
    assert first.startswith("Performance-First (14 g5.xlarge) has 3.3 % more training "
                            "throughput than this choice (29 g4dn.xlarge spot + 2 t3.xlarge)")


def test_the_why_line_uses_the_jobs_speed(aws_catalog: Catalog) -> None:
    """Issue 24: under the speed objective the sentence compares the job's speed (epochs per
    hour, 3600 S_g(n) / t_g(1)), the figure behind the job's time on the card, not the proxy.
    PW 3: the same three clusters as Table IV. Fitted S, S(n) = c / (1 + exp(-a (n - b))):
    g4dn.xlarge (a 0.1338806402, b 12.87424514, c 6.176666667) S(17) = 3.92022, S(16) =
    6.176666667 / (1 + exp(-0.4184782)) = 3.72527; g5.xlarge (a 0.08533428072, b 20.06669931,
    c 4.962225551) S(7) = 4.962225551 / (1 + exp(1.1150357)) = 1.22534. One-VM times on the
    yardstick 960 x 696 / E: g4dn.xlarge 960 x 696 / 377, g5.xlarge 960 s. So 17 g4dn over 16
    g4dn: 3.92022 / 3.72527 = 1.0523 -> 5.2 %; over 7 g5: 3.92022 x 377 / (696 x 1.22534) =
    1.7330 -> 73 %; 16 g4dn over 7 g5: 3.72527 x 377 / (696 x 1.22534) = 1.6468 -> 65 %."""
    rec = recommend(aws_catalog, Scenario(3.0, objective="speed"))
    assert why(rec, catalog=aws_catalog)[0] == (
        "17 g4dn.xlarge spot VMs deliver 5.2 % more training speed than Cost-First "
        "(16 g4dn.xlarge), and 73 % more than Performance-First (7 g5.xlarge), within the "
        "same budget of 3.00 USD/h.")
    assert why(rec, rec.best_single_anchor, aws_catalog)[0] == (
        "16 g4dn.xlarge VMs, also Cost-First's pick, deliver 65 % more training speed "
        "than Performance-First (7 g5.xlarge), within the same budget of 3.00 USD/h.")


def test_nothing_feasible_says_nothing(aws_catalog: Catalog) -> None:
    rec = recommend(aws_catalog, Scenario(0.01))
    assert rec.best is None
    assert why(rec, catalog=aws_catalog) == ()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(catalog=catalogs(min_cpus=1), scenario=scenarios(), data=st.data())
def test_random_catalogs(catalog: Catalog, scenario: Scenario, data: st.DataObject) -> None:
    """Never raises, never shows "nan" or "None"; one sentence per fact, each a full stop."""
    rec = recommend(catalog, scenario, top_k=3)
    chosen = data.draw(st.sampled_from(rec.deepvm)) if rec.deepvm else None
    sentences = why(rec, chosen, catalog)
    assert (len(sentences) > 0) == (rec.best is not None)
    for sentence in sentences:
        assert "nan" not in sentence.lower().split()
        assert "None" not in sentence
        assert "inf" not in sentence.split()
        assert sentence.endswith(".")
