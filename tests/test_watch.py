"""``deepvm watch`` against a market that misbehaves (issue 28): moto behind the fleet front, whose
``SpotMarket`` reclaims the plan's spot workers and refuses spot capacity on a schedule replayed
from seeded synthetic traces, on a fake clock.

The controller's realised makespan and cost (its ledger) are compared with the backtest of the
same traces, job and policy from the same start (``deepvm_core.job.backtest_replay``, the
reference): they agree within one polling interval (here to 1e-9: the polls fall on the ticks).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_helpers import run_cli
from fleet_fakes import CPU_TEMPLATE, GPU_TEMPLATE, SECRETS, FleetEnv, SpotMarket
from synthetic_traces import alternating_runs

from deepvm_core.cli import main
from deepvm_core.cloud.fleet import AwsSettings, Ec2, RequestOptions, TemplateRef, read_export
from deepvm_core.cloud.fleet.ledger_file import ledger_path, read_ledger
from deepvm_core.cloud.fleet.ledger_report import summarize
from deepvm_core.cloud.fleet.target import plan_from_export
from deepvm_core.cloud.fleet.watch import WatchSettings, open_controller
from deepvm_core.cloud.fleet.watch_lock import acquire_lock, lock_path, release_lock
from deepvm_core.cloud.fleet.watch_setup import watch_setup
from deepvm_core.errors import DeepVMError
from deepvm_core.job.backtest import BacktestJob
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.market.trace import SpotTrace

T0 = 1_800_000_000.0
INTERVAL_S = 600.0  # the polls and the traces' ticks
ZONES = ("us-east-1a", "us-east-1b")
MUTATING = ("CreateFleet", "TerminateInstances", "DeleteFleets", "RunInstances",
            "StopInstances", "RequestSpotInstances", "CreateTags")


class FakeClock:
    """Seconds since the epoch that move only when the controller sleeps."""

    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += max(seconds, 0.0)


@pytest.fixture(scope="module")
def plan_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A plan of 1 x g5.xlarge spot + 1 x t3.xlarge (deepvm plan), its job set to 5 segments
    of 0.5 h and a last one of 0.25 h (2.75 h), R = 0.1 h, evaluated on pools us-east-1a and
    us-east-1b (failover order)."""
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["plan", "--catalog", "aws-us-east-1-2023-10", "--pw", "3", "--epochs",
                     "60", "--epoch-seconds", "60", "--ref-type", "g4dn.xlarge", "--format",
                     "json"]) == 0
    doc = json.loads(buffer.getvalue())
    assert doc["chosen"]["summary"].startswith("TR: 1 x g5.xlarge spot + 1 x t3.xlarge")
    est = doc["chosen"]["estimate"]
    est.update({"compute_hours": 2.75, "checkpoints": 5, "checkpoint_interval_seconds": 1800.0,
                "checkpoint_stall_seconds": 0.0,
                "pools": [f"g5.xlarge@{z}" for z in ZONES]})
    doc["assumptions"]["restart_hours"] = 0.1
    path = tmp_path_factory.mktemp("plans") / "plan.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path


def traces(seed: int, ticks: int = 90) -> dict[str, list[int]]:
    """Seeded up/down runs per zone (mean up 6 ticks, down 3), both up at tick 0."""
    a = alternating_runs(seed, ticks, 6.0, 3.0)
    b = alternating_runs(seed + 1000, ticks, 6.0, 3.0)
    return {ZONES[0]: a, ZONES[1]: b}


def launch(env: FleetEnv, plan: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``deepvm launch`` into us-east-1a (the first pool, up at tick 0)."""
    subnet_a = next(s for s, z in env.subnets.items() if z == ZONES[0])
    code, _, err = run_cli(capsys, "launch", str(plan), "--gpu-template", GPU_TEMPLATE,
                           "--cpu-template", CPU_TEMPLATE, "--subnet", subnet_a, "--region",
                           "us-east-1", "--yes", secrets=SECRETS)
    assert code == 0, err


def controller(env: FleetEnv, plan: Path, clock: FakeClock, policy: str,
               deadline: float | None, max_steps: int | None = 400) -> Any:
    doc, data = read_export(plan)
    fleet = plan_from_export(doc, data)
    ec2 = Ec2.open(AwsSettings(region="us-east-1"))
    options = RequestOptions(gpu_template=TemplateRef(GPU_TEMPLATE),
                             cpu_template=TemplateRef(CPU_TEMPLATE),
                             subnets=tuple(env.subnets))

    def make_setup(started_at: float) -> Any:
        return watch_setup(doc, str(plan), fleet, region="us-east-1", policy=policy,
                           deadline_hours=deadline, interval_seconds=INTERVAL_S,
                           started_at=started_at, zones=ZONES)

    settings = WatchSettings(yes=True, max_steps=max_steps, clock=clock, sleep=clock.sleep)
    return open_controller(ec2, fleet, make_setup, options, settings)


def reference(setup: Any, up: dict[str, list[int]], policy: str,
              deadline: float | None) -> tuple[float, float, bool]:
    """The backtest of the same job on the same traces from tick 0: makespan, cost, fell
    back."""
    width = len(setup.pools)
    job = BacktestJob(
        full_segments=np.array([setup.full_segments]),
        full_segment_hours=np.full((1, width), setup.segment_hours),
        last_segment_hours=np.full((1, width), setup.last_segment_hours),
        restart_hours=np.full((1, width), setup.restart_hours),
        spot_vms=np.full((1, width), 1, dtype=np.int64),
        price_usd_per_hour=np.array([setup.spot_usd_per_hour]),
        on_demand_usd_per_hour=np.full((1, width), setup.on_demand_part_usd_per_hour),
        fallback_usd_per_hour=np.full((1, width), setup.fallback_usd_per_hour))
    pools = [SpotTrace(z, INTERVAL_S, np.asarray(up[z], dtype=np.int64)) for z in setup.pools]
    used = 1 if policy == "wait" else width
    runs = backtest(pools[:used], job.first_pools(used), policy=policy,  # type: ignore[arg-type]
                    deadline_hours=deadline, starts=1)
    return (float(runs.makespan_hours[0, 0]), float(runs.cost_usd[0, 0]),
            bool(runs.fell_back[0, 0]))


def start_market(env: FleetEnv, clock: FakeClock, up: dict[str, list[int]]) -> SpotMarket:
    env.monkeypatch.setenv("DEEPVM_HOME", str(env.tmp_path / "home"))
    market = SpotMarket(up, INTERVAL_S, clock, T0, dict(env.subnets))
    env.front.spot_market(market)
    return market


def launched_on(env: FleetEnv, plan_file: Path, capsys: pytest.CaptureFixture[str],
                up: dict[str, list[int]]) -> tuple[FakeClock, SpotMarket]:
    """The plan launched (``deepvm launch``) on a market replaying ``up`` from T0: the clock
    and the market."""
    clock = FakeClock(T0)
    market = start_market(env, clock, up)
    launch(env, plan_file, capsys)
    return clock, market


CASES = [("wait", None, 3), ("failover", None, 3), ("failover", None, 11),
         ("deadline", 4.0, 3), ("uniform-progress", 4.5, 5), ("uniform-progress", 3.6, 11),
         ("slack-reserve", 4.5, 7)]


@pytest.mark.parametrize(("policy", "deadline", "seed"), CASES)
def test_controller_equals_the_backtest(fleet_env: FleetEnv, plan_file: Path,
                                        capsys: pytest.CaptureFixture[str], policy: str,
                                        deadline: float | None, seed: int) -> None:
    up = traces(seed)
    clock, market = launched_on(fleet_env, plan_file, capsys, up)
    ctl = controller(fleet_env, plan_file, clock, policy, deadline)
    reports = ctl.run()
    assert reports[-1].done
    s = summarize(read_ledger(ledger_path(ctl.plan.plan_id)))
    makespan, cost, fell = reference(ctl.setup, up, policy, deadline)
    g = INTERVAL_S / 3600
    assert s.makespan_hours is not None
    assert abs(s.makespan_hours - makespan) <= g
    # a polling interval of the dearest placement
    assert abs(s.cost_usd - cost) <= g * ctl.setup.fallback_usd_per_hour
    assert s.makespan_hours == pytest.approx(makespan, abs=1e-9)  # polls on the ticks
    assert s.cost_usd == pytest.approx(cost, abs=1e-9)
    assert s.fell_back == fell
    if deadline is not None and makespan <= deadline + 1e-9:
        assert s.makespan_hours <= deadline + 1e-9
    # never more workers than the plan's, and every spot refusal was a zone that was down
    assert len([i for i in fleet_env.live(ctl.plan.plan_id)
                if i.get("InstanceLifecycle") == "spot"]) <= 1
    assert market.refused == sum(1 for a in read_ledger(ledger_path(ctl.plan.plan_id)).records
                                 if getattr(a, "outcome", "") == "refused")
    # the ledger's counterfactual of the policy that ran is what happened
    ran = next(c for c in s.counterfactuals if c.name == policy)
    if ran.makespan_hours is not None:
        assert ran.makespan_hours == pytest.approx(s.makespan_hours, abs=1e-9)


def test_counterfactuals_equal_a_backtest_of_the_observed_availability(
        fleet_env: FleetEnv, plan_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    up = traces(3)
    clock, _ = launched_on(fleet_env, plan_file, capsys, up)
    ctl = controller(fleet_env, plan_file, clock, "failover", 4.0)
    ctl.run()
    ledger = read_ledger(ledger_path(ctl.plan.plan_id))
    # the observed availability, by a plain loop over the records: up where the workers ran
    # or a launch succeeded, down where they were reclaimed or a launch was refused, else
    # the last known state (never seen: down)
    steps = max(round((r.time - T0) / INTERVAL_S) for r in ledger.records
                if type(r).__name__ == "Observation") + 1
    seen: list[list[int | None]] = [[None] * steps for _ in ZONES]
    for r in ledger.records:
        k = round((r.time - T0) / INTERVAL_S)
        if type(r).__name__ == "Observation":
            for p, u in enumerate(r.pools_up):
                if u is not None:
                    seen[p][k] = int(u)
    observed: dict[str, list[int]] = {}
    for p, zone in enumerate(ZONES):
        last, row = 0, []
        for value in seen[p]:
            last = last if value is None else value
            row.append(last)
        observed[zone] = row
    s = summarize(ledger)
    window = steps * INTERVAL_S / 3600
    for c in s.counterfactuals[1:]:
        if c.name in ("wait", "failover", "deadline", "uniform-progress", "slack-reserve"):
            try:
                makespan, cost, _ = reference(ledger.setup, observed, c.name, 4.0)
            except DeepVMError:
                assert c.makespan_hours is None
                continue
            if makespan > window + 1e-9:
                assert c.makespan_hours is None
            else:
                assert c.makespan_hours == pytest.approx(makespan, abs=1e-9)
                assert c.cost_usd == pytest.approx(cost, abs=1e-9)
    od = s.counterfactuals[0]
    assert od.cost_usd == pytest.approx(2.75 * ledger.setup.fallback_usd_per_hour)


def test_killed_and_restarted_resumes_without_a_duplicate_launch(
        fleet_env: FleetEnv, plan_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    up = traces(11)
    clock, _ = launched_on(fleet_env, plan_file, capsys, up)
    first = controller(fleet_env, plan_file, clock, "failover", None, max_steps=6)
    first.run()  # "killed" after 6 steps
    launches_before = fleet_env.front.count("CreateFleet")
    clock.sleep(INTERVAL_S / 2)  # the restart comes half an interval later
    second = controller(fleet_env, plan_file, clock, "failover", None)
    assert second.tracker.stepper.placement == first.tracker.stepper.placement
    second.run()
    ledger = read_ledger(ledger_path(second.plan.plan_id))
    outcomes = Counter(getattr(r, "outcome", "") for r in ledger.records)
    # every CreateFleet after the first two (deepvm launch) is a launch or refusal the
    # ledger records: nothing launched twice
    assert fleet_env.front.count("CreateFleet") == 2 + outcomes["launched"] + \
        outcomes["refused"]
    assert fleet_env.front.count("CreateFleet") >= launches_before
    s = summarize(ledger)
    makespan, cost, _ = reference(second.setup, up, "failover", None)
    assert s.makespan_hours == pytest.approx(makespan, abs=1e-9)
    assert s.cost_usd == pytest.approx(cost, abs=1e-9)


def test_watch_without_yes_changes_nothing(fleet_env: FleetEnv, plan_file: Path,
                                           capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    up = {ZONES[0]: [1, 0, 0], ZONES[1]: [1, 1, 1]}
    clock, _ = launched_on(fleet_env, plan_file, capsys, up)
    clock.sleep(INTERVAL_S)  # us-east-1a is down now: its worker is reclaimed
    before = len(fleet_env.front.calls)
    monkeypatch.setenv("DEEPVM_HOME", str(fleet_env.tmp_path / "home"))
    code, out, err = run_cli(capsys, "watch", str(plan_file), "--region", "us-east-1",
                             "--gpu-template", GPU_TEMPLATE, "--cpu-template", CPU_TEMPLATE,
                             secrets=SECRETS)
    assert code == 0, err
    assert "would launch 1 x g5.xlarge spot in us-east-1b" in out
    assert "Nothing was changed; add --yes" in out
    after = fleet_env.front.calls[before:]
    assert [c.action for c in after if c.action in MUTATING and not c.dry_run] == []
    assert {c.action for c in after} <= {"DescribeInstances"}
    assert not (fleet_env.tmp_path / "home" / "ledgers").exists()


def test_a_second_watch_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPVM_HOME", str(tmp_path))
    lock = acquire_lock("0123456789ab")
    assert lock.read_text().strip() == str(os.getpid())
    with pytest.raises(DeepVMError, match=f"already watched by process {os.getpid()}"):
        acquire_lock("0123456789ab")
    release_lock(lock)
    assert not lock.exists()
    lock_path("0123456789ab").write_text("999999999\n")  # a holder that died: taken over
    assert acquire_lock("0123456789ab").read_text().strip() == str(os.getpid())


def test_killed_between_a_launch_and_its_record_adopts_the_workers(
        fleet_env: FleetEnv, plan_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A controller killed after CreateFleet but before writing the action: the restarted one
    finds the workers running in a pool its ledger does not know, adopts them (an ``adopted``
    record) and launches nothing more there."""
    up = {ZONES[0]: [1, 0, 0, 0, 0, 0] * 20, ZONES[1]: [1] * 120}
    clock, _ = launched_on(fleet_env, plan_file, capsys, up)
    first = controller(fleet_env, plan_file, clock, "failover", None, max_steps=2)
    first.run()  # step 0 keeps us-east-1a, step 1 (a reclaimed) launches in us-east-1b
    path = ledger_path(first.plan.plan_id)
    lines = path.read_text().splitlines()
    launched = [i for i, line in enumerate(lines) if '"outcome":"launched"' in line]
    assert len(launched) == 1
    path.write_text("\n".join(lines[:launched[0]]) + "\n")  # the crash: no record after it
    creates = fleet_env.front.count("CreateFleet")
    clock.sleep(INTERVAL_S)
    second = controller(fleet_env, plan_file, clock, "failover", None, max_steps=2)
    second.run()
    assert fleet_env.front.count("CreateFleet") == creates  # nothing launched again
    records = read_ledger(path).records
    # us-east-1a: the workers deepvm launch started, at step 0; us-east-1b: after the crash
    assert [r.zone for r in records if getattr(r, "outcome", "") == "adopted"] == list(ZONES)
    spot = [i for i in fleet_env.live(first.plan.plan_id)
            if i.get("InstanceLifecycle") == "spot"]
    assert [i["Placement"]["AvailabilityZone"] for i in spot] == [ZONES[1]]


def test_progress_file_moves_the_job_model() -> None:
    """The ledger_samples job (2 x 1 h + 0.5 h): 1.2 h of work reported is segment 1 (one
    checkpointed segment); 2.5 h is the end."""
    from ledger_samples import SETUP

    from deepvm_core.cloud.fleet.watch_state import JobTracker

    tracker = JobTracker(SETUP)
    tracker.set_progress(1.0, 1.2)
    assert tracker.stepper.segment == 1
    assert tracker.stepper.work_done_hours == pytest.approx(1.0)
    tracker.set_progress(3.0, 2.5)
    assert tracker.stepper.done_at == 3.0


def test_cli_watch_needs_a_deadline_for_deadline_policies(
        plan_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "watch", str(plan_file), "--region", "us-east-1",
                           "--gpu-template", GPU_TEMPLATE, "--policy", "slack-reserve")
    assert code == 2
    assert "--policy slack-reserve needs --deadline-hours H" in err
    assert "Traceback" not in err


def test_cli_a_second_watch_of_the_plan_refuses(fleet_env: FleetEnv, plan_file: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    fleet_env.monkeypatch.setenv("DEEPVM_HOME", str(fleet_env.tmp_path / "home"))
    doc, data = read_export(plan_file)
    pid = plan_from_export(doc, data).plan_id
    held = acquire_lock(pid)  # the first watch (this process, alive)
    try:
        code, _, err = run_cli(capsys, "watch", str(plan_file), "--region", "us-east-1",
                               "--gpu-template", GPU_TEMPLATE, "--cpu-template", CPU_TEMPLATE,
                               "--yes", secrets=SECRETS)
    finally:
        release_lock(held)
    assert code == 2
    assert f"plan {pid} is already watched by process {os.getpid()}" in err
    assert fleet_env.front.count("CreateFleet") == 0
    assert not ledger_path(pid).exists()


def on_the_fake_clock(monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> None:
    """The CLI's controller runs on ``clock`` (it sleeps by moving it on)."""
    import functools

    from deepvm_core.cli import watch as cli_watch

    monkeypatch.setattr(cli_watch, "WatchSettings", functools.partial(
        WatchSettings, clock=clock, sleep=clock.sleep))


def watch_cli(capsys: pytest.CaptureFixture[str], env: FleetEnv, plan: Path,
              *extra: str) -> tuple[int, str, str]:
    """``deepvm watch PLAN --region us-east-1 ... --yes`` into the three subnets."""
    subnets = [f"--subnet={s}" for s in env.subnets]
    return run_cli(capsys, "watch", str(plan), "--region", "us-east-1", "--gpu-template",
                   GPU_TEMPLATE, "--cpu-template", CPU_TEMPLATE, *subnets, "--interval",
                   f"{INTERVAL_S:g}", "--policy", "failover", *extra, "--yes", secrets=SECRETS)


def test_cli_watch_yes_relaunches_after_a_reclaim_and_writes_the_ledger(
        fleet_env: FleetEnv, plan_file: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``deepvm watch PLAN --yes``, the loop to the job's end: us-east-1a (where deepvm launch
    put the worker) is reclaimed at step 2 and stays down, us-east-1b is always up. By hand
    (failover, segments 5 x 0.5 h + 0.25 h, R = 0.1 h, steps of 1/6 h): the worker runs in
    us-east-1a from 0 to 1/3 h, the attempt is lost, the job starts again in us-east-1b at 1/3 h
    with a restart: the end at 1/3 + 0.1 + 2.75 = 3.1833 h; the cluster billed at us-east-1a's
    spot price to 1/3 h, then at us-east-1b's."""
    clock, _ = launched_on(fleet_env, plan_file, capsys,
                           {ZONES[0]: [1, 1] + [0] * 118, ZONES[1]: [1] * 120})
    on_the_fake_clock(monkeypatch, clock)
    code, out, err = watch_cli(capsys, fleet_env, plan_file)
    assert code == 0, err
    doc, data = read_export(plan_file)
    pid = plan_from_export(doc, data).plan_id
    makespan = 1 / 3 + 0.1 + 2.75
    assert f"Plan {pid}: the job is done (estimate) at {makespan:.2f} h" in out
    assert f"deepvm teardown --plan {pid} --region us-east-1 --yes" in out
    assert "launch 1 x g5.xlarge spot in us-east-1b" in err
    assert "Traceback" not in err
    ledger = read_ledger(ledger_path(pid))
    acts = [r for r in ledger.records if type(r).__name__ == "Action"]
    launched = [a for a in acts if a.outcome == "launched"]
    assert [(a.zone, a.market, a.count) for a in launched] == [(ZONES[1], "spot", 1)]
    assert round((launched[0].time - T0) / INTERVAL_S) == 2  # the step of the reclaim
    assert [a.zone for a in acts if a.outcome == "adopted"] == [ZONES[0]]
    assert ledger.done is not None
    assert ledger.done.source == "estimate"
    # deepvm launch's two CreateFleet (workers, on-demand part) and the relaunch
    assert fleet_env.front.count("CreateFleet") == 3
    spot = [i for i in fleet_env.live(pid) if i.get("InstanceLifecycle") == "spot"]
    assert [i["Placement"]["AvailabilityZone"] for i in spot] == [ZONES[1]]
    s = summarize(ledger)
    assert s.makespan_hours == pytest.approx(makespan, abs=1e-9)
    assert (s.reclaims, s.interruptions) == (1, 1)
    prices = ledger.setup.spot_usd_per_hour
    assert s.cost_usd == pytest.approx(prices[0] / 3 + prices[1] * (makespan - 1 / 3),
                                       abs=1e-9)
    assert not lock_path(pid).exists()  # released


def test_cli_watch_yes_reads_progress_from_s3(fleet_env: FleetEnv, plan_file: Path,
                                              capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """``--progress s3://BUCKET/KEY`` (moto): the object is not there at first (said, and the
    estimate used); the job writes ``3000/3000`` before step 3 (0.5 h): the controller stops
    there, on the file's word."""
    import boto3

    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", fleet_env.moto_url)
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="job-progress")
    url = "s3://job-progress/run-1/progress.txt"

    class JobWrites(FakeClock):
        """The job checkpoints its end before step 3."""

        def sleep(self, seconds: float) -> None:
            super().sleep(seconds)
            if self.now >= T0 + 3 * INTERVAL_S - 1:
                s3.put_object(Bucket="job-progress", Key="run-1/progress.txt",
                              Body=b"3000/3000\n")

    clock = JobWrites(T0)
    start_market(fleet_env, clock, {ZONES[0]: [1] * 120, ZONES[1]: [1] * 120})
    launch(fleet_env, plan_file, capsys)
    on_the_fake_clock(monkeypatch, clock)
    code, out, err = watch_cli(capsys, fleet_env, plan_file, "--progress", url)
    assert code == 0, err
    assert (f"deepvm watch: --progress {url}: GetObject (bucket 'job-progress', key "
            "'run-1/progress.txt'): no such object (not written yet) (NoSuchKey") in err
    assert "the work done is estimated from the time the workers ran" in err
    assert err.count("no such object") == 1  # said once, not at every step
    assert f"--progress {url}: read (the work done is the job's word from now on)" in err
    assert "the job is done (file) at 0.50 h" in out
    doc, data = read_export(plan_file)
    ledger = read_ledger(ledger_path(plan_from_export(doc, data).plan_id))
    assert ledger.done is not None
    assert ledger.done.source == "file"
    assert ledger.hours(ledger.done.time) == pytest.approx(0.5)
    assert [o.progress_hours for o in ledger.records
            if type(o).__name__ == "Observation"][-1] == pytest.approx(2.75)
