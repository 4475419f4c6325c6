"""Plan a job's inputs: the job's widgets (epochs, epoch time, reference cluster, checkpoints,
goal, limits, research settings) and its assumptions (restart R, capacity wait W, anchor disk D,
fixed checkpoint cost δ0, the MTBI per GPU type and its scale). Every widget is keyed by
:data:`dashboard.keys.PLAN` (the URL's ``plan_*`` values, :mod:`dashboard.url_plan`); the job
is read back from the session by :mod:`dashboard.job_view`.
"""

from __future__ import annotations

import math

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dashboard import answer, job_frames, keys, state, typed_inputs, url_plan
from dashboard.glossary import GLOSSARY
from dashboard.plain_view import words
from deepvm_core.catalog import Catalog
from deepvm_core.pipeline.plan import GOALS
from deepvm_core.units import MINUTES_PER_HOUR
from deepvm_core.workload.workload import (
    MAX_CHECKPOINT_FIXED_SECONDS,
    MAX_RESTART_HOURS,
    MAX_WAIT_HOURS,
)
from deepvm_core.workload.yardstick import YARDSTICK_CHOICE

MTBI_SCALES = (0.25, 0.5, 1.0, 2.0, 4.0)
SPEEDUP_LABELS = {"fitted": "Fitted logistic (default)", "measured": "Measured points",
                  "paper": "Paper's n·K(n)"}
GOAL_LABELS = {"cheapest": "Cheapest job", "fastest": "Fastest job"}
KIND_LABELS = {"cnn": "CNN (epochs × measured epoch time)",
               "transformer": "Transformer (parameters × tokens)"}
METHOD_LABELS = {"full": "Full (AdamW, mixed precision)", "lora": "LoRA", "qlora": "QLoRA"}
SHARDING_LABELS = {"none": "None (a replica per GPU)", "fsdp": "FSDP (ZeRO-3)"}

#: The core's bounds on R, W and δ0 (:mod:`deepvm_core.workload.workload`) in the inputs' units: a
#: typed value past them is refused next to the input (a URL's value is kept, and the plan's
#: error names the bound, issue 16).
TYPED_HIGH = {"restart_min": MAX_RESTART_HOURS * MINUTES_PER_HOUR,
              "wait_min": MAX_WAIT_HOURS * MINUTES_PER_HOUR,
              "ckpt_fixed_s": MAX_CHECKPOINT_FIXED_SECONDS}


def _number(column: DeltaGenerator, name: str, label: str, *, step: float, fmt: str = "%g",
            help: str | None = None, unit: str = "") -> None:
    """The number input of the job's input ``name`` (its key is ``keys.PLAN[name]``); a typed
    value outside its bounds is refused in words (:mod:`dashboard.typed_inputs`)."""
    p = url_plan.PLAN_PARAM_BY_NAME[name]
    high = min(p.high, TYPED_HIGH.get(name, math.inf))
    if p.kind == "int":
        typed_inputs.number(column, label, keys.PLAN[name], p.low, high, unit=unit, whole=True,
                            step=int(step), help=help)
    else:
        typed_inputs.number(column, label, keys.PLAN[name], p.low, high, unit=unit, step=step,
                            format=fmt, help=help)


def job_widgets(catalog: Catalog) -> None:
    """The job's widgets, keyed by :data:`dashboard.keys.PLAN`."""
    plan = keys.PLAN
    gpus = [g.name for g in catalog.solvable_gpu_types]
    with st.container(border=True, key="plan_inputs"):
        st.radio("Job kind", list(KIND_LABELS), horizontal=True, key=plan["workload"].name,
                 persist_state=keys.PERSIST, format_func=KIND_LABELS.__getitem__,
                 help="CNN: the paper's data-parallel job, its time measured per epoch. "
                      "Transformer: an LLM pretraining or fine-tune; GPU memory decides which "
                      "types can run it, its time comes from FLOPs per token (or your "
                      "tokens/s).")
        transformer = plan["workload"].get() == "transformer"
        if transformer:
            transformer_widgets()
        else:
            a, b, c, d = st.columns(4)
            _number(a, "epochs", "Epochs", step=1.0, help="How many epochs the job trains.")
            _number(b, "epoch_s", "Seconds per epoch (measured)", step=1.0, fmt="%.2f",
                    help="Your measurement: seconds per epoch on the reference cluster.")
        a, b, c, d = st.columns(4)
        if transformer:  # the reference cluster of a measured tokens/s
            c, d = b, c
        options = ["", *gpus]
        if plan["ref"].get() not in options:
            st.warning(words(f"Reference type {plan['ref'].get()!r} is not a GPU type of this "
                             f"catalog; using {YARDSTICK_CHOICE}."), icon=":material/warning:")
            plan["ref"].set("")
        if transformer:
            _number(a, "tokens_per_second", "Measured tokens/s (0: estimate)", step=100.0,
                    help="Your job's tokens per second on the VMs to the right; wins over the "
                         "estimate (FLOPs per token at a published MFU).")
        c.selectbox("Measured on GPU type", options, key=plan["ref"].name,
                    persist_state=keys.PERSIST, format_func=lambda n: n or YARDSTICK_CHOICE,
                    help="The type of your measurement; other types follow eFLOPS. Without "
                         "one, the epoch time is on one A10G GPU, the same in every catalog.")
        _number(d, "ref_nodes", "… on this many VMs", step=1)
        presentation = state.presentation()
        a, b, c, spare = st.columns(4)
        _number(a, "tf_ckpt_every" if transformer else "ckpt_every",
                "Checkpoint every k epochs (0: auto, Daly)", step=1,
                help=GLOSSARY["Daly interval"])
        b.radio("Goal", GOALS, horizontal=True, key=plan["goal"].name,
                persist_state=keys.PERSIST, format_func=GOAL_LABELS.__getitem__)
        c.toggle("No hourly spending cap" if presentation else "PW off (any hourly price)",
                 key=plan["pw_off"].name, persist_state=keys.PERSIST,
                 help="Quotas and the node cap still bound the clusters; the paper's policies "
                      "need a PW and are then not shown.")
        a, b, c, d = st.columns(4)
        _number(a, "deadline_h", "Deadline, hours (0: none)", step=1.0,
                help="Keep clusters whose expected makespan is within it.")
        _number(b, "budget_usd", "Job budget, USD (0: none)", step=10.0,
                help="Keep clusters whose expected job cost is within it.")
        # The research knobs: folded away in presentation mode (same keys, same values).
        knobs = (st.expander(words("Research settings: speedup model, Monte Carlo runs, seed"))
                 if presentation else None)
        if knobs is not None:
            c, d, e = knobs.columns(3)
        else:
            e = spare
        e.selectbox("Speedup model", list(SPEEDUP_LABELS), key=plan["speedup"].name,
                    persist_state=keys.PERSIST, format_func=SPEEDUP_LABELS.__getitem__,
                    help=GLOSSARY["Speedup model"])
        _number(c, "trials", "Monte Carlo runs (0: none)", step=1000)
        _number(d, "seed", "Seed", step=1)
        if not transformer and (float(plan["epochs"].get()), float(plan["epoch_s"].get())) == (
                float(plan["epochs"].default), float(plan["epoch_s"].default)):
            st.caption(words(f"The job above is an example, {answer.EXAMPLE_JOB}."))


def transformer_widgets() -> None:
    """A transformer job's inputs (:data:`dashboard.url_plan.TRANSFORMER_PARAMS`)."""
    plan = keys.PLAN
    a, b, c, d = st.columns(4)
    _number(a, "params_b", "Parameters (billions)", step=1.0,
            help="The model's parameters, in billions (7 for a 7B model).")
    _number(b, "tokens_b", "Tokens (billions)", step=1.0,
            help="Tokens the whole job trains on, in billions (split into the epochs).")
    _number(c, "tf_epochs", "Epochs", step=1.0, help="How many epochs the tokens are split "
                                                      "into (checkpoints, and the job model's E).")
    d.selectbox("Method", list(METHOD_LABELS), key=plan["method"].name,
                persist_state=keys.PERSIST, format_func=METHOD_LABELS.__getitem__,
                help="Full fine-tune or pretraining, or LoRA / QLoRA adapters on a frozen base.")
    a, b, c, d = st.columns(4)
    a.selectbox("Sharding within a VM", list(SHARDING_LABELS), key=plan["sharding"].name,
                persist_state=keys.PERSIST, format_func=SHARDING_LABELS.__getitem__,
                help="FSDP splits weights, gradients and optimizer states over a VM's GPUs.")
    b.toggle("Shard across VMs", key=plan["shard_across_vms"].name, persist_state=keys.PERSIST,
             disabled=plan["sharding"].get() == "none",
             help="Let one FSDP replica span several VMs when one VM's GPUs cannot hold it "
                  "(clusters are then whole replicas). Needs FSDP.")
    _number(c, "seq_len", "Sequence length (tokens)", step=256)
    _number(d, "micro_batch", "Micro-batch (sequences per GPU)", step=1)
    st.toggle("Activation checkpointing (recompute activations)",
              key=plan["activation_checkpointing"].name, persist_state=keys.PERSIST,
              help="Keeps one input per layer instead of every activation, for one more "
                   "forward pass.")


def assumptions(catalog: Catalog) -> None:
    """R, W, D, δ0, the MTBI per GPU type (editable) and the MTBI scale."""
    scale = keys.PLAN["mtbi_scale"]
    with st.expander("Assumptions: interruptions, restarts, checkpoints", expanded=False):
        st.caption(words("These are assumptions, not measurements: change them to see how much the "
                         "answer depends on them. " + GLOSSARY["MTBI"]))
        a, b, c, d = st.columns(4)
        _number(a, "restart_min", "Restart R (min)", step=1.0, unit=" min",
                help="Relaunch, rejoin and restore after an interruption (billed).")
        _number(b, "wait_min", "Capacity wait W (min; -1: the bucket's)", step=1.0,
                unit=" min", help="Until spot VMs are back after an interruption (spot VMs "
                                  "not billed); -1: each type's Spot Advisor bucket default.")
        _number(c, "disk_gbps", "Anchor disk D (GB/s)", step=0.05, fmt="%.3f", unit=" GB/s",
                help="Single Anchor: the anchor writes each checkpoint to its disk.")
        _number(d, "ckpt_fixed_s", "Fixed checkpoint cost δ0 (s)", step=1.0, unit=" s")
        if float(scale.get()) not in MTBI_SCALES:
            scale.set(scale.default)
        st.select_slider(words("MTBI scale (sensitivity)"), MTBI_SCALES, key=scale.name,
                         persist_state=keys.PERSIST, format_func=lambda x: f"× {x:g}",
                         help="Multiplies every MTBI: × 0.25 is four times as many "
                              "interruptions.")
        mtbi_table(catalog)


def mtbi_table(catalog: Catalog) -> None:
    """The MTBI per GPU type, editable as text (``1e-9`` is read as typed; the bound is the
    core's); a refused cell goes back to the value in use, and the page says why."""
    frame = job_frames.mtbi_frame(catalog, keys.PLAN_MTBI.get())
    edited = st.data_editor(
        frame, hide_index=True, key=f"plan_mtbi_editor_{keys.PLAN_MTBI_VERSION.get()}",
        disabled=[c for c in frame.columns if c != job_frames.MTBI_COLUMN],
        column_config={job_frames.MTBI_COLUMN: st.column_config.TextColumn(
            words(job_frames.MTBI_COLUMN),
            help="Hours between interruptions of one spot VM, before the scale: any number "
                 "> 0 (1e-9 and 0.005 are read as typed).")})
    for why in keys.PLAN_MTBI_REFUSED.get():
        st.markdown(words(f":red[{why}; the value in use is kept.]"))
    overrides, refused = job_frames.mtbi_overrides(catalog, edited, keys.PLAN_MTBI.get())
    if refused:
        keys.PLAN_MTBI_REFUSED.set(refused)
        keys.PLAN_MTBI_VERSION.set(keys.PLAN_MTBI_VERSION.get() + 1)  # show the value in use
    elif overrides != keys.PLAN_MTBI.get():
        keys.PLAN_MTBI_REFUSED.set([])
    if refused or overrides != keys.PLAN_MTBI.get():
        keys.PLAN_MTBI.set(overrides)
        st.rerun()

