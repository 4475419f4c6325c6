"""Issue 24: a transformer job's time without a measurement (FLOPs per token x tokens / (MFU x
peak x GPUs)) and with one (deepvm_core/workload/throughput.py). The published MFUs and
throughputs are typed from llm-training-sources.md; every expected value is hand arithmetic."""

from __future__ import annotations

import pytest

from deepvm_core.errors import WorkloadError
from deepvm_core.hardware.accelerators import bundled_accelerators
from deepvm_core.workload.throughput import (
    QLORA_SPEED,
    TokensMeasurement,
    flops_per_token,
    mfu_for,
    transformer_epoch_seconds,
    transformer_job_hours,
    transformer_times,
)
from deepvm_core.workload.transformer import TransformerJob
from tests.factories import job7

# L h s of a 7B model shaped like Llama 2 7B (L 32, h 4096) at seq 2048:
LHS = 32 * 4096 * 2048  # 268,435,456
# Published MFUs without recomputation (MF: MosaicML llm-foundry benchmarks; TT-A: torchtitan
# 64 x A100; ADLR: Megatron GPT-2 on one V100), typed from the sources file.
A100_ROWS = [0.5986, 0.6211, 0.6423, 0.5957, 0.611]   # median 0.611, range 0.5957-0.6423
H100_ROWS = [0.4182, 0.4373, 0.4644, 0.3979, 0.3986]  # median 0.4182
ALL_ROWS = [*A100_ROWS, *H100_ROWS, 0.48]              # median of 11: 0.48
A100_MFU, H100_MFU, POOLED_MFU = 0.611, 0.4182, 0.48
# QLoRA / LoRA tokens/s: 5.2 / 7.0 = 0.742857, 8035 / 8210 = 0.978685, 2413 / 3083 = 0.782679
QLORA = 2413 / 3083


def test_flops_per_token_by_hand():
    # full: 6N + 12 L h s; recomputation adds a forward: 8N + 16 L h s
    assert flops_per_token(job7(activation_checkpointing=False)) == 6 * 7e9 + 12 * LHS
    assert flops_per_token(job7()) == 8 * 7e9 + 16 * LHS  # 60,294,967,296
    # LoRA and QLoRA: no weight gradients, 4N (+2N with recomputation); attention unchanged
    assert flops_per_token(job7(method="lora", activation_checkpointing=False)) == (
        4 * 7e9 + 12 * LHS)
    assert flops_per_token(job7(method="qlora")) == 6 * 7e9 + 16 * LHS


def test_mfu_per_class_is_the_median_of_its_published_rows():
    table = bundled_accelerators()
    a100 = mfu_for(table["A100-80GB"])
    assert (a100.value, a100.low, a100.high, a100.published) == (A100_MFU, 0.5957, 0.6423, True)
    assert a100.basis == "published for the A100 class: median of 5 rows (MF, TT-A), 60-64 %"
    h200 = mfu_for(table["H200"])  # the H100's rows (same compute peak, no BF16 figure)
    assert (h200.value, h200.low, h200.high) == (H100_MFU, 0.3979, 0.4644)
    v100 = mfu_for(table["V100"])
    assert (v100.value, v100.basis) == (0.48, "published for the V100 class: median of 1 row "
                                              "(ADLR), 48 %")
    t4 = mfu_for(table["T4"])
    assert (t4.value, t4.low, t4.high, t4.published) == (POOLED_MFU, 0.3979, 0.6423, False)
    assert t4.basis.startswith("assumed for T4 (no published LLM training figure)")
    assert sorted(ALL_ROWS)[5] == POOLED_MFU
    for name in ("Trainium", "Inferentia", "Trainium2"):
        assert mfu_for(table[name]) is None


def test_time_on_8_a100_by_hand():
    # 8 x 0.611 x 312e12 FLOP/s / 60,294,967,296 FLOP/token = 25,293.3 tokens/s;
    # 2e9 tokens / 25,293.3 = 79,073 s = 21.96 h
    rate = 8 * A100_MFU * 312e12 / (8 * 7e9 + 16 * LHS)
    t = transformer_times(job7(), ["p4d.24xlarge"])[0]
    assert t.tokens_per_second == pytest.approx(rate)
    assert t.job_hours == pytest.approx(2e9 / rate / 3600)
    assert t.job_hours == pytest.approx(21.96, abs=0.01)
    # the range follows the MFU's: 0.5957 (slowest) to 0.6423 (fastest)
    assert t.job_hours_low == pytest.approx(2e9 / rate / 3600 * A100_MFU / 0.6423)
    assert t.job_hours_high == pytest.approx(2e9 / rate / 3600 * A100_MFU / 0.5957)
    assert not t.measured
    assert t.basis == ("estimated: 60.29 GFLOP/token at MFU 61 % (published for the A100 "
                       "class: median of 5 rows (MF, TT-A), 60-64 %) of 312 TFLOPS x 8 GPUs")


def test_time_on_one_t4_and_qlora_on_one_a10g_by_hand():
    t4 = transformer_times(job7(), ["g4dn.xlarge"])[0]
    assert t4.tokens_per_second == pytest.approx(POOLED_MFU * 65e12 / (8 * 7e9 + 16 * LHS))
    # QLoRA: 6N + 16 L h s FLOPs at the LoRA rate, times 0.782679 for dequantisation
    assert pytest.approx(QLORA) == QLORA_SPEED
    qlora = transformer_times(job7(method="qlora"), ["g5.xlarge"])[0]
    rate = POOLED_MFU * 125e12 / (6 * 7e9 + 16 * LHS) * QLORA
    assert qlora.tokens_per_second == pytest.approx(rate)
    assert qlora.basis.endswith(" of 125 TFLOPS x 1 GPU x 0.783 (QLoRA)")


def test_epochs_and_vms():
    # 4 epochs of 0.5e9 tokens; 2 VMs run twice the tokens/s (before the speedup model)
    job = job7(epochs=4)
    rate = 8 * H100_MFU * 989e12 / (8 * 7e9 + 16 * LHS)
    assert transformer_epoch_seconds(job, "p5.48xlarge") == pytest.approx(0.5e9 / rate)
    assert transformer_job_hours(job, "p5.48xlarge", vms=2) == pytest.approx(
        2e9 / (2 * rate) / 3600)
    two = transformer_times(job, ["p5.48xlarge"], vms=2)[0]
    assert two.tokens_per_second == pytest.approx(2 * rate)
    with pytest.raises(WorkloadError, match="vms"):
        transformer_times(job, ["p5.48xlarge"], vms=0)


def test_a_measurement_wins_and_scales_by_the_estimates_ratio():
    # 29,432 tokens/s measured on 2 x p4d.24xlarge: 14,716 per VM on p4d.24xlarge;
    # on p5.48xlarge 14,716 x (8 x 0.4182 x 989) / (8 x 0.611 x 312) = 14,716 x 2.16968
    m = TokensMeasurement(29_432, "p4d.24xlarge", vms=2)
    p4d, p5 = transformer_times(job7(), ["p4d.24xlarge", "p5.48xlarge"], measurement=m)
    assert p4d.measured
    assert p4d.tokens_per_second == pytest.approx(14_716)
    assert p4d.job_hours == p4d.job_hours_low == p4d.job_hours_high
    assert p4d.job_hours == pytest.approx(2e9 / 14_716 / 3600)
    assert p4d.basis == "measured: 29,432 tokens/s measured on 2 x p4d.24xlarge"
    ratio = (H100_MFU * 989) / (A100_MFU * 312)
    assert p5.tokens_per_second == pytest.approx(14_716 * ratio)
    assert p5.measured
    assert p5.basis.startswith("measured, scaled: 29,432 tokens/s measured on 2 x p4d.24xlarge"
                               ", x 2.17")


def test_types_without_an_estimate_say_why():
    trn, sim = transformer_times(job7(), ["trn1.32xlarge", "A"])
    assert trn.job_hours is None
    assert trn.basis == ("no estimate for trn1.32xlarge: Trainium has no MFU (no published LLM "
                         "training figure, and the NVIDIA figures do not transfer)")
    assert sim.job_hours is None
    assert sim.basis.startswith("no estimate for A: no accelerator model")
    # a measurement on Trainium times Trainium only
    m = TokensMeasurement(20_000, "trn1.32xlarge")
    trn, p5 = transformer_times(job7(), ["trn1.32xlarge", "p5.48xlarge"], measurement=m)
    assert trn.tokens_per_second == 20_000
    assert p5.job_hours is None
    assert "trn1.32xlarge has no estimate to scale it" in p5.basis


@pytest.mark.parametrize(("changes", "field"), [
    ({"tokens_per_second": 0}, "tokens_per_second"),
    ({"tokens_per_second": "fast"}, "tokens_per_second"),
    ({"instance_type": ""}, "instance_type"),
    ({"vms": 0}, "vms"),
])
def test_bad_measurements_are_named(changes, field):
    fields = {"tokens_per_second": 1000.0, "instance_type": "p4d.24xlarge", "vms": 1, **changes}
    with pytest.raises(WorkloadError) as info:
        TokensMeasurement(**fields)
    assert [p.field for p in info.value.problems] == [field]


@pytest.mark.parametrize(("instance", "checkpointing", "published"), [
    # MF: MPT-7B (N 6,658,859,008), seq 2048, 8 GPUs: A100 40GB with recomputation 3,679
    # tokens/s per GPU; H100 without it 10,643.
    ("p4d.24xlarge", True, 3679),
    ("p5.48xlarge", False, 10643),
])
def test_estimate_against_published_throughput(instance, checkpointing, published):
    job = TransformerJob(params_b=6.658859008, tokens_b=1, hidden_size=4096, layers=32,
                         activation_checkpointing=checkpointing)
    per_gpu = transformer_times(job, [instance])[0].tokens_per_second / 8
    # A100: 0.611 x 312e12 / 57.57e9 = 3,311 (-10 %); H100: 0.4182 x 989e12 / 43.18e9 = 9,578
    # (-10 %)
    assert abs(per_gpu / published - 1) < 0.15
