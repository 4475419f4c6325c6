"""Issue 18's dashboard part, one answer: the user's job drives every number, Recommend and
Plan a job name the same cluster or say why not, the budget holder's card (on-demand baseline,
saving, done-by time, confidence, 1.5x warning), distinct top-k clusters, the epoch-time
offer, presentation mode's plain words, and the exports' job estimate.

Expected figures come from the oracles (``tests/oracle.py``, ``tests/job_oracle.py``: plain
loops over the catalog's raw fields) or by hand; never from the code under test.
"""

from __future__ import annotations

import csv
import json
import re

import pytest
from app_pages import APP, new_app, no_errors, opened
from streamlit.testing.v1 import AppTest

from deepvm_core.catalog.store import load_catalog
from deepvm_core.hardware.measurements import bundled_measurements_paths
from deepvm_core.model import Scenario
from tests import job_oracle, oracle
from tests.app_expectations import pinned

AWS = "aws-us-east-1-2023-10"
#: The example job (deepvm_core.workload.speed): 90 epochs of 960 s on one g_ref VM, written
#: here as the issue states it, not imported.
EPOCHS, T_REF = 90.0, 960.0


@pytest.fixture
def app(tmp_path, monkeypatch) -> AppTest:
    # The figures below are the 2023-10 catalog's (the dashboard's default is today's).
    return pinned(new_app(tmp_path, monkeypatch))


def markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.main.markdown)


def number(pattern: str, text: str) -> float:
    """The first number the regex ``pattern`` (one group) finds in ``text``."""
    match = re.search(pattern, text)
    assert match, (pattern, text)
    return float(match.group(1).replace(",", ""))


def bundled_rows() -> dict[str, dict[int, float]]:
    """The bundled measurements, read with the csv module (for the job oracle)."""
    rows: dict[str, dict[int, float]] = {}
    with open(bundled_measurements_paths()["deepvm-scaling"], newline="") as handle:
        for row in csv.DictReader(handle):
            rows.setdefault(row["instance"], {})[int(row["nodes"])] = float(row["epoch_seconds"])
    return rows


def job_on_the_speed_pick(epochs: float,
                          t_ref: float) -> tuple[job_oracle.Job, job_oracle.Expectation]:
    """A job of ``epochs`` epochs of ``t_ref`` s (the bundled measurements) and the job
    oracle's expectation of it on the oracle's pick by speed at PW 3 (the paper's catalog)."""
    catalog = load_catalog(AWS)
    job = job_oracle.Job(epochs=epochs, t_ref=t_ref, measurements=bundled_rows())
    pick = oracle.top_k(catalog, Scenario(3.0, objective="speed"), 1)[0]
    return job, job_oracle.evaluate(catalog, job, pick).expectation


def export_doc(at: AppTest) -> dict:
    at.session_state["rec_preview"] = True
    at.run()
    return json.loads(at.code[0].value)


# ----------------------------------------------------------------------------- Recommend


def test_default_recommend_card_states_the_example_job_in_numbers(app: AppTest) -> None:
    app.run()
    no_errors(app)
    assert app.session_state["sb_objective"] == "speed"
    text = markdown(app)
    catalog = load_catalog(AWS)
    (pick,) = oracle.top_k(catalog, Scenario(3.0, objective="speed"), 1)
    assert pick.identity == ("tiering", "g4dn.xlarge", 17, "c5.xlarge", 1)
    # The example job without a measurement table (the CLI's recommend without a job).
    job = job_oracle.evaluate(catalog, job_oracle.Job(epochs=EPOCHS, t_ref=T_REF), pick)
    e = job.expectation  # about 18.08 USD and 6.3 h
    assert (f"The example job (90 epochs) on this cluster: about **{e.cost_usd:,.2f} USD** and "
            f"**{e.makespan_h:.1f} h** expected.") in text
    # Speed as a multiple of one A10G (the yardstick, issue 24): the example job runs 3600 /
    # 960 = 3.75 epochs/h there; 17 g4dn.xlarge: 3600 S(17) / (960 x 696 / 377) = 3600 x
    # 3.9202 x 377 / (960 x 696) = 7.96 epochs/h, 7.96 / 3.75 = 2.12 x one A10G.
    g4 = next(g for g in catalog.gpu_types if g.name == "g4dn.xlarge")
    per_hour = oracle.speed(g4, 17)
    assert f"{per_hour:.2f}" == "7.96"
    assert f"{per_hour / (3600 / 960):.2f}" == "2.12"
    assert ("Training speed: **2.12 × one A10G** (7.96 epochs of the job per hour)"
            in text)
    # On demand: 17 x 0.526 + 0.17 = 9.112 USD/h over the uninterrupted 6.128 h.
    od_cost = (17 * 0.526 + 0.17) * e.on_demand_makespan_h
    saved = od_cost - e.cost_usd
    assert (f"The same cluster on demand: {od_cost:,.2f} USD, {e.on_demand_makespan_h:.1f} h, "
            "no interruption risk.") in text
    assert f"saves **{saved:,.2f} USD** ({100 * saved / od_cost:.1f} %)" in text
    assert "(UTC; your browser's time zone is unknown) if started now." in text
    assert re.search(r"9 runs in 10 finish within [\d.]+ h and cost under [\d.,]+ USD", text)
    captions = " ".join(c.value for c in app.main.caption)
    assert "a ResNet-50-sized job" in captions
    assert "edit the epoch time to yours" in captions
    assert "**Your job**" not in text  # no job is set


def test_top_k_lists_distinct_clusters_with_their_memory_node_variants(app: AppTest) -> None:
    app.run()
    no_errors(app)
    frame = next(d.value for d in app.dataframe if "Training speed" in d.value.columns)
    # The oracle's ranking by speed, folded by (architecture, GPU type, n) with plain loops,
    # slower-and-dearer clusters left out (issue 27): its top 3 configurations are one cluster
    # (c5, m6i, c5n memory nodes).
    ranked = oracle.ranked(oracle.configurations(load_catalog(AWS),
                                                 Scenario(3.0, objective="speed"), 3.0),
                           "speed")
    first3 = oracle.distinct_undominated(ranked)[:3]
    assert [tuple(r) for r in frame[["GPU type", "GPU spot", "GPU on-demand"]].values] == [
        (c.gpu, c.n - (c.architecture == "single_anchor"), int(c.architecture == "single_anchor"))
        for c in first3]
    top3_cpus = [c.cpu for c in ranked[:3]]
    assert top3_cpus == ["c5.xlarge", "m6i.xlarge", "c5n.xlarge"]
    assert frame["Memory nodes"].iloc[0] == "1 × c5.xlarge (or m6i.xlarge, c5n.xlarge)"
    assert all(s.endswith("× one A10G") for s in frame["Training speed"])


def test_job_set_recommend_card_names_the_plans_cluster_and_why(app: AppTest) -> None:
    opened(app, epochs="30")
    text = markdown(app)
    catalog = load_catalog(AWS)
    job, pick = job_on_the_speed_pick(30.0, T_REF)
    assert (f"Your job (30 epochs) on this cluster: about **{pick.cost_usd:,.2f} USD**"
            in text)
    # Plan a job's goal is the cheapest job: the oracle's least expected cost at PW 3.
    cheapest = min(job_oracle.evaluate_all(catalog, Scenario(3.0), 3.0, job),
                   key=lambda j: j.expectation.cost_usd)
    assert cheapest.config.gpu == "g5.xlarge"
    assert cheapest.config.n == 1
    sentence = next(m.value for m in app.main.markdown if "The plan picks" in m.value)
    assert "TR: 1 x g5.xlarge spot" in sentence
    assert f"{cheapest.expectation.cost_usd:,.2f} USD expected, the least expected cost" in (
        sentence)
    assert (f"Recommend picks TR: 17 x g4dn.xlarge spot + 1 x c5.xlarge, 2.8526 USD/h: "
            f"{pick.makespan_h:.1f} h and {pick.cost_usd:,.2f} USD expected, the most epochs "
            "per hour within PW 3 USD/h.") in sentence


def test_epoch_time_in_the_url_drives_recommends_numbers(app: AppTest) -> None:
    """epoch_s=9600 (10 x the example's): the speed per hour is a tenth, the multiple of one
    A10G stays (it does not depend on t_ref), the job's time and cost follow."""
    opened(app, epoch_s="9600")
    text = markdown(app)
    # A job set on Plan a job uses the measurements in use (the bundled table): its one-A10G
    # type g5.xlarge (31.009284 s on one node) stands for the yardstick, so one g4dn.xlarge
    # (61.155439 s) takes 9600 x 61.155439 / 31.009284 = 18932.8 s per epoch, and 17 of them
    # 3600 x S(17) / 18932.8 = 3600 x 3.9202232 / 18932.8 = 0.745 epochs per hour, 0.745 /
    # (3600 / 9600) = 1.99 x one A10G.
    assert ("Training speed: **1.99 × one A10G** (0.75 epochs of the job per hour)"
            in text)
    _, pick = job_on_the_speed_pick(EPOCHS, 9600.0)
    assert f"Your job (90 epochs) on this cluster: about **{pick.cost_usd:,.2f} USD**" in text


def test_recommend_export_carries_the_job_once_set(app: AppTest) -> None:
    app.run()
    doc = export_doc(app)
    assert "job" not in doc
    assert doc["inputs"]["objective"] == "speed"
    assert "the same cluster on demand" not in doc["summary"]
    at = pinned(AppTest.from_file(str(APP), default_timeout=90))
    opened(at, epochs="30")
    doc = export_doc(at)
    _, pick = job_on_the_speed_pick(30.0, T_REF)
    assert doc["job"]["inputs"]["epochs"] == 30
    assert doc["job"]["chosen_estimate"]["expected_cost_usd"] == pytest.approx(pick.cost_usd,
                                                                               rel=1e-9)
    assert f"costs {pick.cost_usd:,.2f} USD expected; the same cluster on demand" in (
        doc["summary"])
    import jsonschema

    from deepvm_core.io.schemas import load_schema

    jsonschema.validate(doc, load_schema("recommend"))  # unknown keys are forbidden


# ----------------------------------------------------------------------------- Plan a job


def plan_card(at: AppTest) -> str:
    return next(m.value for m in at.main.markdown if m.value.startswith("### "))


TIME = r"([\d.,]+ (?:min|h|days))"


def hours(pattern: str, text: str) -> float:
    """The duration the regex ``pattern`` (one group, :data:`TIME`) finds, in hours."""
    match = re.search(pattern, text)
    assert match, (pattern, text)
    value, unit = match.group(1).rsplit(" ", 1)
    return float(value.replace(",", "")) * {"min": 1 / 60, "h": 1.0, "days": 24.0}[unit]


def card_times(at: AppTest) -> dict[str, float]:
    """Every time on Plan's card, hours (seconds for the epoch time)."""
    head, text = plan_card(at), markdown(at)
    epoch = next(m for m in at.main.metric if m.label == "Epoch time (s)").value
    return {
        "expected_h": hours(rf"done in about \*\*{TIME}\*\*", head),
        "p90_h": hours(rf"\(P90 {TIME}\)", head),
        "on_demand_h": hours(rf"The same cluster on demand: [\d.,]+ USD, {TIME}", text),
        "confidence_h": hours(rf"9 runs in 10 finish within {TIME}", text),
        "epoch_s": float(epoch.removesuffix(" s").replace(",", "")),
    }


def test_epoch_time_times_ten_makes_every_time_on_the_card_ten_times(app: AppTest) -> None:
    """t_ref drives every time (the bundled table gives only relative speeds). Interruptions
    are taken away (MTBI 100,000 h x 4) so that the job's times scale linearly: what remains
    is the checkpoint stall, 0.5 s per epoch-long segment, under 0.2 % of it."""
    mtbi = ",".join(f"{g.name}:100000" for g in load_catalog(AWS).gpu_types)
    app.query_params.update({"page": "plan", "mtbi_scale": "4", "mtbi": mtbi})
    app.run()
    no_errors(app)
    headline = re.compile(r"\*\*(?:Tiering|Single Anchor) · [^*]+\*\*")
    before, cluster = card_times(app), headline.findall(markdown(app))[0]
    app.number_input(key="plan_epoch_s").set_value(T_REF * 10).run()
    no_errors(app)
    after = card_times(app)
    assert headline.findall(markdown(app))[0] == cluster  # the same cluster, 10 x the times
    assert app.query_params["epoch_s"] == "9600"
    # shown to 0.1 s: 10 x a value within ±0.05 s is within ±0.5 s
    assert after["epoch_s"] == pytest.approx(10 * before["epoch_s"], abs=0.55)
    for name in ("expected_h", "p90_h", "on_demand_h", "confidence_h"):
        # shown to 0.1 h (0.1 day past 48 h): 10 x a value within ±0.05 h is within ±0.5 h,
        # the other within ±1.2 h; plus 0.2 % for the stalls
        assert after[name] == pytest.approx(10 * before[name], abs=1.7 + 0.002 * after[name]), (
            name)
    # and the times themselves are the job oracle's (g_ref g4dn.xlarge, bundled table)
    catalog = load_catalog(AWS)
    job = job_oracle.Job(epochs=EPOCHS, t_ref=T_REF * 10, measurements=bundled_rows(),
                         mtbi_h={g.name: 100_000.0 for g in catalog.gpu_types}, mtbi_scale=4.0)
    cheapest = min(job_oracle.evaluate_all(catalog, Scenario(3.0), 3.0, job),
                   key=lambda j: j.expectation.cost_usd)
    assert after["epoch_s"] == pytest.approx(cheapest.epoch_s, abs=0.05)
    assert after["expected_h"] == pytest.approx(cheapest.expectation.makespan_h, abs=1.2)


def test_plan_card_has_the_budget_holders_lines_and_the_1_5x_warning(app: AppTest) -> None:
    app.query_params.update({"page": "plan", "epoch_s": "4000", "mtbi_scale": "0.25"})
    app.run()
    no_errors(app)
    text = markdown(app)
    catalog = load_catalog(AWS)
    job = job_oracle.Job(epochs=EPOCHS, t_ref=4000.0, measurements=bundled_rows(),
                         mtbi_scale=0.25)
    best = min(job_oracle.evaluate_all(catalog, Scenario(3.0), 3.0, job),
               key=lambda j: j.expectation.cost_usd)
    e = best.expectation
    assert e.makespan_h > 1.5 * e.on_demand_makespan_h  # 2.3x: the warning is due
    gpu = next(g for g in catalog.gpu_types if g.name == best.config.gpu)
    cpu = next(w for w in catalog.cpu_types if w.name == best.config.cpu)
    od_cost = (best.config.n * gpu.on_demand_usd_per_hour
               + best.config.m * cpu.on_demand_usd_per_hour) * e.on_demand_makespan_h
    warning = " ".join(w.value for w in app.warning)
    assert (f"Interruptions stretch this job to {e.makespan_h / e.on_demand_makespan_h:.1f}x "
            "its uninterrupted time") in warning
    assert "The same cluster on demand takes" in warning
    assert f"{od_cost:,.2f} USD" in warning
    assert f"The same cluster on demand: {od_cost:,.2f} USD" in text
    assert "if started now" in text
    assert "9 runs in 10 finish within" in text


def test_default_plan_states_the_example_and_the_comparison(app: AppTest) -> None:
    opened(app, page="plan")
    captions = " ".join(c.value for c in app.main.caption)
    assert "The job above is an example, a ResNet-50-sized job" in captions
    sentence = next(m.value for m in app.main.markdown if "The plan picks" in m.value)
    assert "Recommend picks TR: 17 x g4dn.xlarge spot + 1 x c5.xlarge" in sentence
    app.number_input(key="plan_epoch_s").set_value(500.0).run()
    assert "The job above is an example" not in " ".join(c.value for c in app.main.caption)


MEASURED = (b"instance,nodes,epoch_seconds\n"
            b"g4dn.xlarge,1,120\ng4dn.xlarge,2,70\ng5.xlarge,1,50\ng5.xlarge,2,30\n")


def test_epoch_time_offer_takes_g_refs_one_node_time_on_one_click(app: AppTest) -> None:
    app.query_params["page"] = "plan"
    app.run()
    app.file_uploader(key="plan_csv").upload("mine.csv", MEASURED, "text/csv")
    app.run()
    no_errors(app)
    assert app.session_state["plan_epoch_s"] == T_REF  # nothing happens silently
    # Without a named reference type the epoch time is on one A10G (issue 24): the offer is the
    # catalog's one-A10G type, g5.xlarge, and its one-node time in the file.
    button = app.button(key="plan_use_epoch_time")
    assert button.label == ("Use g5.xlarge's one-node time from this file as my epoch time "
                            "(50 s on 1 VM)")
    button.click().run()
    no_errors(app)
    assert app.session_state["plan_epoch_s"] == 50.0
    assert (app.session_state["plan_ref"], app.session_state["plan_ref_nodes"]) == (
        "g5.xlarge", 1)
    assert app.query_params["epoch_s"] == "50"
    assert app.query_params["ref"] == "g5.xlarge"
    assert any("one-node time from mine.csv: 50 s" in s.value for s in app.success)
    # The card follows: one g4dn.xlarge VM takes 50 x 120 / 50 = 120 s per epoch here.
    head = plan_card(app)
    assert head.startswith("### 90 epochs of your job")


def test_epoch_time_offer_without_g_ref_or_out_of_bounds(app: AppTest) -> None:
    app.query_params["page"] = "plan"
    app.run()
    app.file_uploader(key="plan_csv").upload(
        "other.csv", b"instance,nodes,epoch_seconds\ng4dn.xlarge,1,120\ng4dn.xlarge,2,70\n",
        "text/csv")
    app.run()
    no_errors(app)
    assert any("other.csv has no one-node time of g5.xlarge" in c.value
               for c in app.main.caption)
    app.file_uploader(key="plan_csv").upload(
        "huge.csv", b"instance,nodes,epoch_seconds\ng5.xlarge,1,20000000\n"
                    b"g5.xlarge,2,11000000\n", "text/csv")
    app.run()
    no_errors(app)
    errors = " ".join(e.value for e in app.error)
    assert "Seconds per epoch 2e+07 from huge.csv is outside" in errors
    assert app.session_state["plan_epoch_s"] == T_REF


def test_presentation_mode_on_plan_uses_plain_words(app: AppTest) -> None:
    app.query_params.update({"page": "plan", "presentation": "on"})
    app.run()
    no_errors(app)
    sentence = next(m.value for m in app.main.markdown if "The plan picks" in m.value)
    assert "TR:" not in sentence
    assert "PW" not in sentence
    assert "Tiering" not in sentence  # issue 27: in plain words
    assert "spot GPUs with a memory server: 1 x g5.xlarge" in sentence
    assert "hourly spending cap of 3 USD/h" in sentence
    knobs = next(e for e in app.main.expander if e.label.startswith("Research settings"))
    inside = {w.label for w in knobs.number_input} | {w.label for w in knobs.selectbox}
    assert inside == {"Monte Carlo runs (0: none)", "Seed", "Speedup model"}
    assert not any("Checkpoints every" in m.value for m in app.main.markdown)
    assert app.toggle(key="plan_pw_off").label == "No hourly spending cap"
    assert any(m.value == "**Hourly spending cap (USD/hour)**" for m in app.sidebar.markdown)


# ----------------------------------------------------------------------------- words


@pytest.mark.parametrize(("zone", "hours", "expected"), [
    # 09:00 UTC + 6.5 h = 15:30 UTC = 16:30 in Berlin (CET, UTC+1 in November)
    (("Europe/Berlin", None), 6.5, "**Tuesday, 24 Nov 2026, 16:30** (Europe/Berlin)"),
    # + 20 h = 05:00 UTC next day = 06:00 in Berlin, a Wednesday
    (("Europe/Berlin", None), 20.0, "**Wednesday, 25 Nov 2026, 06:00** (Europe/Berlin)"),
    # no zone name, UTC-5 (getTimezoneOffset 300, stored negated): 15:30 - 5 h = 10:30
    ((None, -300), 6.5, "**Tuesday, 24 Nov 2026, 10:30** (UTC-05:00)"),
    # an unknown name and no offset: UTC, said so
    (("Mars/Olympus", None), 6.5,
     "**Tuesday, 24 Nov 2026, 15:30** (UTC; your browser's time zone is unknown)"),
])
def test_done_by_is_in_the_browsers_time_zone(zone: tuple[str | None, int | None],
                                              hours: float, expected: str) -> None:
    from datetime import UTC, datetime

    from dashboard.answer import BrowserZone, done_by

    now = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)
    assert done_by(hours, now, BrowserZone(*zone)) == f"Done by {expected} if started now."
    assert done_by(float("inf"), now, BrowserZone(*zone)) is None


def test_plain_words_replace_the_abbreviations() -> None:
    # issue 27: the architectures by what they are (glossary.PLAIN_WORDS), not their names
    from dashboard.glossary import plain

    assert plain("The plan picks TR: 1 x g5.xlarge; SA: 16 x g4dn.xlarge within PW 3 USD/h; "
                 "raise PW.") == ("The plan picks spot GPUs with a memory server: 1 x g5.xlarge; "
                                  "spot GPUs with one on-demand GPU: 16 x g4dn.xlarge within the "
                                  "hourly spending cap of 3 USD/h; raise hourly spending cap.")


@pytest.mark.parametrize("slug", ["instances", "catalog", "simulate", "live", "regions",
                                  "method", "spot", "jobs"])
def test_presentation_mode_applies_to_every_page(app: AppTest, slug: str) -> None:
    app.query_params.update({"page": slug, "presentation": "on"})
    app.run()
    no_errors(app)
    leads = " ".join(i.value for i in app.info)
    assert "The answer for your job is on **Recommend** and **Plan a job**." in leads
    assert any(m.value == "**Hourly spending cap (USD/hour)**" for m in app.sidebar.markdown)
    assert app.query_params["presentation"] == "on"
    app.toggle(key="sb_presentation").set_value(False).run()
    assert "The answer for your job is on" not in " ".join(i.value for i in app.info)
    assert any(m.value == "**PW: pricing willingness (USD/hour)**"
               for m in app.sidebar.markdown)


def test_bad_objective_and_presentation_in_the_url_name_the_field(app: AppTest) -> None:
    app.query_params.update({"objective": "fastest", "presentation": "maybe", "pw": "2.5"})
    app.run()
    no_errors(app)
    warnings = " ".join(w.value for w in app.warning)
    assert ("URL parameter objective='fastest' is not one of speed, paper, performance; using "
            "the default speed.") in warnings
    assert "URL parameter presentation='maybe' is not on or off; using the default off." in (
        warnings)
    assert app.session_state["sb_pw"] == 2.5  # nothing else lost
    assert app.query_params["objective"] == "speed"


def estimate(**changes: object):
    """A PlanEstimate with hand-picked numbers (only what the words read)."""
    from dataclasses import replace

    from deepvm_core.job.estimate import MonteCarloEstimate
    from deepvm_core.model import Configuration
    from deepvm_core.pipeline.plan import PlanEstimate

    config = Configuration("tiering", "g5.xlarge", 1, 0, "t3.xlarge", 1, 0.4682, 1.0, 1.0, 1.0,
                           1.0, 1.0)
    mc = MonteCarloEstimate(10_000, 10.0, 8.0, 9.0, 9.5, 5.0, 4.0, 4.5, 4.8, 3.0, None)
    base = PlanEstimate(0, config, 400.0, 8.0, 0.5, 400.0, 89, 10.0, 5.0, 3.0, True, mc,
                        on_demand_makespan_hours=8.0, on_demand_cost_usd=12.0)
    return replace(base, **changes)


def test_confidence_in_words_says_when_the_mean_is_above_the_p90() -> None:
    from dashboard.answer import confidence_line, on_demand_line, slow_line

    e = estimate()  # mean 10 h > P90 9.5 h; mean 5.00 USD > P90 4.80 USD
    assert confidence_line(e) == (
        "9 runs in 10 finish within 9.5 h and cost under 4.80 USD; the mean time, 10.0 h and "
        "the mean cost, 5.00 USD, are above that: a few runs hit many interruptions and take "
        "far longer.")
    # saving: 12.00 - 5.00 = 7.00 USD, 7 / 12 = 58.3 %
    assert on_demand_line(e) == ("The same cluster on demand: 12.00 USD, 8.0 h, no interruption "
                                 "risk. The spot plan saves **7.00 USD** (58.3 %) against it.")
    assert slow_line(e) is None  # 10 h <= 1.5 x 8 h = 12 h
    slow = slow_line(estimate(expected_makespan_hours=12.5))  # 12.5 / 8 = 1.6 > 1.5
    assert slow is not None
    assert slow.startswith("Interruptions stretch this job to 1.6x")
    assert "costs 12.00 USD" in slow
    # more expensive than on demand: said so, not as a negative saving
    # issue 24: a spot plan above the same cluster on demand (15 > 12 USD) offers it instead
    assert on_demand_line(estimate(expected_cost_usd=15.0)).endswith(
        "Spot loses here: the same cluster bought on demand costs 3.00 USD less (12.00 USD) "
        "and finishes in 8.0 h with no interruption risk. Run it on demand.")


def test_a_job_that_cannot_be_used_is_named_and_kept(app: AppTest) -> None:
    """Recommend with a job the core refuses (R = 10^8 min): the message names the field, the
    example job answers meanwhile, and the value stays in the URL to fix on Plan a job."""
    opened(app, restart_min="100000000")
    warnings = " ".join(w.value for w in app.warning)
    assert "Your job cannot be used here" in warnings
    assert "restart_hours" in warnings
    assert "The example job is used instead." in warnings
    assert "The example job (90 epochs) on this cluster" in markdown(app)
    assert app.query_params["restart_min"] == "1e+08"


def test_recommend_never_badges_a_cluster_on_which_the_job_does_not_finish(
        app: AppTest) -> None:
    """Issue 24: 10 epochs of 2,000,000 s (23 days each on one A10G, a checkpoint per epoch):
    on 17 g4dn.xlarge a retry needs days without an interruption while one comes every few
    hours, so the job is not expected to finish there, nor on any cluster of the catalog (every
    cluster has spot VMs). The card says so instead of "RECOMMENDED"."""
    opened(app, epochs="10", epoch_s="2000000")
    no_errors(app)
    captions = [c.value for c in app.main.caption]
    assert not any(c.startswith("RECOMMENDED") for c in captions)
    assert any("NOT RECOMMENDED: THE JOB IS NOT EXPECTED TO FINISH" in c for c in captions)
    warning = " ".join(w.value for w in app.main.warning)
    assert "The job is not expected to finish on TR: 17 x g4dn.xlarge" in warning
    assert "finishes on no cluster of this catalog at any price" in warning


def test_a_job_that_finishes_keeps_the_badge(app: AppTest) -> None:
    app.run()
    no_errors(app)
    assert any(c.value.startswith("RECOMMENDED CONFIGURATION · #1") for c in app.main.caption)
