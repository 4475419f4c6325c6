"""The Plan a job page's URL parameters and their codec: the job's inputs (:data:`PLAN_PARAMS`)
and the user's MTBI per GPU type (:data:`MTBI_PARAM`). Pure (no Streamlit). Their defaults and
bounds are the core's (``Workload``, ``SpeedupModel``, ``plan_job``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dashboard.url_warnings import UrlWarning, echo, read_number, read_switch
from deepvm_core.catalog import Catalog
from deepvm_core.defaults import field_default
from deepvm_core.errors import WorkloadError
from deepvm_core.hardware.unused import described_type
from deepvm_core.job.montecarlo import DEFAULT_TRIALS
from deepvm_core.job.objectives import DEFAULT_GOAL
from deepvm_core.pipeline.plan import DEFAULT_SEED, GOALS
from deepvm_core.units import MINUTES_PER_HOUR
from deepvm_core.workload.speedup import SPEEDUP_MODELS, SpeedupModel
from deepvm_core.workload.transformer import (
    EXAMPLE_PARAMS_B,
    EXAMPLE_TOKENS_B,
    METHODS,
    SHARDINGS,
    TRANSFORMER_MAX,
    TransformerJob,
)
from deepvm_core.workload.workload import (
    AUTO,
    EXAMPLE_EPOCH_SECONDS,
    EXAMPLE_EPOCHS,
    TRANSFORMER_CHECKPOINT_EVERY,
    WORKLOAD_KINDS,
    Workload,
)


@dataclass(frozen=True)
class PlanParam:
    """One input of the Plan a job page: URL parameter, kind, default and bounds.

    ``kind`` is ``float``, ``int``, ``choice`` (``choices``), ``bool`` or ``text`` (a GPU type
    name, checked against the catalog by the page). The URL holds it on that page only, and
    only when it is not at its default; the session key is ``plan_<name>``.
    """

    name: str
    kind: str
    default: Any
    low: float = 0.0
    high: float = math.inf
    choices: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"plan_{self.name}"


#: ``wait_min`` when W is each GPU type's Spot Advisor bucket default (``Workload.wait_hours``
#: None): a number input needs a number.
BUCKET_WAIT_MIN = -1.0

_JOB_PARAMS = (
    PlanParam("epochs", "float", EXAMPLE_EPOCHS, 1e-6, 1e7),  # the bundled ResNet-50 job
    PlanParam("epoch_s", "float", EXAMPLE_EPOCH_SECONDS, 1e-6, 1e7),
    PlanParam("ref", "text", ""),  # "": Workload.reference_gpu None (one A10G, the yardstick)
    PlanParam("ref_nodes", "int", field_default(Workload, "reference_nodes"), 1, 100_000),
    PlanParam("speedup", "choice", field_default(SpeedupModel, "name"), choices=SPEEDUP_MODELS),
    PlanParam("ckpt_every", "int", field_default(Workload, "checkpoint_every_epochs"), 0,
              1_000_000),  # 0: auto (Daly)
    # R, W and δ0 have no upper bound here: the core's Workload bounds them and the page shows
    # its message naming the bound, with the value kept in the URL (issue 16).
    PlanParam("restart_min", "float", field_default(Workload, "restart_hours") * MINUTES_PER_HOUR,
              0.0),
    # W: the core's None (each type's bucket default) is BUCKET_WAIT_MIN here (issue 25)
    PlanParam("wait_min", "float", BUCKET_WAIT_MIN if field_default(Workload, "wait_hours") is None
              else field_default(Workload, "wait_hours") * MINUTES_PER_HOUR, BUCKET_WAIT_MIN),
    PlanParam("disk_gbps", "float", field_default(Workload, "disk_gb_per_second"), 1e-6,
              1_000.0),
    PlanParam("ckpt_fixed_s", "float", field_default(Workload, "checkpoint_fixed_seconds"), 0.0),
    PlanParam("mtbi_scale", "float", field_default(Workload, "mtbi_scale"), 0.25, 4.0),
    PlanParam("goal", "choice", DEFAULT_GOAL, choices=GOALS),
    PlanParam("deadline_h", "float", 0.0, 0.0, 1e6),  # 0: none (plan_job's None)
    PlanParam("budget_usd", "float", 0.0, 0.0, 1e9),  # 0: none (plan_job's None)
    PlanParam("trials", "int", DEFAULT_TRIALS, 0, 100_000),
    PlanParam("seed", "int", DEFAULT_SEED, 0, 2**31 - 1),
    PlanParam("pw_off", "bool", False),  # plan_job's pw_usd_per_hour=None
)
#: The job's kind and a transformer job's inputs (issue 24), named as the CLI's flags; their
#: defaults are the core's (:class:`TransformerJob`'s fields, its example's size, and
#: :data:`TRANSFORMER_CHECKPOINT_EVERY`). ``tf_epochs`` and ``tf_ckpt_every`` are a transformer
#: job's E and k (a cnn job keeps ``epochs`` and ``ckpt_every``: their defaults differ);
#: ``tokens_per_second`` 0 means none (the estimate), a measurement on ``ref_nodes`` VMs of
#: ``ref``.
TRANSFORMER_PARAMS = (
    PlanParam("params_b", "float", EXAMPLE_PARAMS_B, 1e-6, TRANSFORMER_MAX["params_b"]),
    PlanParam("tokens_b", "float", EXAMPLE_TOKENS_B, 1e-6, TRANSFORMER_MAX["tokens_b"]),
    PlanParam("tf_epochs", "float", field_default(TransformerJob, "epochs"), 1e-6,
              TRANSFORMER_MAX["epochs"]),
    PlanParam("method", "choice", field_default(TransformerJob, "method"), choices=METHODS),
    PlanParam("sharding", "choice", field_default(TransformerJob, "sharding"),
              choices=SHARDINGS),
    PlanParam("shard_across_vms", "bool", field_default(TransformerJob, "shard_across_vms")),
    PlanParam("seq_len", "int", field_default(TransformerJob, "seq_len"), 1,
              TRANSFORMER_MAX["seq_len"]),
    PlanParam("micro_batch", "int", field_default(TransformerJob, "micro_batch"), 1,
              TRANSFORMER_MAX["micro_batch"]),
    PlanParam("activation_checkpointing", "bool",
              field_default(TransformerJob, "activation_checkpointing")),
    PlanParam("tokens_per_second", "float", 0.0, 0.0, 1e12),  # 0: none (the estimate)
    PlanParam("tf_ckpt_every", "int",
              0 if TRANSFORMER_CHECKPOINT_EVERY == AUTO else TRANSFORMER_CHECKPOINT_EVERY, 0,
              1_000_000),  # 0: auto (Daly)
)
PLAN_PARAMS = (
    PlanParam("workload", "choice", WORKLOAD_KINDS[0], choices=WORKLOAD_KINDS),
    *_JOB_PARAMS, *TRANSFORMER_PARAMS)
PLAN_PARAM_BY_NAME = {p.name: p for p in PLAN_PARAMS}
#: The user's MTBI per GPU type (``name:hours,name:hours``, hours before the scale); like the
#: job's inputs, in the URL once a job is set and when not empty.
MTBI_PARAM = "mtbi"


def format_mtbi_hours(hours: float) -> str:
    """An MTBI as the table and the URL write it: the shortest text that reads back as the
    same float (``19``, ``1e-09``, ``0.35``)."""
    text = repr(float(hours))
    return text.removesuffix(".0") if "e" not in text else text


def mtbi_refusal(name: str, text: str) -> str | None:
    """Why ``text`` cannot be the MTBI of GPU type ``name`` (``None``: it can): not a number,
    or refused by the core's rule for ``Workload.mtbi_hours_by_gpu`` (its message)."""
    try:
        hours = float(str(text).strip())
    except ValueError:
        return f"MTBI of {name}: {echo(str(text))} is not a number of hours"
    try:
        Workload(epochs=1.0, reference_epoch_seconds=1.0, mtbi_hours_by_gpu={name: hours})
    except WorkloadError as exc:
        return f"MTBI of {name}: {str(text).strip()} h {exc.problems[0].message}"
    return None


def format_mtbi(overrides: Mapping[str, float]) -> str:
    """The ``mtbi`` parameter of ``overrides`` (GPU type -> hours), by name."""
    return ",".join(f"{name}:{format_mtbi_hours(h)}" for name, h in sorted(overrides.items()))


def parse_mtbi(text: str) -> tuple[dict[str, float], list[UrlWarning]]:
    """The MTBI overrides of an ``mtbi`` parameter, and a warning per entry refused."""
    values: dict[str, float] = {}
    warnings: list[UrlWarning] = []
    for entry in filter(None, (e.strip() for e in text.split(","))):
        name, sep, hours = entry.rpartition(":")
        why = (mtbi_refusal(name.strip(), hours) if sep and name.strip() else
               f"{echo(entry)} is not name:hours")
        if why is None:
            values[name.strip()] = float(hours)
        else:
            warnings.append(UrlWarning(MTBI_PARAM, f"URL parameter {MTBI_PARAM}: {why}; using "
                                                   "the default MTBI for it."))
    return values, warnings


def mtbi_in_catalog(overrides: Mapping[str, float], catalog: Catalog
                    ) -> tuple[dict[str, float], list[UrlWarning]]:
    """The MTBI overrides of a URL that name a GPU type of ``catalog`` (the link's), and a
    warning per other name, with the nearest names (:func:`described_type`): dropped, so the
    URL no longer carries it."""
    names = {g.name for g in catalog.gpu_types}
    kept = {name: hours for name, hours in overrides.items() if name in names}
    warnings = [UrlWarning(MTBI_PARAM, f"URL parameter {MTBI_PARAM}: "
                                       f"{described_type(name, catalog)} is not a GPU type of "
                                       f"catalog {catalog.name}; its MTBI is dropped.")
                for name in overrides if name not in names]
    return kept, warnings


def parse_plan_params(params: Mapping[str, str | list[str]]
                      ) -> tuple[dict[str, Any], list[UrlWarning]]:
    """The Plan page's inputs a URL asks for, and a warning per value that cannot be used."""
    values: dict[str, Any] = {}
    warnings: list[UrlWarning] = []
    for p in PLAN_PARAMS:
        if p.name not in params:
            continue
        raw = params[p.name]
        text = str((raw[-1] if raw else "") if isinstance(raw, list) else raw).strip()

        def reject(why: str, p: PlanParam = p, text: str = text) -> None:
            warnings.append(UrlWarning(
                p.name, f"URL parameter {p.name}={echo(text)} {why}; using the default "
                        f"{format_plan_param(p.name, p.default) or 'none'}."))

        if p.kind == "text":
            values[p.name] = text
        elif p.kind == "bool":
            switch = read_switch(text)
            if switch is None:
                reject("is not on or off")
            else:
                values[p.name] = switch
        elif p.kind == "choice":
            if text in p.choices:
                values[p.name] = text
            else:
                reject(f"is not one of {', '.join(p.choices)}")
        else:
            number, why = read_number(text, p.kind == "int", p.low, p.high)
            if number is None:
                reject(why)
            else:
                values[p.name] = number
    return values, warnings


def format_plan_param(name: str, value: Any) -> str:
    """How a Plan page input is written in the URL."""
    p = PLAN_PARAM_BY_NAME[name]
    if p.kind == "bool":
        return "on" if value else "off"
    if p.kind == "float":
        return f"{float(value):g}"
    return str(value)

