"""A test oracle for deadline policies with on-demand placements (issue 26): one run walked tick
boundary by tick boundary in a plain loop, with the policy's definition written out here, not
taken from ``deepvm_core.job.recovery``. It shares no code with the core.

Rules (the core's module docstrings, ``traces.md``): at a boundary an attempt that ended exactly
there is already done; the policy decides (a pool that is up, ``"od"`` or ``None``); if the
current pool is down with an attempt in progress and the decision is not on demand, that is an
interruption; any change of placement abandons the attempt (restart next time); a new attempt
pays R after an interruption, an abandoned attempt, a move, and always when going on demand
(never before the first attempt on spot). Spot hours at the pool's price, on-demand hours at the
home cluster's fallback price, waiting at its on-demand part; the home cluster is the last pool
run in (the first before any). Times are compared exactly with fractions.

Policies: ``deadline`` (greedy: on demand for good once D - t < rem + R + g, else failover) and
``uniform-progress`` (the greedy rule first; then failover's pool when one is up; else on demand
while the work done is below job * t / D; else nothing).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction as F

from tests.traces_oracle import NeverEnds, PoolJob


@dataclass
class PolicyRun:
    makespan: float
    cost: float
    spot: float
    wait: float
    on_demand: float
    interruptions: int
    fell_back: bool


def policy_run(up: list[list[bool]], gap_hours: float, full_segments: int, jobs: list[PoolJob],
               policy: str, deadline: float, start: int) -> PolicyRun:
    size = len(up[0])
    g = F(gap_hours)
    d = F(deadline)
    K = full_segments

    def seglen(p: int, i: int) -> F:
        return F(jobs[p].full_segment_hours if i < K else jobs[p].last_segment_hours)

    def remaining(p: int, i: int) -> F:
        return sum((seglen(p, j) for j in range(i, K + 1)), F(0))

    seg = 0
    place: int | str | None = None
    last: int | str | None = None
    home = 0
    in_att = False
    att_start = att_len = F(0)
    restart = False
    spot = wait = od_hours = cost = F(0)
    inter = 0
    used_od = False
    k = 0
    while True:
        b = k * g
        tick = (start + k) % size
        rem = remaining(home, seg)
        done = remaining(home, 0) - rem
        r_home = F(jobs[home].restart_hours)
        stay = place if isinstance(place, int) and up[place][tick] else None
        first = next((p for p in range(len(up)) if up[p][tick]), None)
        spot_choice = stay if stay is not None else first
        is_late = d - b < rem + r_home + g
        if policy == "deadline":
            action = "od" if (place == "od" or is_late) else spot_choice
        else:
            if is_late:
                action = "od"
            elif spot_choice is not None:
                action = spot_choice
            elif done < remaining(home, 0) * b / d:
                action = "od"
            else:
                action = None
        if (in_att and isinstance(place, int) and not up[place][tick] and action != "od"):
            inter += 1
            restart = True
        if action != place and in_att:
            in_att = False
            restart = True
        if action is not None and not in_att:
            if (action == "od" and last != "od") or (last is not None and action != last):
                restart = True
            last = action
            if isinstance(action, int):
                home = action
            in_att = True
            att_start = b
            att_len = (F(jobs[home].restart_hours) if restart else F(0)) + seglen(home, seg)
        place = action
        used_od = used_od or action == "od"
        end_of_tick = b + g
        finished: F | None = None
        if in_att:
            while att_start + att_len <= end_of_tick:
                end = att_start + att_len
                seg += 1
                restart = False
                if seg > K:
                    finished = end
                    break
                att_start, att_len = end, seglen(home, seg)
                if end == end_of_tick:
                    in_att = False
                    break
        span = (finished if finished is not None else end_of_tick) - b
        if isinstance(place, int):
            spot += span
            cost += F(jobs[place].price) * span
        elif place == "od":
            od_hours += span
            cost += F(jobs[home].fallback) * span
        else:
            wait += span
            cost += F(jobs[home].on_demand) * span
        if finished is not None:
            return PolicyRun(float(finished), float(cost), float(spot), float(wait),
                             float(od_hours), inter, used_od)
        k += 1
        if k > 200_000:
            raise NeverEnds("no end after 200,000 ticks")
