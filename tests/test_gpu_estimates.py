"""Issue 19: the accelerator table, the eFLOPS estimate, the scaling prior and the two new
catalog fields. Expected values are derived by hand (arithmetic in the comments) or from plain
re-computations with numbers typed from data/accelerators.csv, never from the code under test."""

from __future__ import annotations

import math

import numpy as np
import pytest

from deepvm_core.catalog import GpuType
from deepvm_core.catalog.schema import instance_row
from deepvm_core.catalog.store import load_catalog
from deepvm_core.catalog.validation import parse_catalog
from deepvm_core.hardware.accelerators import (
    SOURCES,
    accelerator_for_family,
    bundled_accelerators,
    parse_accelerators,
)
from deepvm_core.hardware.eflops_estimate import (
    COMPUTE_EXPONENT,
    benchmark_comparison,
    intra_node_efficiency,
    leave_one_out,
    single_gpu_eflops,
    vm_eflops,
)
from deepvm_core.hardware.measurements import bundled_measurements_paths, load_measurements
from deepvm_core.hardware.scaling_prior import (
    DEFAULT_STEP_MODEL,
    NO_GAIN_SCALING,
    StepHardware,
    fit_step_model,
    measured_curves,
    prior_errors,
    prior_scaling,
    step_speedup,
)

# w = 1 - ln(833 / 638) / ln(900 / 600) = 1 - ln(1.305643) / ln(1.5) = 1 - 0.266695 / 0.405465
# = 1 - 0.657752 = 0.342248
W = 0.342248


def index(c: float, b: float) -> float:
    return c**W * b ** (1 - W)


# Measured (artifact) eFLOPS and the figures of data/accelerators.csv, typed here.
M60, T4, A10G = index(4.83, 160.4), index(65, 320), index(125, 600)
K_ALL = math.exp((math.log(100 / M60) + math.log(377 / T4) + math.log(696 / A10G)) / 3)


def test_every_training_number_has_a_known_source():
    table = bundled_accelerators()
    assert {"K80", "M60", "T4", "T4g", "A10G", "L4", "L40S", "V100", "A100", "A100-80GB",
            "H100", "H200", "B200", "Trainium"} <= set(table)
    for acc in table.values():
        if not acc.trains:
            assert acc.note, acc.name  # why it is left out
            continue
        for key in ("fp32", "memory", "bandwidth"):
            refs = acc.sources[key].split(", ")
            assert all(r in SOURCES for r in refs), (acc.name, key, refs)
    assert table["Inferentia2"].trains is False
    assert "inference" in table["Inferentia2"].note
    assert accelerator_for_family("p4de").name == "A100-80GB"
    assert accelerator_for_family("trn2").name == "Trainium2"


#: Number column -> its source column in data/accelerators.csv (typed here).
NUMBER_SOURCES = {"peak_fp32_tflops": "source_fp32", "tensor_fp16_tflops": "source_tensor",
                  "memory_gb": "source_memory", "memory_bandwidth_gb_per_s": "source_bandwidth",
                  "link_gb_per_s": "source_link"}


def test_every_number_of_the_csv_names_a_known_source():
    import csv
    import io

    from deepvm_core.bundled import read_bundled_file

    text = read_bundled_file("accelerators.csv").decode("utf-8")
    checked = 0
    for row in csv.DictReader(io.StringIO(text)):  # plain read, not parse_accelerators
        for number, source in NUMBER_SOURCES.items():
            if row[number].strip():
                refs = [r.strip() for r in row[source].split(",")]
                assert refs, (row["accelerator"], number)
                assert all(r in SOURCES for r in refs), (row["accelerator"], number)
                checked += 1
    # 12 GPUs (T4 .. B200) with all five numbers; K80 and M60 without a tensor peak and
    # Trainium 1/2 without a link figure, four each: 12 x 5 + 4 x 4 = 76
    assert checked == 12 * 5 + 4 * 4


def test_a_number_without_a_source_does_not_load():
    header = "accelerator,trains,peak_fp32_tflops,source_fp32,memory_gb,source_memory\n"
    with pytest.raises(ValueError, match=r"line 2 \(X\): peak_fp32_tflops = 10 has no source "
                       r"\(source_fp32 is empty\)"):
        parse_accelerators(header + "X,yes,10,,16,W\n")
    with pytest.raises(ValueError, match="memory_gb = 16: source Q is not one of SOURCES"):
        parse_accelerators(header + "X,yes,10,W,16,\"W, Q\"\n")
    with pytest.raises(ValueError, match="peak_fp32_tflops = 10 has no source"):
        parse_accelerators("accelerator,peak_fp32_tflops\nX,10\n")  # no source column at all
    assert parse_accelerators(header + "X,yes,10,W,16,\"W, G\"\n")["X"].memory_gb == 16.0
    assert parse_accelerators(header + "X,no,,,,\n")["X"].trains is False  # no numbers


def test_bad_accelerator_rows_are_named():
    with pytest.raises(ValueError, match=r"line 2 .*X"):
        parse_accelerators("accelerator,peak_fp32_tflops\nX,fast\n")
    with pytest.raises(ValueError, match="empty name"):
        parse_accelerators("accelerator,peak_fp32_tflops\n,1\n")


def test_compute_exponent_comes_from_the_v100_a10_pair():
    assert pytest.approx(W, abs=1e-6) == COMPUTE_EXPONENT


def test_single_gpu_estimate_is_k_times_the_index():
    table = bundled_accelerators()
    # H100: C 989 TFLOPS, B 3350 GB/s; chips without tensor cores use FP32 (M60: 4.83).
    assert single_gpu_eflops(table["H100"]) == pytest.approx(K_ALL * index(989, 3350), rel=1e-6)
    assert single_gpu_eflops(table["M60"]) == pytest.approx(K_ALL * M60, rel=1e-6)
    assert single_gpu_eflops(table["Trainium"]) is None
    assert single_gpu_eflops(table["Inferentia"]) is None


def test_leave_one_out_refits_k_without_the_type():
    rows = {r.accelerator: r for r in leave_one_out()}
    k_without_m60 = math.sqrt(377 / T4 * 696 / A10G)  # geometric mean of the other two
    assert rows["M60"].estimated == pytest.approx(k_without_m60 * M60, rel=1e-6)
    assert rows["M60"].error == pytest.approx(k_without_m60 * M60 / 100 - 1, abs=1e-5)
    assert all(abs(r.error) < 0.05 for r in rows.values())


def test_benchmark_ratios_are_relative_to_the_a10():
    rows = {r.accelerator: r for r in benchmark_comparison()}
    # Lambda ResNet-50 AMP: H100 SXM5 2791 / A10 638 = 4.3746; BERT-large FP16 311 / 42 = 7.405
    assert rows["H100"].resnet50_amp_ratio == pytest.approx(2791 / 638)
    assert rows["H100"].bert_large_fp16_ratio == pytest.approx(311 / 42)
    assert rows["H100"].estimate_ratio == pytest.approx(index(989, 3350) / A10G, rel=1e-6)
    # V100 and A10 share the tensor peak: the ratio is the bandwidth term, 1.5^(1 - w) = 833/638
    assert rows["V100"].estimate_ratio == pytest.approx(833 / 638, rel=1e-5)


def test_multi_gpu_vm_pays_the_intra_node_all_reduce():
    acc = bundled_accelerators()["A10G"]
    e1 = K_ALL * A10G  # 711.3
    # t_c = 295.5 x 0.1 / e1; traffic 2 (4 - 1) / 4 x 0.1 GB / 31.5 GB/s = 0.0047619 s
    t_c = 295.5 * 0.1 / e1
    eta = t_c / (t_c + 1.5 * 0.1 / 31.5)
    assert intra_node_efficiency(acc, 4, e1) == pytest.approx(eta, rel=1e-4)
    assert vm_eflops(acc, 4) == pytest.approx(4 * e1 * eta, rel=1e-4)
    assert intra_node_efficiency(acc, 1, e1) == 1.0


def test_step_speedup_by_hand():
    # g4dn.xlarge: E 377, 25 Gbps, 2 VMs: t_c = 295.5 x 0.1 / 377 = 0.0783820 s;
    # t_ar = 2 x 1 x 0.004993 + 2 x 1/2 x 8 x 0.1 / 25 = 0.009986 + 0.032 = 0.041986 s;
    # S = 2 x 0.078382 / 0.120368 = 1.302373
    s = step_speedup(DEFAULT_STEP_MODEL, StepHardware(377.0, 1, 25.0), [1, 2])
    assert s[0] == 1.0
    assert s[1] == pytest.approx(1.302373, rel=1e-5)


def _curves():
    table = load_measurements(bundled_measurements_paths()["deepvm-scaling"])
    cat = load_catalog("aws-us-east-1-2023-10")
    return measured_curves(table, {g.name: g.eflops for g in cat.gpu_types if g.eflops},
                           {}, {g.name: g.network_gbps for g in cat.gpu_types})


def test_default_step_model_is_the_fit_to_the_measured_curves():
    fitted = fit_step_model(_curves())
    assert fitted.tau == pytest.approx(DEFAULT_STEP_MODEL.tau, rel=5e-3)
    assert fitted.alpha == pytest.approx(DEFAULT_STEP_MODEL.alpha, rel=5e-3)


def test_prior_beats_linear_scaling_on_every_held_out_curve():
    errors = prior_errors(_curves())
    assert [e.instance for e in errors] == ["g3s.xlarge", "g4dn.xlarge", "g5.xlarge"]
    for e in errors:
        assert e.rmse_prior < e.rmse_linear / 5


def test_prior_scaling_keeps_k1_and_flags_no_gain():
    # A chip so fast that t_c < 2 alpha: a second VM never pays.
    assert prior_scaling(DEFAULT_STEP_MODEL, StepHardware(50_000.0, 1, 100.0)) == NO_GAIN_SCALING
    g4dn = StepHardware(377.0, 1, 25.0)
    s = prior_scaling(DEFAULT_STEP_MODEL, g4dn)
    assert s.b >= 1.0
    assert 1.0 < s.c < 20.0
    n = np.array([2, 8, 32])
    logistic = s.c / (1 + np.exp(-s.a * (n - s.b)))
    assert np.all(np.abs(logistic - step_speedup(DEFAULT_STEP_MODEL, g4dn, n)) < 0.6)


def test_sources_are_written_only_when_not_measured():
    g = GpuType(name="p5.48xlarge", family="P", on_demand_usd_per_hour=55.0,
                spot_usd_per_hour=21.0, vcpus=192, memory_gib=2048.0, network_gbps=3200.0,
                eflops=34773.4, eflops_source="estimated: k C^0.34 B^0.66 (8 x H100)",
                scaling_source="prior: data-parallel step, ring all-reduce")
    row = instance_row(g)
    assert row["eflops_source"].startswith("estimated")
    assert row["scaling_source"].startswith(
        "prior")
    measured = load_catalog("aws-us-east-1-2023-10").gpu_types[0]
    assert "eflops_source" not in instance_row(measured)
    base = {"schema_version": 2, "name": "x", "provider": "aws", "region": "r",
            "prices_date": "d", "source": "", "gpu_types": [row], "cpu_types": [],
            "quotas": [], "network_saturation": [{"bandwidth_gbps": 1, "max_gpu_vms": 2}]}
    back = parse_catalog(base).gpu_types[0]
    assert back.eflops_source == row["eflops_source"]
    assert back.scaling_source == row["scaling_source"]
    row_bad = {**row, "eflops_source": ""}
    with pytest.raises(Exception, match="eflops_source"):
        parse_catalog({**base, "gpu_types": [row_bad]})


def test_calibration_replaces_estimate_and_prior_with_measured():
    from deepvm_core.hardware.calibrate import calibrate_catalog

    catalog = load_catalog("aws-us-east-1-2025-h1")
    table = load_measurements(bundled_measurements_paths()["deepvm-scaling"])
    # rename the measured g4dn.xlarge curve to g6.xlarge (an estimated, prior-scaled type)
    from dataclasses import replace

    rows = [replace(m, instance="g6.xlarge") if m.instance == "g4dn.xlarge" else m
            for m in table.instances if m.instance in ("g4dn.xlarge", "g5.xlarge")]
    g6_before = catalog.instance("g6.xlarge")
    assert g6_before.eflops_source.startswith("estimated")  # type: ignore[union-attr]
    result = calibrate_catalog(catalog, replace(table, instances=tuple(rows)),
                               eflops_reference="g5.xlarge")
    g6 = result.catalog.instance("g6.xlarge")
    assert g6.eflops_source == "measured"
    assert g6.scaling_source == "measured"
    # eFLOPS(g6) = 696 x t_g5(1) / t_g4dn(1) = 696 x 31.009284 / 61.155439 = 352.91
    assert g6.eflops == pytest.approx(696 * 31.009284 / 61.155439)  # type: ignore[union-attr]


def test_edits_keep_or_replace_the_sources():
    from deepvm_core.catalog.catalog import catalog_to_dict
    from deepvm_core.catalog.provenance import carry_sources

    catalog = load_catalog("aws-us-east-1-2025-h1")
    rows = {r["name"]: r for r in catalog_to_dict(catalog)["gpu_types"]}
    unchanged = {k: v for k, v in rows["p5.48xlarge"].items()
                 if k not in ("eflops_source", "scaling_source")}  # as the editor's table has it
    typed = {**unchanged, "name": "p5.48xlarge", "eflops": 30000.0}
    measured = {k: v for k, v in rows["g4dn.xlarge"].items()}
    added = {**measured, "name": "g9.xlarge"}
    out = carry_sources(catalog, [unchanged, typed, measured, added])
    assert out[0]["eflops_source"] == rows["p5.48xlarge"]["eflops_source"]
    assert out[0]["scaling_source"] == rows["p5.48xlarge"]["scaling_source"]
    assert out[1]["eflops_source"] == "edited"
    assert out[1]["scaling_source"] == rows["p5.48xlarge"]["scaling_source"]
    assert "eflops_source" not in out[2]
    assert "scaling_source" not in out[2]
    assert out[3]["eflops_source"] == "edited"
    assert out[3]["scaling_source"] == "edited"
    assert "eflops_source" not in unchanged  # the input rows are not changed


def test_the_catalog_editor_round_trip_keeps_the_sources():
    from dashboard.editor_frames import catalog_frames, frames_to_dict

    catalog = load_catalog("aws-us-east-1-2025-h1")
    frames = catalog_frames(catalog)
    back = parse_catalog(frames_to_dict(frames, catalog))
    assert back.sha256 == catalog.sha256
    frames["gpu_types"].loc[frames["gpu_types"]["name"] == "p5.48xlarge", "eflops"] = 30000.0
    edited = parse_catalog(frames_to_dict(frames, catalog)).instance("p5.48xlarge")
    assert edited.eflops_source == "edited"  # type: ignore[union-attr]
