"""AppTest tests of a transformer job on Plan a job (and Recommend), issue 24: the 7B full
fine-tune with FSDP within a VM (the core's example transformer job) on the 50-type catalog.

Figures by hand: one replica's model states are 16 bytes x 7e9 parameters = 112 GB (bf16
weights 2 + bf16 gradients 2 + AdamW's fp32 master, momentum and variance 12), so no VM with
less than 112 GB of GPU memory in all can run it; a VM's GPU memory is read here with the csv
module from data/instance-gpus.csv (GPUs per VM) and data/accelerators.csv (GB per GPU). The
checkpoint is trainable weights + optimizer states, (2 + 12) x 7 = 98 GB.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from app_pages import new_app, no_errors
from streamlit.testing.v1 import AppTest

from dashboard import url_plan
from deepvm_core.catalog.store import load_catalog
from tests.app_expectations import pinned

CATALOG = "aws-us-east-1-2025-h1"
DATA = Path(__file__).resolve().parent.parent / "data"
STATES_GB = 16 * 7.0
SEVEN_B = {"page": "plan", "catalog": CATALOG, "workload": "transformer", "params_b": "7",
           "tokens_b": "2", "method": "full", "sharding": "fsdp", "trials": "0"}


def vm_gpu_gb() -> dict[str, float]:
    """GB of GPU memory per VM type, from the two CSV files."""
    with open(DATA / "accelerators.csv", newline="") as handle:
        per_gpu = {r["accelerator"]: float(r["memory_gb"]) for r in csv.DictReader(handle)
                   if r["memory_gb"]}
    with open(DATA / "instance-gpus.csv", newline="") as handle:
        return {r["instance_type"]: int(r["gpus"]) * per_gpu[r["accelerator"]]
                for r in csv.DictReader(handle) if r["accelerator"] in per_gpu}


def opened(tmp_path, monkeypatch, **query: str) -> AppTest:
    at = pinned(new_app(tmp_path, monkeypatch))
    at.query_params.update(query)
    at.run()
    no_errors(at)
    return at


def markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.main.markdown)


def test_the_7b_job_at_pw_3_fits_nowhere_and_names_the_pw_that_first_fits(
        tmp_path, monkeypatch) -> None:
    at = opened(tmp_path, monkeypatch, **SEVEN_B, pw="3")
    text = markdown(at)
    assert "#### No cluster fits this job" in text
    assert ("**Your job:** 7B full, FSDP within a VM, 2B tokens in 1 epoch, seq 2048 x "
            "micro-batch 1, activation checkpointing on") in text
    lift = re.search(r"Lift PW to \*\*([\d.,]+) USD/h\*\* for the first cluster the job fits "
                     r"on: (\w+): \d+ x (\S+) spot", text)
    assert lift, text
    pw, gpu = float(lift.group(1)), lift.group(3)
    memory = vm_gpu_gb()
    assert memory[gpu] >= STATES_GB
    # No cluster can be cheaper than the cheapest spot VM that has 112 GB of GPU memory, and
    # the PW named is above 3 (else the card would name the cluster) and at most 10 (a cluster
    # is chosen there, next test).
    catalog = load_catalog(CATALOG)
    floor = min(g.spot_usd_per_hour for g in catalog.gpu_types
                if memory.get(g.name, 0.0) >= STATES_GB)
    assert 3.0 < pw <= 10.0
    assert pw >= round(floor, 2)
    # why the types are out: g5.12xlarge has 4 x 24 = 96 GB; p3.16xlarge 8 x 16 = 128 GB holds
    # the states but not the activations and runtime beside them
    out = next(m.value for m in at.main.markdown if m.value.startswith("- **"))
    for name in ("g5.12xlarge", "p3.16xlarge"):
        assert re.search(rf"- \*\*{re.escape(name)}\*\*: needs [\d.]+ GB per replica", out)
    assert any("GPU memory: the job" in i.value for i in at.info)


def test_the_7b_job_at_pw_10_runs_on_a_vm_with_112_gb_of_gpu_memory(tmp_path,
                                                                    monkeypatch) -> None:
    at = opened(tmp_path, monkeypatch, **SEVEN_B, pw="10")
    text = markdown(at)
    assert "### 1 epoch of your job: about **" in text
    cluster = re.search(r"\*\*(?:Tiering|Single Anchor) · (\d+) × (\S+) spot", text)
    assert cluster, text
    assert vm_gpu_gb()[cluster.group(2)] >= STATES_GB
    assert "Checkpoints of 98.0 GB, the job's own" in " ".join(c.value for c in at.caption)
    frame = next(d.value for d in at.dataframe if "GPU memory (one replica)" in d.value.columns)
    fits = frame.set_index("GPU type")["GPU memory (one replica)"]
    assert fits[cluster.group(2)].startswith("fits")
    assert fits["g5.12xlarge"].startswith("needs")


def test_recommend_honours_a_transformer_job_from_the_url(tmp_path, monkeypatch) -> None:
    at = opened(tmp_path, monkeypatch, **{**SEVEN_B, "page": "recommend"}, pw="10")
    head = next(m.value for m in at.main.markdown if m.value.startswith("### "))
    gpu = re.search(r"(\d+) × (\S+)", head)
    assert gpu, head
    assert vm_gpu_gb()[gpu.group(2)] >= STATES_GB
    assert not any("cannot be used here" in w.value for w in at.warning)


#: A value of every new input that is not its default.
CHANGED = {"workload": "transformer", "params_b": "13", "tokens_b": "0.5", "tf_epochs": "2",
           "method": "lora", "sharding": "none", "shard_across_vms": "on", "seq_len": "4096",
           "micro_batch": "2", "activation_checkpointing": "off",
           "tokens_per_second": "1500", "tf_ckpt_every": "3"}


def test_every_new_key_round_trips_through_its_codec() -> None:
    assert set(CHANGED) == {"workload", *(p.name for p in url_plan.TRANSFORMER_PARAMS)}
    for name, text in CHANGED.items():
        values, warnings = url_plan.parse_plan_params({name: text})
        assert not warnings
        assert values[name] != url_plan.PLAN_PARAM_BY_NAME[name].default
        assert url_plan.format_plan_param(name, values[name]) == text
        default = url_plan.PLAN_PARAM_BY_NAME[name].default
        again, _ = url_plan.parse_plan_params(
            {name: url_plan.format_plan_param(name, default)})
        assert again[name] == default


def test_a_transformer_job_in_the_url_fills_the_inputs_and_stays_in_the_url(
        tmp_path, monkeypatch) -> None:
    given = {**CHANGED, "ref": "p4d.24xlarge"}
    given.pop("sharding")  # across VMs needs FSDP, the default (so not in the URL)
    at = opened(tmp_path, monkeypatch, page="plan", catalog=CATALOG, pw="10", trials="0",
                **given)
    for name, text in given.items():
        assert url_plan.format_plan_param(name, at.session_state[f"plan_{name}"]) == text
        assert at.query_params[name] == text
    assert ("**Your job:** 13B LoRA, FSDP across VMs, 0.5B tokens in 2 epochs, seq 4096 x "
            "micro-batch 2, activation checkpointing off; 1,500 tokens/s measured on 1 x "
            "p4d.24xlarge") in markdown(at)
    at.run()  # a rerun (what a reload's session restores from the URL) keeps them
    no_errors(at)
    for name, text in given.items():
        assert at.query_params[name] == text
    assert at.selectbox(key="plan_method").value == "lora"
    assert at.number_input(key="plan_params_b").value == 13.0


@pytest.mark.parametrize(("param", "value", "why"), [
    ("method", "dpo", "is not one of full, lora, qlora"),
    ("seq_len", "0", "is outside 1..1048576"),
    ("params_b", "-7", "is outside"),
    ("activation_checkpointing", "maybe", "is not on or off"),
    ("workload", "rnn", "is not one of cnn, transformer"),
])
def test_a_bad_transformer_value_in_the_url_is_warned_and_replaced(
        tmp_path, monkeypatch, param: str, value: str, why: str) -> None:
    at = opened(tmp_path, monkeypatch, **{**SEVEN_B, param: value}, pw="10")
    warnings = " ".join(w.value for w in at.warning)
    assert f"URL parameter {param}={value!r} {why}" in warnings
    assert not at.error
    default = url_plan.PLAN_PARAM_BY_NAME[param].default
    assert at.session_state[f"plan_{param}"] == default


def test_an_uploaded_epoch_time_is_not_offered_to_a_transformer_job(tmp_path,
                                                                   monkeypatch) -> None:
    at = opened(tmp_path, monkeypatch, **SEVEN_B, pw="10")
    at.file_uploader(key="plan_csv").upload(
        "mine.csv", b"instance,nodes,epoch_seconds\np4d.24xlarge,1,60\np4d.24xlarge,2,31\n",
        "text/csv")
    at.run()
    no_errors(at)
    assert not [b for b in at.button if b.key == "plan_use_epoch_time"]
    assert any("A transformer job's time comes from its tokens per second" in c.value
               for c in at.caption)
