"""The CLI's defaults are the core's: each option left out gives the value of the dataclass field
or the named constant it stands for. A default typed again in the CLI, and then changed in only
one place, fails here."""

from __future__ import annotations

import inspect

from deepvm_core.cli import build_parser
from deepvm_core.cli.common import scenario_from_args
from deepvm_core.cli.plan_args import workload_from_args
from deepvm_core.model import DEFAULT_MAX_NODES, DEFAULT_OBJECTIVE, Scenario
from deepvm_core.pipeline.plan import plan_job
from deepvm_core.recommend.recommendation import recommend
from deepvm_core.recommend.sweep import FIG3_PW_GRID
from deepvm_core.search.solvers import ILP_TIME_LIMIT_S
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import Workload

CATALOG = "paper-simulated"


def _parse(*argv: str):  # type: ignore[no-untyped-def]
    return build_parser().parse_args(list(argv))


def test_plan_without_options_is_the_workload_and_scenario_defaults() -> None:
    args = _parse("plan", "--catalog", CATALOG, "--pw", "3", "--epochs", "30",
                  "--epoch-seconds", "61.16")
    assert workload_from_args(args, {}) == Workload(epochs=30.0, reference_epoch_seconds=61.16)
    assert scenario_from_args(args, args.pw) == Scenario(3.0)
    assert args.speedup == SpeedupModel().name
    signature = inspect.signature(plan_job).parameters
    for option, parameter in (("goal", "goal"), ("trials", "trials"), ("seed", "seed"),
                              ("top", "top_k"), ("deadline_hours", "deadline_hours"),
                              ("budget_usd", "budget_usd")):
        assert getattr(args, option) == signature[parameter].default, option


def test_plan_minutes_become_the_workload_hours() -> None:
    # 6 min / 60 = 0.1 h and 3 min / 60 = 0.05 h
    args = _parse("plan", "--catalog", CATALOG, "--pw", "none", "--epochs", "1",
                  "--epoch-seconds", "1", "--restart-min", "6", "--wait-min", "3",
                  "--ckpt-auto")
    workload = workload_from_args(args, {})
    assert (workload.restart_hours, workload.wait_hours) == (0.1, 0.05)
    assert workload.checkpoint_every_epochs == "auto"
    assert args.pw is None


def test_recommend_without_options_is_the_scenario_and_recommend_defaults() -> None:
    args = _parse("recommend", "--catalog", CATALOG, "--pw", "3")
    # recommend's objective is the tools' default (speed, issue 18); the rest the Scenario's
    assert scenario_from_args(args, args.pw) == Scenario(3.0, objective=DEFAULT_OBJECTIVE)
    assert args.max_nodes == DEFAULT_MAX_NODES
    assert args.top == inspect.signature(recommend).parameters["top_k"].default
    assert args.time_limit == ILP_TIME_LIMIT_S
    assert args.solver == inspect.signature(recommend).parameters["solver"].default


def test_sweep_and_fetch_defaults() -> None:
    args = _parse("sweep", "--catalog", CATALOG)
    assert (args.pw_start, args.pw_stop, args.pw_step) == FIG3_PW_GRID == (0.0, 10.0, 0.1)
    assert scenario_from_args(args, 0.0) == Scenario(0.0)
    fetch = _parse("fetch", "--region", "us-east-1")
    default = Scenario(0.0)
    assert (fetch.ckpt_gb, fetch.buffer) == (default.checkpoint_gb, default.buffer_checkpoints)


def test_catalog_default_is_the_core_default_catalog(capsys) -> None:  # type: ignore[no-untyped-def]
    from dashboard import url
    from deepvm_core.catalog.store import DEFAULT_CATALOG
    from deepvm_core.cli import main

    assert _parse("sweep").catalog == _parse("plan", "--pw", "3", "--epochs", "1",
                                             "--epoch-seconds", "1").catalog == DEFAULT_CATALOG
    assert _parse("recommend", "--pw", "3").catalog is None  # --replay may come instead
    assert url.DEFAULTS["catalog"] == DEFAULT_CATALOG
    assert main(["recommend", "--pw", "3"]) == 0
    assert capsys.readouterr().out.startswith(f"Catalog {DEFAULT_CATALOG} (us-east-1, ")
