"""The one rule for eFLOPS and scaling of a built catalog's GPU types
(deepvm_core/hardware/unmeasured.py), shared by ``deepvm catalog import`` and ``deepvm fetch``."""

from __future__ import annotations

from dataclasses import replace

from deepvm_core.catalog import ScalingParams
from deepvm_core.catalog.store import load_catalog
from deepvm_core.hardware.accelerators import bundled_accelerators
from deepvm_core.hardware.unmeasured import gpu_throughput_fields, is_derived

A10G = bundled_accelerators()["A10G"]


def _g5():
    return load_catalog("aws-us-east-1-2023-10").instance("g5.xlarge")


def test_measured_base_values_win_and_write_no_source():
    row, missing = gpu_throughput_fields(A10G, 1, _g5(), 10.0, "g5")
    assert missing is None
    # the artifact's g5.xlarge: 696 eFLOPS and its measured fit, typed from the catalog file
    assert row == {"eflops": 696.0,
                   "scaling": {"a": 0.08533428072, "b": 20.06669931, "c": 4.962225551}}


def test_edited_base_values_win_with_their_source():
    edited = replace(_g5(), eflops=700.0, eflops_source="edited",
                     scaling=ScalingParams(0.2, 3.0, 4.0), scaling_source="edited")
    row, _ = gpu_throughput_fields(A10G, 1, edited, 10.0, "g5")
    assert row == {"eflops": 700.0, "eflops_source": "edited",
                   "scaling": {"a": 0.2, "b": 3.0, "c": 4.0}, "scaling_source": "edited"}


def test_an_estimated_base_value_is_estimated_again():
    stale = replace(_g5(), eflops=1.0, eflops_source="estimated: k C^0.34 B^0.66 (1 x A10G)",
                    scaling=ScalingParams(0.2, 3.0, 4.0),
                    scaling_source="prior: data-parallel step, ring all-reduce, G 0.1 GB")
    row, missing = gpu_throughput_fields(A10G, 1, stale, 10.0, "g5")
    assert missing is None
    assert row["eflops"] != 1.0
    assert row["eflops_source"] == "estimated: k C^0.34 B^0.66 (1 x A10G)"
    assert row["scaling"] != {"a": 0.2, "b": 3.0, "c": 4.0}
    assert row["scaling_source"] == "prior: data-parallel step, ring all-reduce, G 0.1 GB"


def test_no_model_or_no_estimate_needs_eflops_with_the_reason():
    row, missing = gpu_throughput_fields(None, 1, None, 10.0, "g9")
    assert row == {"eflops": None, "scaling": None}
    assert missing == "no accelerator model for family g9 in data/accelerators.csv"
    row, missing = gpu_throughput_fields(bundled_accelerators()["Trainium"], 1, None, 12.5, "trn1")
    assert row["eflops"] is None
    assert missing == "no estimate for Trainium (see its note in data/accelerators.csv)"


def test_derived_sources():
    assert is_derived("estimated: k C^0.34 B^0.66 (8 x H100)")
    assert is_derived("prior: data-parallel step, ring all-reduce, G 0.1 GB")
    assert not is_derived("measured")
    assert not is_derived("edited")
