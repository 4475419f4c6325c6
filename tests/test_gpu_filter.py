"""Issue 24: the GPU filters a person expects (``--gpus A100,H100``, ``--min-gpu-memory-gb 80``,
``--gpus-per-vm 8``): the scenario's :class:`GpuFilter`, applied once where the candidate domain
is built, stated in one sentence, explained when it leaves nothing, recorded in the exports.

Expected type sets are typed from AWS's instance specs (8-GPU types: g4dn.metal, g5.48xlarge,
g6.48xlarge, g6e.48xlarge, p3.16xlarge, p3dn.24xlarge, p4d/p4de.24xlarge, p5/p5en.48xlarge);
prices and cluster sizes are worked out by hand in the comments."""

from __future__ import annotations

import dataclasses
import json

import jsonschema
import pytest

from deepvm_core.catalog.gpu_filter import ANY_GPU, GpuFilter, resolve_accelerators
from deepvm_core.catalog.gpu_filter import split_accelerators as split
from deepvm_core.catalog.store import load_catalog
from deepvm_core.cli import main
from deepvm_core.errors import InputError
from deepvm_core.io.export import gpu_filter_from_dict, recommendation_to_dict
from deepvm_core.io.plan_json import plan_to_dict
from deepvm_core.io.replay import replay
from deepvm_core.io.schemas import load_schema
from deepvm_core.model import Scenario
from deepvm_core.pipeline.plan import plan_job
from deepvm_core.recommend.explain import filter_binding
from deepvm_core.recommend.recommendation import recommend
from deepvm_core.search.candidates import build_domain
from deepvm_core.search.gpu_filter import filter_gpu_types
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import example_workload
from tests import oracle

AWS_2023 = "aws-us-east-1-2023-10"
AWS_2025 = "aws-us-east-1-2025-h1"
EIGHT_GPUS = {"g4dn.metal", "g5.48xlarge", "g6.48xlarge", "g6e.48xlarge", "p3.16xlarge",
              "p3dn.24xlarge", "p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5en.48xlarge"}


@pytest.fixture(scope="module")
def aws2025():
    return load_catalog(AWS_2025)


@pytest.fixture(scope="module")
def aws2023():
    return load_catalog(AWS_2023)


# ----------------------------------------------------------------------------- the filter


@pytest.mark.parametrize(("flt", "sentence"), [
    (GpuFilter(), "Any GPU."),
    (GpuFilter(("A100",)), "Only A100 GPUs."),
    (GpuFilter(("A100", "H100")), "Only A100 or H100 GPUs."),
    (GpuFilter(("A100", "H100", "H200")), "Only A100, H100 or H200 GPUs."),
    (GpuFilter(min_gpu_memory_gb=80), "Only GPUs with at least 80 GB each."),
    (GpuFilter(min_gpu_memory_gb=22.5), "Only GPUs with at least 22.5 GB each."),
    (GpuFilter(gpus_per_vm=8), "Only VMs with 8 GPUs."),
    (GpuFilter(gpus_per_vm=1), "Only VMs with 1 GPU."),
    (GpuFilter(("A100", "H100"), 80), "Only A100 or H100 GPUs with at least 80 GB each."),
    (GpuFilter(("A100", "H100"), 80, 8),
     "Only A100 or H100 GPUs with at least 80 GB each, 8 per VM."),
    (GpuFilter(min_gpu_memory_gb=48, gpus_per_vm=4),
     "Only GPUs with at least 48 GB each, 4 per VM."),
])
def test_one_sentence_states_the_filter(flt: GpuFilter, sentence: str) -> None:
    assert flt.describe() == sentence
    assert flt.active == (sentence != "Any GPU.")


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"accelerators": ["A100"]}, "gpus"), ({"accelerators": ("A100", " ")}, "gpus"),
    ({"min_gpu_memory_gb": 0}, "min_gpu_memory_gb"),
    ({"min_gpu_memory_gb": float("nan")}, "min_gpu_memory_gb"),
    ({"min_gpu_memory_gb": True}, "min_gpu_memory_gb"),
    ({"min_gpu_memory_gb": 1e6}, "min_gpu_memory_gb"),
    ({"gpus_per_vm": 0}, "gpus_per_vm"), ({"gpus_per_vm": 8.0}, "gpus_per_vm"),
    ({"gpus_per_vm": 65}, "gpus_per_vm"),
])
def test_bad_values_name_their_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as caught:
        GpuFilter(**kwargs)  # type: ignore[arg-type]
    assert caught.value.field == field


def test_each_criterion_and_unknown_figures() -> None:
    flt = GpuFilter(("a100", "H100"), 80, 8)  # the names match without regard to case
    assert flt.failed("A100", 8, 40.0) == ("min_gpu_memory_gb",)
    assert flt.failed("H100", 8, 80.0) == ()  # at least 80: 80 passes
    assert flt.failed("A100-80GB", 8, 80.0) == ("accelerators",)  # another model, as SkyPilot
    assert flt.failed("H100", 4, 80.0) == ("gpus_per_vm",)
    assert flt.failed(None, None, None) == ("accelerators", "min_gpu_memory_gb", "gpus_per_vm")
    assert ANY_GPU.admits(None, None, None)


def test_names_are_resolved_without_regard_to_case() -> None:
    known = ("T4", "A10G", "A100", "A100-80GB", "H100")
    assert resolve_accelerators(["a100", "h100", "A100"], known) == ("A100", "H100")
    with pytest.raises(InputError) as caught:
        resolve_accelerators(["A1000"], known, offered=("T4", "A100"))
    assert caught.value.field == "gpus"
    assert caught.value.value == "A1000"
    assert "did you mean A100, A100-80GB or H100?" in str(caught.value)
    assert "the catalog's models: T4, A100" in str(caught.value)
    with pytest.raises(InputError, match="known models: A100, A100-80GB, A10G, H100, T4"):
        resolve_accelerators(["XYZ"], known)


def test_split_a_comma_list() -> None:
    assert split(" A100, h100 ,,") == ("A100", "h100")
    with pytest.raises(InputError, match=r"model alone \(A100\) and the count as GPUs per VM"):
        split("A100:8")


# ----------------------------------------------------------------------------- which types


def test_the_filter_keeps_the_types_typed_by_hand(aws2025) -> None:
    def kept(flt: GpuFilter) -> set[str]:
        return {g.name for g in filter_gpu_types(aws2025.solvable_gpu_types, flt)}

    assert kept(GpuFilter(("A100", "H100"))) == {"p4d.24xlarge", "p5.48xlarge"}
    assert kept(GpuFilter(("a100-80gb",))) == {"p4de.24xlarge"}
    assert kept(GpuFilter(min_gpu_memory_gb=80)) == {"p4de.24xlarge", "p5.48xlarge",
                                                      "p5en.48xlarge"}  # 80, 80, 141 GB
    assert kept(GpuFilter(gpus_per_vm=8)) == EIGHT_GPUS
    assert kept(GpuFilter(("A100", "H100"), 80, 8)) == {"p5.48xlarge"}
    assert kept(ANY_GPU) == {g.name for g in aws2025.solvable_gpu_types}


def test_the_domain_is_built_from_the_admitted_types_only(aws2025) -> None:
    flt = GpuFilter(min_gpu_memory_gb=80)
    domain = build_domain(aws2025, Scenario(30.0, gpu_filter=flt), pw_usd_per_hour=30.0)
    assert {g.name for g in domain.gpus} == {"p4de.24xlarge", "p5.48xlarge", "p5en.48xlarge"}


def test_a_filter_changes_the_answer(aws2023) -> None:
    """PW 3, Z. Without a filter: 17 x g4dn.xlarge + 1 c5.xlarge. With 20 GB or more per GPU
    only g5.xlarge (A10G, 24 GB) is left:
    * Cost-First (Single Anchor, largest n): 1 on demand + floor((3 - 1.006) / 0.3018) = 6
      spot, 1.006 + 6 x 0.3018 = 2.8168 USD/h; Performance-First the same (the only type);
    * DeepVM: Z grows with n (K = 1 up to b = 20.07), so the largest Tiering cluster: 9 spot
      and the cheapest memory node, t3.xlarge (0.1664; 5 Gbps, n_sat 16 > 9, one node),
      9 x 0.3018 + 0.1664 = 2.8826 USD/h (10 spot would be 3.018 alone)."""
    plain = recommend(aws2023, Scenario(3.0, objective="paper"))
    assert plain.best is not None
    assert plain.best.gpu == "g4dn.xlarge"
    rec = recommend(aws2023, Scenario(3.0, objective="paper",
                                      gpu_filter=GpuFilter(min_gpu_memory_gb=20)))
    best, cost_first = rec.best, rec.cost_first
    assert best is not None
    assert cost_first is not None
    assert rec.performance_first is not None
    assert (best.architecture, best.gpu, best.gpu_spot, best.cpu, best.memory_nodes) == (
        "tiering", "g5.xlarge", 9, "t3.xlarge", 1)
    assert best.hourly_price_usd == pytest.approx(2.8826)
    assert (cost_first.gpu, cost_first.gpu_vms) == ("g5.xlarge", 7)
    assert cost_first.hourly_price_usd == pytest.approx(2.8168)
    assert rec.performance_first == cost_first
    assert {c.gpu for c in rec.deepvm} == {"g5.xlarge"}


def test_the_view_by_accelerator_keeps_the_admitted_models(aws2025) -> None:
    rec = recommend(aws2025, Scenario(30.0, use_quotas=False,
                                      gpu_filter=GpuFilter(("A100", "H100"))))
    assert sorted(row.accelerator for row in rec.by_accelerator) == ["A100", "H100"]
    assert rec.best is not None
    assert rec.best.gpu in {"p4d.24xlarge", "p5.48xlarge"}


# ----------------------------------------------------------------------------- nothing left


@pytest.mark.parametrize(("flt", "why"), [
    (GpuFilter(("B200",)), "aws-us-east-1-2025-h1 has no B200 GPU type (its models: T4, A10G, "
                           "T4g, L4, L40S, V100, V100-32GB, A100, A100-80GB, H100, H200)"),
    (GpuFilter(min_gpu_memory_gb=200),
     "none has at least 200 GB per GPU (the most: 141 GB, p5en.48xlarge)"),
    (GpuFilter(gpus_per_vm=3), "none has 3 GPUs per VM (its VMs have 1, 2, 4 or 8)"),
    (GpuFilter(("A100",), 80, 4), "each criterion alone leaves some, but no A100 type has at "
                                  "least 80 GB per GPU and 4 GPUs per VM (the A100 types: "
                                  "p4d.24xlarge (A100, 8 x 40 GB))"),
])
def test_a_filter_that_leaves_nothing_says_which_binds(aws2025, flt: GpuFilter,
                                                       why: str) -> None:
    assert filter_binding(aws2025, flt) == (
        f"the GPU filter ({flt.clause()}) leaves no GPU type: {why}")
    rec = recommend(aws2025, Scenario(30.0, gpu_filter=flt))
    assert rec.best is None
    assert rec.explanation is not None
    assert rec.explanation.binding == ("gpu_filter",)
    assert why in rec.explanation.summary
    assert rec.by_accelerator == ()


def test_models_left_out_of_solving_are_named(aws2025) -> None:
    assert filter_binding(aws2025, GpuFilter(("Trainium",))) == (
        "the GPU filter (only Trainium GPUs) leaves no GPU type that can be solved: it admits "
        "only trn1.2xlarge, trn1.32xlarge, trn1n.32xlarge, left out of solving (needs eFLOPS)")


def test_the_simulated_types_have_no_model() -> None:
    sim = load_catalog("paper-simulated")
    rec = recommend(sim, Scenario(3.0, use_quotas=False, gpu_filter=GpuFilter(("A100",))))
    assert rec.explanation is not None
    assert rec.explanation.binding == ("gpu_filter",)
    assert "paper-simulated has no A100 GPU type (none of its GPU types has a known model)" in (
        rec.explanation.summary)


def test_a_filter_that_leaves_some_does_not_bind(aws2025) -> None:
    assert filter_binding(aws2025, GpuFilter(("H100",))) is None
    assert filter_binding(aws2025, ANY_GPU) is None
    # PW below every H100 cluster: the budget binds, and the cheapest is an H100 one
    rec = recommend(aws2025, Scenario(1.0, gpu_filter=GpuFilter(("H100",))))
    assert rec.explanation is not None
    assert rec.explanation.binding == ("budget",)
    cheapest = rec.explanation.cheapest_configuration
    assert cheapest is not None
    assert cheapest.gpu == "p5.48xlarge"


# ----------------------------------------------------------------------------- exports


def test_the_export_records_the_filter_and_replays(aws2025) -> None:
    flt = GpuFilter(("A100", "H100"), 80)
    rec = recommend(aws2025, Scenario(30.0, objective="speed", gpu_filter=flt))
    doc = recommendation_to_dict(rec, aws2025)
    assert doc["inputs"]["gpu_filter"] == {
        "accelerators": ["A100", "H100"], "min_gpu_memory_gb": 80, "gpus_per_vm": None,
        "summary": "Only A100 or H100 GPUs with at least 80 GB each."}
    assert "(objective speed; only A100 or H100 GPUs with at least 80 GB each)" in doc["summary"]
    jsonschema.validate(doc, load_schema("recommend"))
    assert gpu_filter_from_dict(doc["inputs"]["gpu_filter"]) == flt
    again = replay(json.loads(json.dumps(doc)))
    assert again.matches
    assert again.recommendation.scenario.gpu_filter == flt
    # without a filter the key is not there (the golden files are unchanged by it)
    plain = recommendation_to_dict(recommend(aws2025, Scenario(30.0)), aws2025)
    assert "gpu_filter" not in plain["inputs"]


def test_a_bad_recorded_filter_is_named() -> None:
    assert gpu_filter_from_dict(None) == ANY_GPU
    with pytest.raises(InputError, match=r"gpu_filter\.accelerators"):
        gpu_filter_from_dict({"accelerators": "A100"})
    with pytest.raises(InputError, match="gpus_per_vm"):
        gpu_filter_from_dict({"accelerators": [], "gpus_per_vm": -1})


def test_the_plan_applies_and_records_the_filter(aws2025) -> None:
    flt = GpuFilter(gpus_per_vm=8)
    result = plan_job(aws2025, Scenario(30.0, gpu_filter=flt), example_workload(),
                      pw_usd_per_hour=30.0, trials=0,
                      speedup=SpeedupModel())
    assert result.chosen is not None
    assert {g.name for g in result.candidates.gpus} <= EIGHT_GPUS
    doc = plan_to_dict(result, aws2025)
    assert doc["inputs"]["gpu_filter"]["summary"] == "Only VMs with 8 GPUs."
    assert "(only VMs with 8 GPUs)" in doc["summary"]
    jsonschema.validate(doc, load_schema("plan"))
    nothing = plan_job(aws2025, Scenario(30.0, gpu_filter=GpuFilter(gpus_per_vm=3)),
                       example_workload(), pw_usd_per_hour=30.0, trials=0,
                       speedup=SpeedupModel())
    assert nothing.chosen is None
    assert nothing.explanation is not None
    assert nothing.explanation.binding == ("gpu_filter",)


# ----------------------------------------------------------------------------- CLI


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_recommend_with_filters(capsys) -> None:
    code, out, _ = _run(capsys, "recommend", "--catalog", AWS_2025, "--pw", "30", "--gpus",
                        "a100,H100", "--min-gpu-memory-gb", "80", "--gpus-per-vm", "8",
                        "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["inputs"]["gpu_filter"]["accelerators"] == ["A100", "H100"]  # as the table names
    assert {c["gpu"]["name"] for c in doc["deepvm"]} == {"p5.48xlarge"}
    code, out, _ = _run(capsys, "recommend", "--catalog", AWS_2025, "--pw", "30", "--gpus",
                        "A100,H100")
    assert code == 0
    assert "GPU filter: Only A100 or H100 GPUs.\n" in out


def test_cli_plan_with_filters(capsys) -> None:
    code, out, _ = _run(capsys, "plan", "--catalog", AWS_2025, "--pw", "30", "--gpus-per-vm",
                        "8", "--trials", "0")
    assert code == 0
    assert "GPU filter: Only VMs with 8 GPUs.\n" in out
    code, out, _ = _run(capsys, "plan", "--catalog", AWS_2025, "--pw", "30",
                        "--min-gpu-memory-gb", "200", "--trials", "0", "--format", "json")
    assert code == 0  # infeasible is an answer, not an error
    doc = json.loads(out)
    assert doc["chosen"] is None
    assert doc["explanation"]["binding"] == ["gpu_filter"]


@pytest.mark.parametrize(("args", "message"), [
    (["--gpus", "A1000"], "error: --gpus = 'A1000': is not a GPU model known here; "
                          "did you mean A100, A100-80GB or V100? the catalog's models: T4, "
                          "A10G, T4g, L4, L40S, V100, V100-32GB, A100, A100-80GB, H100, H200, "
                          "Trainium"),
    (["--gpus", "A100:8"], "argument --gpus: 'A100:8': give the model alone (A100) and the "
                           "count as GPUs per VM (8)"),
    (["--gpus", ","], "argument --gpus: ',' names no GPU model"),
    (["--min-gpu-memory-gb", "0"], "argument --min-gpu-memory-gb: '0' must be > 0"),
    (["--gpus-per-vm", "2.5"], "argument --gpus-per-vm: '2.5' is not a whole number"),
])
@pytest.mark.parametrize("command", ["recommend", "plan"])
def test_cli_bad_filters_are_one_line_errors(capsys, command: str, args: list[str],
                                             message: str) -> None:
    argv = [command, "--catalog", AWS_2025, "--pw", "30", *args]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors
        code = int(exc.code or 0)
    _, err = capsys.readouterr()
    assert code == 2
    assert message in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


# ----------------------------------------------------------------------------- the oracle


@pytest.mark.parametrize(("flt", "names"), [
    (GpuFilter(("T4",)), {"g4dn.xlarge"}),
    (GpuFilter(("A10G", "M60")), {"g3s.xlarge", "g5.xlarge"}),
    (GpuFilter(min_gpu_memory_gb=16), {"g4dn.xlarge", "g5.xlarge"}),  # M60: 8 GB
    (GpuFilter(gpus_per_vm=1), {"g3s.xlarge", "g4dn.xlarge", "g5.xlarge"}),
])
@pytest.mark.parametrize("pw", [1.0, 3.0, 10.0])
@pytest.mark.parametrize("objective", ["paper", "performance"])
def test_the_top_five_are_the_oracles_on_the_catalog_cut_by_hand(
        aws2023, flt: GpuFilter, names: set[str], pw: float, objective: str) -> None:
    """tests/oracle.py knows no filter: it loops over the catalog's rows, here only the types
    typed by hand for each filter."""
    cut = dataclasses.replace(aws2023, gpu_types=tuple(g for g in aws2023.gpu_types
                                                       if g.name in names))
    expected = oracle.top_k(cut, Scenario(pw, objective=objective), 5)
    rec = recommend(aws2023, Scenario(pw, objective=objective, gpu_filter=flt), top_k=5)
    got = [(c.architecture, c.gpu, c.gpu_vms, c.cpu, c.memory_nodes) for c in rec.deepvm]
    assert got == [e.identity for e in expected]
    assert [c.hourly_price_usd for c in rec.deepvm] == pytest.approx([e.price for e in expected])
