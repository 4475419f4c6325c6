"""Recovery policies as step functions (``deepvm_core.job.recovery``, issue 26 item 1): each
decision worked by hand on small states; an action changes at most once while only the time moves
on; and the property the backtest's fast path relies on: a decision's hint (``until_hours``,
``watch``) is honest, the action stays the same at every later boundary before ``until_hours``
whatever the pools it does not watch do."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deepvm_core.job.recovery import (
    NOTHING,
    ON_DEMAND,
    POLICIES,
    RecoveryState,
    late,
)


def state(t: float, done: float, rem: float, up: list[bool], place: int = NOTHING,
          deadline: float = 10.0, restart: float = 0.25, g: float = 0.5,
          attempt: float = 0.0, seg: float = 1.0, pending: bool = False) -> RecoveryState:
    """One run (arrays of length 1), as a live controller would pass it."""
    return RecoveryState(
        elapsed_hours=np.array([t]), work_done_hours=np.array([done]),
        remaining_hours=np.array([rem]), segment_hours=np.array([seg]),
        attempt_hours=np.array([attempt]),
        restart_pending=np.array([pending]), placement=np.array([place]),
        pools_up=np.array([up]), deadline_hours=np.array([deadline]),
        restart_hours=np.array([restart]), tick_hours=g)


def act(policy: str, s: RecoveryState) -> int:
    return int(POLICIES[policy](s).action[0])  # type: ignore[index]


def test_wait_uses_the_first_pool_only():
    assert act("wait", state(0, 0, 4, [True, True])) == 0
    assert act("wait", state(0, 0, 4, [False, True])) == NOTHING


def test_failover_stays_while_up_else_first_up():
    assert act("failover", state(1, 0, 4, [True, True], place=1)) == 1
    assert act("failover", state(1, 0, 4, [False, False, True], place=1)) == 2
    assert act("failover", state(1, 0, 4, [False, False], place=0)) == NOTHING


def test_greedy_falls_back_when_d_minus_t_is_below_rem_plus_r_plus_g():
    # D 10, rem 4, R 0.25, g 0.5: late when 10 - t < 4.75, i.e. t > 5.25
    assert act("deadline", state(5.0, 0, 4, [True])) == 0
    assert act("deadline", state(5.25, 0, 4, [True])) == 0  # equal: not late
    assert act("deadline", state(5.5, 0, 4, [True])) == ON_DEMAND
    # on demand for good, even with the pool up and plenty of time
    assert act("deadline", state(0.0, 0, 4, [True], place=ON_DEMAND)) == ON_DEMAND


def test_late_is_exact_at_tick_boundaries_despite_float_noise():
    # the example: D 1.7, rem 1, R 0.2, g 1/6: at t = 2 g the two sides are equal
    g = 1 / 6
    s = state(2 * g, 0, 1.0, [False], deadline=1.7, restart=0.2, g=g)
    assert not late(s)[0]
    assert late(state(3 * g, 0, 1.0, [False], deadline=1.7, restart=0.2, g=g))[0]


def test_uniform_progress_by_hand():
    # job 8 h, D 16 h: the line is t / 2. Spot whenever up (even behind the line)
    assert act("uniform-progress", state(4, 1, 7, [True], deadline=16)) == 0
    # no pool up: on demand only when behind the line, else nothing
    assert act("uniform-progress", state(4, 1, 7, [False], deadline=16)) == ON_DEMAND
    assert act("uniform-progress", state(4, 2, 6, [False], deadline=16)) == NOTHING
    assert act("uniform-progress", state(4, 3, 5, [False], deadline=16)) == NOTHING
    # back to spot from on demand when a pool returns
    assert act("uniform-progress", state(4, 1, 7, [True], place=ON_DEMAND, deadline=16)) == 0
    # the greedy rule overrides: 16 - 9 = 7 < 7 + 0.25 + 0.5
    assert act("uniform-progress", state(9, 1, 7, [True], deadline=16)) == ON_DEMAND


def _draw_state(data: st.DataObject) -> tuple[int, float, float, float, float, float, float,
                                               list[bool], int]:
    """A random state's scalars: pools, tick g, work done, remaining, segment, R, deadline (all
    in eighths or sixteenths of an hour, so that ties on boundaries are common), which pools are
    up, and a placement (nothing, on demand or a pool that is up)."""
    pools = data.draw(st.integers(1, 3))
    g = data.draw(st.sampled_from([1 / 16, 0.25, 1 / 6, 32 / 3600]))
    done = data.draw(st.integers(0, 40)) / 8
    rem = data.draw(st.integers(1, 40)) / 8
    seg = data.draw(st.integers(1, 16)) / 8
    restart = data.draw(st.integers(0, 4)) / 16
    deadline = data.draw(st.integers(1, 200)) / 8
    up = data.draw(st.lists(st.booleans(), min_size=pools, max_size=pools))
    place = data.draw(st.sampled_from([NOTHING, ON_DEMAND, *[p for p in range(pools) if up[p]]]))
    return pools, g, done, rem, seg, restart, deadline, up, place


@pytest.mark.parametrize("policy", sorted(POLICIES))
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_actions_change_at_most_once_while_only_time_moves_on(policy, data):
    _, g, done, rem, seg, restart, deadline, up, place = _draw_state(data)
    pending = data.draw(st.booleans())
    start = data.draw(st.integers(0, 40))
    steps = 400
    k = np.arange(start, start + steps)
    t = k * g
    s = RecoveryState(
        elapsed_hours=t, work_done_hours=np.full(steps, done), remaining_hours=np.full(steps, rem),
        segment_hours=np.full(steps, seg),
        attempt_hours=np.where(place == NOTHING, 0.0, t - t[0]),
        restart_pending=np.full(steps, pending), placement=np.full(steps, place),
        pools_up=np.tile(up, (steps, 1)), deadline_hours=np.full(steps, deadline),
        restart_hours=np.full(steps, restart), tick_hours=g)
    a = POLICIES[policy](s).action  # type: ignore[index]
    assert int(np.count_nonzero(np.diff(a))) <= 1


@pytest.mark.parametrize("policy", sorted(POLICIES))
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_a_decision_holds_before_its_hint(policy, data):
    # one decision at boundary k0, then the run holds its action for up to 300 boundaries: its
    # work done and rem stay (a segment that does not end) or rem drops once by one segment (a
    # checkpoint), its attempt ages, the pools it watches stay as they were and the others
    # change at random. Before until_hours, the policy must answer the same.
    pools, g, done, rem, seg, restart, deadline, up, place = _draw_state(data)
    k0 = data.draw(st.integers(0, 40))
    pending = data.draw(st.booleans())
    length = seg + (restart if pending else 0.0)  # of the attempt in progress
    attempt = 0.0 if place == NOTHING else min(data.draw(st.integers(0, 8)) * g, length)
    first = state(k0 * g, done, rem, up, place=place, deadline=deadline, restart=restart, g=g,
                  attempt=attempt, seg=seg, pending=pending)
    d = POLICIES[policy](first)  # type: ignore[index]
    a = int(d.action[0])
    until = float(d.until_hours[0])
    watch = d.watch[0]
    steps = 300
    k = np.arange(k0 + 1, k0 + 1 + steps)
    t = k * g
    keep = a == place
    new_pending = pending if keep else data.draw(st.booleans())
    age = (attempt if keep else 0.0) + t - k0 * g
    # a checkpoint at some boundary after the attempt's end (never, if the action does not run)
    end = k0 * g + (length - attempt if keep else seg)
    earliest = int(np.searchsorted(t, end - 1e-12)) + 1
    cp = steps if a == NOTHING or earliest >= steps else data.draw(st.integers(earliest, steps))
    after = np.arange(steps) >= cp - 1
    moved = after & (rem > seg)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    pools_up = np.where(watch[None, :], np.asarray(up)[None, :],
                        rng.random((steps, pools)) < 0.5)
    s = RecoveryState(
        elapsed_hours=t, work_done_hours=np.where(moved, done + seg, done),
        remaining_hours=np.where(moved, rem - seg, rem), segment_hours=np.full(steps, seg),
        attempt_hours=np.where(a == NOTHING, 0.0, np.where(after, 0.0, age)),
        restart_pending=np.where(after, False, new_pending), placement=np.full(steps, a),
        pools_up=pools_up, deadline_hours=np.full(steps, deadline),
        restart_hours=np.full(steps, restart), tick_hours=g)
    got = POLICIES[policy](s).action  # type: ignore[index]
    before = t < until
    assert np.all(got[before] == a), (a, until, t[before][got[before] != a][:3])


def test_slack_reserve_by_hand():
    # D 10, rem 4, R 0.25, g 0.5, s 1: slack = 10 - t - 4.75; reserve 2 (0.25 + 1) = 2.5
    # no pool up: waits while slack >= 2.5 (t <= 2.75), on demand below
    assert act("slack-reserve", state(2.5, 0, 4, [False])) == NOTHING
    assert act("slack-reserve", state(3.0, 0, 4, [False])) == ON_DEMAND
    # greedy would still wait there
    assert act("deadline", state(3.0, 0, 4, [False])) == NOTHING
    # on demand, a pool up: back to spot only at the first boundary of a segment begun
    # without a restart
    assert act("slack-reserve", state(3.0, 0, 4, [True], place=ON_DEMAND, attempt=0.25)) == 0
    assert act("slack-reserve", state(3.0, 0, 4, [True], place=ON_DEMAND, attempt=0.75)) \
        == ON_DEMAND
    assert act("slack-reserve", state(3.0, 0, 4, [True], place=ON_DEMAND, attempt=0.25,
                                      pending=True)) == ON_DEMAND
    # on demand, no pool up, plenty of slack, at a segment's start: stop (nothing)
    assert act("slack-reserve", state(1.0, 0, 4, [False], place=ON_DEMAND, attempt=0.25)) \
        == NOTHING
    # late: on demand whatever else
    assert act("slack-reserve", state(5.5, 0, 4, [True])) == ON_DEMAND
