"""A ledger written by hand (tests of the ledger, ``deepvm ledger``, the Running jobs page).

The job: 2 full segments of 1 h and a last one of 0.5 h (2.5 h), R = 0.25 h, polled every
0.5 h; pools us-east-1a (cluster 1.0 USD/h on spot) and us-east-1b (1.2 USD/h), the memory node
0.2 USD/h, the cluster on demand 3.2 USD/h; policy failover, deadline 4 h.

What happened (steps of 0.5 h): at 0 h the worker is launched in us-east-1a; at 1.5 h it is
reclaimed and the controller launches in us-east-1b; the job ends at 3.25 h. By hand:

* the job model: segment 0 runs 0-1 h, segment 1 1-1.5 h in a and is lost (1 interruption);
  in b R + 1 h from 1.5 h ends at 2.75 h, the last segment at 3.25 h;
* cost: 1.0 USD/h x 1.5 h + 1.2 USD/h x 1.75 h = 1.5 + 2.1 = 3.6 USD; spot hours 3.25;
* observed availability (steps 0..7): a up, up, up, down, then unknown (down carried);
  b never seen before step 3 (down), then up: ``[1,1,1,0,0,0,0,0]`` and ``[0,0,0,1,1,1,1,1]``;
* on demand: 2.5 h x 3.2 = 8.0 USD;
* ``wait`` (a only): up again only at step 8 (the trace repeats), after the 4 h observed: not
  finished;
* ``deadline`` (D 4 h): as failover until 2.0 h, where ``D - t = 2.0 < rem + R + g = 1.5 +
  0.25 + 0.5``: on demand, R + rem = 1.75 h, ends at 3.75 h; cost 1.5 + 1.2 x 0.5 + 3.2 x 1.75
  = 7.7 USD.
"""

from __future__ import annotations

from pathlib import Path

from deepvm_core.cloud.fleet import ledger as lg
from deepvm_core.cloud.fleet.ledger_file import append_record

PLAN_ID = "0123456789ab"
T0 = 1_700_000_000.0
H = 3600.0

SETUP = lg.WatchSetup(
    plan_id=PLAN_ID, region="us-east-1", plan_file="plan.json", policy="failover",
    deadline_hours=4.0, interval_seconds=1800.0, started_at=T0, instance_type="g5.xlarge",
    spot_vms=1, pools=("us-east-1a", "us-east-1b"), full_segments=2, segment_hours=1.0,
    last_segment_hours=0.5, restart_hours=0.25, spot_usd_per_hour=(1.0, 1.2),
    on_demand_part_usd_per_hour=0.2, fallback_usd_per_hour=3.2,
    on_demand_part=("memory-node", "t3.xlarge", 1), plan_makespan_p10_hours=2.6,
    plan_makespan_p90_hours=4.1, plan_cost_p10_usd=2.8, plan_cost_p90_usd=4.4,
    summary="TR: 1 x g5.xlarge spot + 1 x t3.xlarge")

MEM = lg.Seen("i-mem", "memory-node", "t3.xlarge", "us-east-1a", "on-demand", "running", 0.2)
A = lg.Seen("i-a", "spot-worker", "g5.xlarge", "us-east-1a", "spot", "running", 0.8)
A_GONE = lg.Seen("i-a", "spot-worker", "g5.xlarge", "us-east-1a", "spot", "terminated", 0.8,
                 lg.SPOT_RECLAIM_REASON)
B = lg.Seen("i-b", "spot-worker", "g5.xlarge", "us-east-1b", "spot", "running", 1.0)


def records() -> list:
    def at(hours: float) -> float:
        return T0 + hours * H

    out: list = [SETUP,
                 lg.Observation(at(0), (MEM,), (None, None)),
                 lg.Action(at(0), 0, "launched", "us-east-1a", "g5.xlarge", "spot", 1, 0.8,
                           ("i-a",)),
                 lg.Observation(at(0), (MEM, A), (True, None))]
    for h in (0.5, 1.0):
        out += [lg.Observation(at(h), (MEM, A), (True, None)), lg.Action(at(h), 0, "kept")]
    out += [lg.Observation(at(1.5), (MEM, A_GONE), (False, None)),
            lg.Action(at(1.5), 1, "launched", "us-east-1b", "g5.xlarge", "spot", 1, 1.0, ("i-b",)),
            lg.Observation(at(1.5), (MEM, A_GONE, B), (False, True))]
    for h in (2.0, 2.5, 3.0):
        out += [lg.Observation(at(h), (MEM, A_GONE, B), (None, True)), lg.Action(at(h), 1, "kept")]
    out += [lg.Observation(at(3.5), (MEM, A_GONE, B), (None, True)), lg.Done(at(3.25), "estimate")]
    return out


def write_sample(folder: Path) -> Path:
    """The sample ledger at ``folder/ledgers/PLAN_ID.jsonl``."""
    path = folder / "ledgers" / f"{PLAN_ID}.jsonl"
    for r in records():
        append_record(path, r)
    return path
