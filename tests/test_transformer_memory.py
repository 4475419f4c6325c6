"""Issue 24: a transformer job (deepvm_core/workload/transformer.py) and its GPU memory
(deepvm_core/workload/memory.py). Every expected figure is derived by hand in the comments, from
the formulas and sources of memory.py's docstring and the GPU figures of
data/accelerators.csv; published measurements are typed from llm-training-sources.md."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deepvm_core.catalog.store import load_catalog
from deepvm_core.errors import WorkloadError
from deepvm_core.workload.memory import (
    activations_gb,
    fewest_gpus_per_replica,
    memory_breakdown,
    memory_fit,
    model_states_gb,
    no_fit_reason,
    per_gpu_gb,
)
from deepvm_core.workload.transformer import TransformerJob
from tests.factories import job7

GIB = 1.073741824  # GB per GiB

# A 7B model with Llama 2 7B's shape (h 4096, L 32), seq 2048, micro-batch 1:
# s b h = 2048 x 4096 = 8,388,608
# activations, checkpointing on: (2 x 32 + 34) x 8,388,608 B = 822,083,584 B = 0.822084 GB
# activations, checkpointing off: 34 x 32 x 8,388,608 B = 9,126,805,504 B = 9.126806 GB
# gathered layer of a sharded replica: 48 x 4096^2 B = 805,306,368 B = 0.805306 GB
# runtime 1.3 GB
ACT_ON, ACT_OFF, LAYER, RUNTIME = 0.822083584, 9.126805504, 0.805306368, 1.3


def test_full_fine_tune_states_are_16_bytes_per_parameter():
    # bf16 weights 2 B + bf16 grads 2 B + AdamW fp32 master, momentum, variance 12 B = 16 B
    # 16 B x 7e9 = 112 GB
    weights, grads, optimizer = model_states_gb(job7())
    assert (weights, grads, optimizer) == pytest.approx((14.0, 14.0, 84.0))
    assert weights + grads + optimizer == pytest.approx(112.0)


def test_lora_and_qlora_states_by_hand():
    # adapter T = 1 % of 7e9 = 7e7 parameters at 2 + 2 + 12 B
    # LoRA: base 2 B x 7e9 = 14 GB + adapter weights 0.14 GB; grads 0.14; optimizer 0.84
    assert model_states_gb(job7(method="lora")) == pytest.approx((14.14, 0.14, 0.84))
    # QLoRA: base (4 + 0.127) / 8 = 0.515875 B x 7e9 = 3.611125 GB, + 0.14 adapter weights
    assert model_states_gb(job7(method="qlora")) == pytest.approx((3.751125, 0.14, 0.84))


def test_activations_by_hand():
    assert activations_gb(job7()) == pytest.approx(ACT_ON)
    assert activations_gb(job7(activation_checkpointing=False)) == pytest.approx(ACT_OFF)
    # micro-batch 4 and seq 4096: 8x the s b h, checkpointing on
    assert activations_gb(job7(micro_batch=4, seq_len=4096)) == pytest.approx(8 * ACT_ON)


def test_7b_full_fine_tune_never_fits_8_gpus_of_16_gb():
    # FSDP over the 8 GPUs of one VM: 112 / 8 = 14 GB of states per GPU
    # + 0.822 activations + 0.805 gathered layer + 1.3 runtime = 16.927 GB > 16 GB
    # (per replica 135.4 GB > 8 x 16 = 128 GB): no 16 GB GPU holds it on one VM.
    per_gpu = 14.0 + ACT_ON + LAYER + RUNTIME
    assert memory_breakdown(job7(), 8).per_gpu_gb == pytest.approx(per_gpu)
    assert memory_breakdown(job7(), 8).replica_gb == pytest.approx(8 * per_gpu)
    assert per_gpu > 16
    verdicts = {v.instance_type: v for v in memory_fit(["p3.16xlarge", "g4dn.metal",
                                                        "p3.2xlarge"], job7())}
    for name in ("p3.16xlarge", "g4dn.metal"):
        v = verdicts[name]
        assert not v.fits
        # the fewest GPUs on a 16 GB chip: 112 / g <= 16 - 2.927 = 13.073 -> g >= 8.57 -> 16,
        # two whole VMs; per GPU 7 + 2.927 = 9.927 GB, per replica 158.8 GB
        assert v.gpus_per_replica == 16
        assert v.vms_per_replica == 2
        assert v.needed_gb_per_gpu == pytest.approx(7.0 + ACT_ON + LAYER + RUNTIME)
        assert v.reason == (f"needs 159 GB per replica with FSDP over 16 GPUs; {name} has "
                            "8 x 16 GB (sharded across VMs, a replica would span 2)")
    # across VMs it fits on two of them
    across = memory_fit(["p3.16xlarge"], job7(shard_across_vms=True))[0]
    assert across.fits
    assert across.reason == ("fits: needs 9.9 GB per GPU with FSDP over 16 GPUs on 2 VMs; "
                             "p3.16xlarge has 8 x 16 GB")


def test_the_issue_example_g5_12xlarge():
    # A10G 24 GB: 112 / g <= 24 - 2.927 = 21.073 -> g >= 5.31 -> 8 (two g5.12xlarge of 4);
    # per GPU 14 + 2.927 = 16.927, per replica 135.4 GB
    v = memory_fit(["g5.12xlarge"], job7())[0]
    assert not v.fits
    assert v.gpus_per_replica == 8
    assert v.reason == ("needs 135 GB per replica with FSDP over 8 GPUs; g5.12xlarge has "
                        "4 x 24 GB (sharded across VMs, a replica would span 2)")
    # one g5.48xlarge has the 8 GPUs
    big = memory_fit(["g5.48xlarge"], job7())[0]
    assert big.fits
    assert big.reason == ("fits: needs 16.9 GB per GPU with FSDP over 8 GPUs; g5.48xlarge has "
                          "8 x 24 GB")


def test_which_types_hold_the_7b_full_fine_tune_by_hand():
    # need(g) = 112 / g + 2.927 GB (g > 1), 114.12 GB (g = 1); g a divisor of the VM's GPUs:
    # 16 GB: g >= 8.57 -> none; 24 GB: g >= 5.31 -> 8-GPU VMs; 32 GB: g >= 3.85 -> 4;
    # 34.36 GB (Trainium): g >= 3.56 -> 4; 40 GB: g >= 3.02 -> 4; 48 GB: g >= 2.49 -> 4;
    # 80 GB: g >= 1.45 -> 2; 141 GB: g = 1 (114.12 <= 141)
    catalog = load_catalog("aws-us-east-1-2025-h1")
    verdicts = memory_fit(catalog.gpu_types, job7())
    fitting = {v.instance_type: v.gpus_per_replica for v in verdicts if v.fits}
    assert fitting == {
        "g5.48xlarge": 8, "g6.48xlarge": 8, "g6e.12xlarge": 4, "g6e.24xlarge": 4,
        "g6e.48xlarge": 4, "p3dn.24xlarge": 4, "p4d.24xlarge": 4, "p4de.24xlarge": 2,
        "p5.48xlarge": 2, "p5en.48xlarge": 1, "trn1.32xlarge": 4, "trn1n.32xlarge": 4}
    # every VM that holds it has at least the 112 GB of model states in all
    for v in verdicts:
        if v.fits:
            assert v.gpus_per_vm * v.gpu_memory_gb >= 112


def test_without_checkpointing_the_a10g_no_longer_holds_it():
    # 14 + 9.127 + 0.805 + 1.3 = 25.23 GB per GPU over 8 > 24 GB
    job = job7(activation_checkpointing=False)
    assert memory_breakdown(job, 8).per_gpu_gb == pytest.approx(14 + ACT_OFF + LAYER + RUNTIME)
    assert not memory_fit(["g5.48xlarge"], job)[0].fits


def test_qlora_7b_fits_one_24_gb_gpu():
    # 3.751125 + 0.14 + 0.84 = 4.731125 GB of states + 0.822 + 1.3 = 6.853 GB on one GPU
    v = memory_fit(["g5.xlarge", "g4dn.xlarge"], job7(method="qlora"))
    assert [x.fits for x in v] == [True, True]
    assert v[0].gpus_per_replica == 1
    assert v[0].needed_gb_per_gpu == pytest.approx(4.731125 + ACT_ON + RUNTIME)
    assert v[0].reason == "fits: needs 6.9 GB per GPU on 1 GPU; g5.xlarge has 1 x 24 GB"


def test_lora_7b_needs_a_24_gb_gpu_or_two_16_gb_shards():
    # 15.12 + 0.822 + 1.3 = 17.24 GB on one GPU: a 24 GB A10G yes, a 16 GB T4 no;
    # FSDP over 2 T4: 7.56 + 0.822 + 0.805 + 1.3 = 10.49 GB
    v = {x.instance_type: x for x in memory_fit(
        ["g5.xlarge", "g4dn.xlarge", "g4dn.12xlarge"], job7(method="lora"))}
    assert v["g5.xlarge"].fits
    assert v["g5.xlarge"].needed_gb_per_gpu == pytest.approx(15.12 + ACT_ON + RUNTIME)
    assert not v["g4dn.xlarge"].fits
    assert v["g4dn.12xlarge"].fits
    assert v["g4dn.12xlarge"].gpus_per_replica == 2
    assert v["g4dn.12xlarge"].needed_gb_per_gpu == pytest.approx(7.56 + ACT_ON + LAYER + RUNTIME)


def test_no_sharding_needs_one_gpu_of_114_gb():
    # 112 + 0.822 + 1.3 = 114.12 GB on one GPU: only the 141 GB H200 holds it; the 80 GB A100
    # would with FSDP over 2 (56 + 2.927 = 58.93 GB)
    job = job7(sharding="none")
    v = {x.instance_type: x for x in memory_fit(["p5en.48xlarge", "p4de.24xlarge"], job)}
    assert v["p5en.48xlarge"].fits
    assert not v["p4de.24xlarge"].fits
    assert v["p4de.24xlarge"].gpus_per_replica is None
    assert v["p4de.24xlarge"].reason == (
        "needs 114 GB per GPU without sharding (one GPU per replica); p4de.24xlarge has "
        "8 x 80 GB (FSDP over 2 GPUs would hold it)")


def test_activations_alone_can_exceed_every_gpu():
    # seq 65536 x micro-batch 8, no checkpointing: 34 x 32 x 65536 x 8 x 4096 B = 2336.5 GB
    job = job7(seq_len=65536, micro_batch=8, activation_checkpointing=False)
    v = memory_fit(["p5en.48xlarge"], job)[0]
    assert not v.fits
    floor = 34 * 32 * 65536 * 8 * 4096 / 1e9 + LAYER + RUNTIME
    assert v.reason == (f"needs {floor:.0f} GB per GPU for activations (seq 65536 x "
                        "micro-batch 8) and the runtime before any model state; "
                        "p5en.48xlarge has 8 x 141 GB")


def test_fewest_gpus_is_vectorised_over_types():
    # 7B full, need(g) = 112 / g + 2.927: [16 GB x 8, 24 x 4, 24 x 8, 80 x 8, 141 x 8, 48 x 1]
    fewest = fewest_gpus_per_replica(job7(), [16, 24, 24, 80, 141, 48], [8, 4, 8, 8, 8, 1])
    # 48 GB on 1-GPU VMs: g >= 2.49 -> whole VMs: 3
    assert fewest.tolist() == [16, 8, 8, 2, 1, 3]
    assert per_gpu_gb(job7(), [1, 2, 8]).tolist() == pytest.approx(
        [112 + ACT_ON + RUNTIME, 56 + ACT_ON + LAYER + RUNTIME, 14 + ACT_ON + LAYER + RUNTIME])
    assert fewest_gpus_per_replica(job7(sharding="none"), [80, 141], [8, 8]).tolist() == [0, 1]


def test_unknown_and_non_training_hardware_do_not_fit():
    a, inf = memory_fit(["A", "inf2.xlarge"], job7(method="qlora"))
    assert not a.fits
    assert a.reason.startswith("cannot tell whether A holds the job: no accelerator model")
    assert not inf.fits
    assert inf.reason.startswith("inf2.xlarge has Inferentia2 chips, which do not train")


def test_no_fit_reason_names_the_largest_type():
    job = job7()
    verdicts = memory_fit(["g5.12xlarge", "p3.16xlarge"], job)
    reason = no_fit_reason(verdicts, job)
    # p3.16xlarge has 8 x 16 = 128 GB per VM, g5.12xlarge 4 x 24 = 96 GB
    assert reason == ("none of the 2 GPU types holds the job (" + job.describe() + "); with the "
                      "most GPU memory per VM: " + verdicts[1].reason)
    assert no_fit_reason(memory_fit(["p4d.24xlarge"], job), job) is None


def test_derived_shape_keeps_n_equal_to_12_l_h_squared():
    # h = (128 N / 12)^(1/3): for N = 7e9, h^3 = 7.4667e10, h = 4210.9, L = h / 128 = 32.90
    h, layers = TransformerJob(params_b=7, tokens_b=1).shape()
    assert h == pytest.approx(4210.9, abs=0.1)
    assert layers == pytest.approx(32.90, abs=0.01)
    assert 12 * layers * h * h == pytest.approx(7e9)
    # given h only: L = N / (12 h^2) = 7e9 / (12 x 4096^2) = 34.77
    assert TransformerJob(params_b=7, tokens_b=1, hidden_size=4096).shape()[1] == (
        pytest.approx(7e9 / (12 * 4096**2)))
    # given L only: h = sqrt(N / (12 L))
    assert TransformerJob(params_b=7, tokens_b=1, layers=32).shape()[0] == pytest.approx(
        math.sqrt(7e9 / (12 * 32)))


@pytest.mark.parametrize(("case", "measured_gib", "tolerance"), [
    # torchtitan (TT-H): Llama 3.1 8B, FSDP over 8 H100, local batch 2, seq 8192, selective
    # recomputation: 82.4 GiB. Model (checkpointing off keeps 34 s b h per layer):
    # 16 x 8.03 / 8 = 16.06 + 34 x 32 x 8192 x 2 x 4096 B = 73.01 + 0.805 + 1.3 = 91.18 GB
    # = 84.9 GiB (+3 %)
    ("tt-h", 82.4, 0.05),
    # torchtune (TTUNE): Llama 3.1 8B on one RTX 4090, batch 2, packed seq 2048: QLoRA 7.4 GiB;
    # model 4.303 + 0.161 + 0.964 + 98 x 2048 x 2 x 4096 B (1.644) + 1.3 = 8.37 GB = 7.8 GiB
    ("ttune-qlora", 7.4, 0.10),
    # LoRA 16.2 GiB; model 16.22 + 0.161 + 0.964 + 1.644 + 1.3 = 20.29 GB = 18.9 GiB (+17 %:
    # torchtune's default adapter is smaller than the 1 % assumed here)
    ("ttune-lora", 16.2, 0.20),
])
def test_model_against_published_peaks(case, measured_gib, tolerance):
    shape = {"params_b": 8.03, "tokens_b": 1, "hidden_size": 4096, "layers": 32}
    if case == "tt-h":
        job = TransformerJob(**shape, seq_len=8192, micro_batch=2,
                             activation_checkpointing=False)
        gpus = 8
    else:
        job = TransformerJob(**shape, seq_len=2048, micro_batch=2,
                             method=case.removeprefix("ttune-"))
        gpus = 1
    modelled = memory_breakdown(job, gpus).per_gpu_gb / GIB
    assert abs(modelled / measured_gib - 1) < tolerance


@pytest.mark.parametrize(("changes", "field", "message"), [
    ({"params_b": 0}, "params_b", "greater than 0"),
    ({"params_b": "7B"}, "params_b", "must be a number"),
    ({"params_b": 7e9}, "params_b", "at most 10000 billion parameters"),
    ({"tokens_b": math.nan}, "tokens_b", "finite number"),
    ({"epochs": -1}, "epochs", "greater than 0"),
    ({"method": "adapter"}, "method", "full, lora, qlora"),
    ({"sharding": "zero2"}, "sharding", "none, fsdp"),
    ({"seq_len": 0}, "seq_len", "whole number from 1"),
    ({"micro_batch": 1.5}, "micro_batch", "whole number from 1"),
    ({"hidden_size": True}, "hidden_size", "whole number"),
    ({"adapter_fraction": 2.0}, "adapter_fraction", "at most 1"),
    ({"activation_checkpointing": "yes"}, "activation_checkpointing", "true or false"),
    ({"sharding": "none", "shard_across_vms": True}, "shard_across_vms", "needs sharding"),
])
def test_bad_fields_are_named_with_their_value(changes, field, message):
    with pytest.raises(WorkloadError) as info:
        TransformerJob(**{"params_b": 7, "tokens_b": 2, **changes})
    problems = {p.field: p for p in info.value.problems}
    assert field in problems
    assert message in problems[field].message
    assert str(info.value).startswith("transformer job is invalid")


def test_every_problem_is_listed_at_once():
    with pytest.raises(WorkloadError) as info:
        TransformerJob(params_b=-1, tokens_b=0, method="x")  # type: ignore[arg-type]
    assert [p.field for p in info.value.problems] == ["params_b", "tokens_b", "method"]


def test_epochs_split_the_tokens():
    job = TransformerJob.from_epochs(epochs=3, tokens_per_epoch_b=0.5, params_b=7)
    assert job.tokens_b == pytest.approx(1.5)
    assert job.tokens_per_epoch == pytest.approx(0.5e9)
    with pytest.raises(WorkloadError, match="tokens_per_epoch_b"):
        TransformerJob.from_epochs(epochs=3, tokens_per_epoch_b=-1, params_b=7)
    assert job.describe() == ("7B full, FSDP within a VM, 1.5B tokens in 3 epochs, seq 2048 x "
                              "micro-batch 1, activation checkpointing on")


def _oracle_need(params_b: float, method: str, g: int, seq: int, batch: int,
                 checkpointing: bool) -> float:
    """need(g) in GB from the formulas of memory.py's docstring, typed again (h 4096, L 32,
    adapter 1 %)."""
    n, t = params_b * 1e9, 0.01 * params_b * 1e9
    base = {"full": 2.0, "lora": 2.0, "qlora": 0.515875}[method]
    states = 16 * n if method == "full" else base * n + 16 * t
    sbh = seq * batch * 4096
    act = (2 * 32 + 34) * sbh if checkpointing else 34 * 32 * sbh
    layer = 48 * 4096**2 if g > 1 else 0
    return (states / g + act + layer) / 1e9 + 1.3


def _oracle_fewest(params_b: float, method: str, sharding: str, memory: float, per_vm: int,
                   seq: int, batch: int, checkpointing: bool) -> int:
    """The fewest allowed shard count by a plain loop: 1, then the divisors of the VM's GPUs,
    then whole VMs (up to 4096 GPUs); 0 when none holds the job."""
    counts = [1] if sharding == "none" else (
        [d for d in range(1, per_vm + 1) if per_vm % d == 0]
        + [per_vm * v for v in range(2, 4096 // per_vm + 1)])
    for g in counts:
        if _oracle_need(params_b, method, g, seq, batch, checkpointing) <= memory:
            return g
    return 0


@settings(max_examples=300, deadline=None)
@given(params_b=st.floats(0.1, 200), method=st.sampled_from(["full", "lora", "qlora"]),
       sharding=st.sampled_from(["none", "fsdp"]),
       memory=st.sampled_from([8.0, 16.0, 24.0, 32.0, 34.36, 40.0, 48.0, 80.0, 141.0]),
       per_vm=st.sampled_from([1, 2, 4, 8, 16]), seq=st.sampled_from([512, 2048, 8192]),
       batch=st.integers(1, 8), checkpointing=st.booleans())
def test_fewest_gpus_agrees_with_a_plain_loop(params_b, method, sharding, memory, per_vm, seq,
                                              batch, checkpointing):
    job = TransformerJob(params_b=params_b, tokens_b=1, method=method, sharding=sharding,
                         seq_len=seq, micro_batch=batch, activation_checkpointing=checkpointing,
                         hidden_size=4096, layers=32)
    expected = _oracle_fewest(params_b, method, sharding, memory, per_vm, seq, batch,
                              checkpointing)
    got = int(fewest_gpus_per_replica(job, [memory], [per_vm])[0])
    if expected == 0 and got > 4096:
        return  # past the oracle's reach
    assert got == expected
