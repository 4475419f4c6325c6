"""A transformer job through the search, the plan and the CLI (issue 24): its GPU memory decides
which types can run it, its checkpoint sizes the memory nodes, and a job that fits nowhere within
PW gets the PW that first fits, never a traceback.

Figures by hand (``llm-training-sources.md``, section 2; data/instance-gpus.csv and
data/accelerators.csv for the VMs):

* 7B full fine-tune, AdamW in mixed precision: weights 2 N + gradients 2 N + optimizer 12 N =
  16 x 7e9 = 112 GB of model states, before activations: no VM with less than 112 GB of GPU
  memory in all can hold one replica (p3.16xlarge: 8 x 16 = 128 GB would, barely, but the
  activations and runtime of 8 GPUs do not fit beside 112 / 8 = 14 GB of states per 16 GB GPU).
* its checkpoint: 16-bit weights + fp32 optimizer states, (2 + 12) x 7e9 = 98 GB.
* 7B QLoRA: 0.516 x 7e9 = 3.6 GB base + 16 x 7e7 = 1.1 GB adapter, about 7 GB with activations
  and the CUDA runtime: a 24 GB A10G (g5.xlarge) holds it.
"""

from __future__ import annotations

import json

import pytest
from cli_helpers import run_cli

from deepvm_core.catalog.store import load_catalog
from deepvm_core.model import Scenario
from deepvm_core.pipeline.plan import plan_job
from deepvm_core.search.candidates import build_domain
from deepvm_core.workload.gpu_hardware import gpu_hardware
from deepvm_core.workload.memory import checkpoint_gb
from deepvm_core.workload.speed import speed_basis
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.transformer import TransformerJob
from deepvm_core.workload.workload import Workload

CATALOG = "aws-us-east-1-2025-h1"
SEVEN_B_FULL = TransformerJob(params_b=7, tokens_b=2, sharding="fsdp")
STATES_GB = 16 * 7.0  # 112 GB: weights, gradients, optimizer states of 7B, full


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(CATALOG)


def _vm_gpu_gb(name: str) -> float:
    hw = gpu_hardware(name)
    assert hw.gpus_per_vm is not None
    assert hw.memory_gb_per_gpu is not None
    return hw.gpus_per_vm * hw.memory_gb_per_gpu


def _workload(job: TransformerJob, **fields) -> Workload:
    return Workload.for_transformer(job, checkpoint_gb=checkpoint_gb(job),
                                    checkpoint_every_epochs="auto", **fields)


def test_the_checkpoint_of_a_7b_full_fine_tune_is_98_gb_and_of_its_lora_adapter_about_1():
    assert checkpoint_gb(SEVEN_B_FULL) == pytest.approx(14 * 7.0)
    lora = TransformerJob(params_b=7, tokens_b=2, method="lora")
    assert checkpoint_gb(lora) == pytest.approx(14 * 7e9 * 0.01 / 1e9)


def test_no_cluster_of_the_domain_has_less_gpu_memory_than_the_model_states(catalog):
    basis = speed_basis(catalog, _workload(SEVEN_B_FULL))
    domain = build_domain(catalog, Scenario(3.0, checkpoint_gb=98.0), speed=basis)
    names = {g.name for g in domain.gpus}
    assert names  # some types hold it
    for name in names:
        assert _vm_gpu_gb(name) >= STATES_GB, name
    # the 16 GB V100 and T4 VMs are out, and say why
    for name in ("p3.16xlarge", "g4dn.12xlarge", "g5.12xlarge"):
        assert not basis.admits(name)
        verdict = next(v for v in basis.memory if v.instance_type == name)
        assert "needs" in verdict.reason
        assert name in verdict.reason


def test_pw_3_fits_nothing_and_names_the_pw_that_first_does(catalog):
    result = plan_job(catalog, Scenario(3.0, checkpoint_gb=98.0), _workload(SEVEN_B_FULL),
                      pw_usd_per_hour=3.0, speedup=SpeedupModel(), trials=0)
    assert result.best == ()
    why = result.explanation
    assert why is not None
    assert "budget" in why.binding
    first = why.cheapest_configuration
    assert first is not None
    assert why.cheapest_feasible_usd_per_hour is not None
    assert why.cheapest_feasible_usd_per_hour > 3.0
    assert _vm_gpu_gb(first.gpu) >= STATES_GB
    assert any("GPU memory: the job" in n for n in result.notes)


def test_pw_off_picks_a_vm_whose_gpus_hold_the_job(catalog):
    result = plan_job(catalog, Scenario(3.0, checkpoint_gb=98.0), _workload(SEVEN_B_FULL),
                      pw_usd_per_hour=None, speedup=SpeedupModel(), trials=0)
    assert result.best
    for estimate in result.best:
        assert _vm_gpu_gb(estimate.configuration.gpu) >= STATES_GB


def test_a_7b_qlora_job_may_use_24_gb_gpus(catalog):
    qlora = TransformerJob(params_b=7, tokens_b=2, method="qlora")
    basis = speed_basis(catalog, _workload(qlora))
    assert basis.admits("g5.xlarge")  # 1 x A10G, 24 GB
    assert gpu_hardware("g5.xlarge").memory_gb_per_gpu == 24.0


def test_a_replica_across_vms_admits_whole_replicas_only(catalog):
    """g5.12xlarge (4 x 24 GB = 96 GB) cannot hold the 112 GB of states; FSDP across VMs over 2
    of them (192 GB) can: its clusters are then 2, 4, 6, ... VMs."""
    job = TransformerJob(params_b=7, tokens_b=2, sharding="fsdp", shard_across_vms=True)
    basis = speed_basis(catalog, _workload(job))
    assert basis.replica_vms("g5.12xlarge") == 2
    domain = build_domain(catalog, Scenario(3.0, checkpoint_gb=98.0, max_nodes=16),
                          speed=basis)
    gi = [g.name for g in domain.gpus].index("g5.12xlarge")
    counts = set(domain.n[domain.gpu == gi].tolist())
    assert counts
    assert all(n % 2 == 0 for n in counts)


def test_a_measured_tokens_per_second_gives_the_reference_its_time(catalog):
    """2e9 tokens in 1 epoch at 5,000 tokens/s on one p4d.24xlarge: 400,000 s per epoch."""
    w = _workload(SEVEN_B_FULL, tokens_per_second=5000.0, reference_gpu="p4d.24xlarge")
    basis = speed_basis(catalog, w)
    assert basis.reference_gpu == "p4d.24xlarge"
    assert basis.one_vm_epoch_seconds["p4d.24xlarge"] == pytest.approx(2e9 / 5000.0)


def test_workload_refuses_mixed_kinds():
    from deepvm_core.errors import WorkloadError
    with pytest.raises(WorkloadError, match="reference_epoch_seconds"):
        Workload.for_transformer(SEVEN_B_FULL, reference_epoch_seconds=960.0)
    with pytest.raises(WorkloadError, match="tokens_per_second"):
        Workload(epochs=90, reference_epoch_seconds=960, tokens_per_second=10.0)
    with pytest.raises(WorkloadError, match="reference_gpu"):
        Workload.for_transformer(SEVEN_B_FULL, tokens_per_second=10.0)
    with pytest.raises(WorkloadError, match="epochs"):
        Workload(epochs=3, transformer=SEVEN_B_FULL)


# ----------------------------------------------------------------------------- the CLI


def test_cli_plan_json_fits_nowhere_within_pw_exits_0_with_chosen_null(capsys):
    code, out, err = run_cli(capsys, "plan", "--catalog", CATALOG, "--pw", "3", "--workload",
                             "transformer", "--params-b", "7", "--tokens-b", "2", "--trials",
                             "0", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["chosen"] is None
    assert doc["inputs"]["workload"] == "transformer"
    assert doc["inputs"]["transformer"]["params_b"] == 7
    assert doc["inputs"]["checkpoint_gb"] == pytest.approx(98.0)
    assert "below the cheapest feasible cluster" in doc["summary"]
    assert doc["assumptions"]["gpu_types"]["p3.16xlarge"]["memory_fit"].startswith("needs")


def test_cli_recommend_names_the_fitting_types(capsys):
    code, out, err = run_cli(capsys, "recommend", "--catalog", CATALOG, "--pw", "10",
                             "--workload", "transformer", "--params-b", "7", "--tokens-b", "2")
    assert code == 0, err
    assert "the job does not fit" in out  # the 16 GB models' rows say why


@pytest.mark.parametrize(("argv", "says"), [
    (["--workload", "transformer", "--params-b", "7"], "needs --tokens-b"),
    (["--params-b", "7"], "only for --workload transformer"),
    (["--workload", "transformer", "--params-b", "7", "--tokens-b", "2", "--epoch-seconds",
      "960"], "--epoch-seconds is a cnn job's time"),
    (["--workload", "transformer", "--params-b", "7", "--tokens-b", "2",
      "--tokens-per-second", "100"], "--tokens-per-second needs --ref-type"),
    (["--workload", "transformer", "--params-b", "-7", "--tokens-b", "2"], "--params-b"),
])
def test_cli_refuses_a_bad_transformer_job_in_one_line(capsys, argv, says):
    try:
        code, out, err = run_cli(capsys, "plan", "--catalog", CATALOG, "--pw", "3", *argv)
    except SystemExit as exc:  # argparse's own checks exit from the parser
        code = exc.code
        out, err = capsys.readouterr()
    assert code == 2
    assert says in err
    assert "Traceback" not in err
    assert out == ""


def test_a_cheapest_plan_that_loses_to_on_demand_says_so_and_offers_it(capsys):
    """The paper's catalog with interruptions 50x as frequent (MTBI x 0.02): the cheapest spot
    plan of the example job costs more than its own cluster on demand (checked on the JSON's
    figures), and the plan says so and offers the on-demand plan."""
    argv = ("plan", "--catalog", "aws-us-east-1-2023-10", "--pw", "3", "--mtbi-scale", "0.02",
            "--trials", "0")
    code, out, err = run_cli(capsys, *argv, "--format", "json")
    assert code == 0, err
    estimate = json.loads(out)["chosen"]["estimate"]
    assert estimate["expected_cost_usd"] > estimate["on_demand_same_cluster"]["cost_usd"]
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    assert "Spot loses here: the same cluster bought on demand costs" in out
    assert "Run it on demand." in out
    assert "spot costs" in out


# ----------------------------------------------------------------------------- one home for f, k


def test_a_transformer_workload_sizes_f_by_its_own_checkpoint_and_k_by_daly_unless_given():
    """f: 98 GB for the 7B full job (14 x 7e9 bytes, by hand), the user's when given, 0.3 GB
    (Scenario's default) for a cnn job without one; k: "auto" unless given. The CLI and the
    dashboard both take f and k from here."""
    from deepvm_core.workload.workload import job_checkpoint_gb

    assert job_checkpoint_gb(SEVEN_B_FULL, None) == pytest.approx(98.0)
    assert job_checkpoint_gb(SEVEN_B_FULL, 12.5) == 12.5
    assert job_checkpoint_gb(None, None) == pytest.approx(0.3)
    w = Workload.for_transformer(SEVEN_B_FULL)
    assert (w.checkpoint_gb, w.checkpoint_every_epochs) == (pytest.approx(98.0), "auto")
    w = Workload.for_transformer(SEVEN_B_FULL, checkpoint_gb=5.0, checkpoint_every_epochs=2)
    assert (w.checkpoint_gb, w.checkpoint_every_epochs) == (5.0, 2)
