"""The backtest's working state (:mod:`deepvm_core.job.backtest_replay` drives it): the runs
still going, configuration x start, packed by type and updated in place, with their progress
through segments and their billing per placement (``traces.md``, "Backtest"; the rules of time
and billing are the driver's module docstring). One home for the arithmetic of a run; the
decisions are the policies' (:mod:`deepvm_core.job.recovery`).
"""

from __future__ import annotations

import numpy as np

from deepvm_core.arrays import BoolArray, FloatArray, IntArray
from deepvm_core.job.backtest import BacktestJob
from deepvm_core.job.recovery import NOTHING, ON_DEMAND, TIME_TOLERANCE_HOURS

_TOL = TIME_TOLERANCE_HOURS


def boundary_hours(k: IntArray, g: float) -> FloatArray:
    """Boundary ``k`` in hours."""
    return np.asarray(k * g, dtype=np.float64)


#: The working arrays of a run, packed by type (rows of three 2-D arrays, so that dropping the
#: runs that ended is three takes). Home cluster: the figures of the pool the job last ran in.
#: Runs that ended stay, idle, until a quarter of the rows have (dropping rows costs as much as
#: some thirty operations on them).
_INTS = ("k", "seg", "place", "last_run", "home", "since", "inter", "start", "kfull", "conf",
         "id", "chain_seg", "market")
_BOOLS = ("in_att", "restart", "fell", "live")
_HOME = ("s", "sl", "rr", "total", "price", "fb", "od")
_FLOATS = ("att_start", "att_len", "chain_start", "chain_len", "placed_at", "spot", "odh",
           "wait")
#: Rows of the floats: the hours billed per kind of placement (spot, on demand, waiting; in
#: that order) and where placements began. After the home figures come the hours billed per
#: (kind, home pool), row ``_BY + kind * pools + pool``: the cost is those hours times the
#: configuration's prices (:meth:`RunState.cost`), so that configurations whose runs are the
#: same and whose prices differ are replayed once.
_HOURS = _FLOATS.index("spot")
_PLACED = _FLOATS.index("placed_at")
_BY = len(_FLOATS) + len(_HOME)
#: Kinds of placement, as billed: spot (the pool's price), on demand (the home cluster's
#: fallback price), waiting (its on-demand part).
KINDS = 3
#: Rows of the floats that are outputs, after the makespan (spot, wait, on demand).
_OUT = np.array([[_FLOATS.index(name)] for name in ("spot", "wait", "odh")])


class RunState:
    """The runs still going (configuration x start; ``id`` is the run's place in the outputs),
    updated in place by the driver. ``k`` is the boundary the run is at; ``s``, ``sl``, ``rr``,
    ``total``, ``price``, ``fb`` and ``od`` are its home cluster's full and last segment hours,
    R, job hours, spot, on-demand (fallback) and waiting prices.

    Times do not depend on where the driver stopped on the way (so a run's figures are the same
    whichever policy, or path, brought it there): the attempts of an unbroken chain (one started
    at a boundary, then the next segments one after the other) are placed from the chain's first
    (``chain_start``, ``chain_len``, ``chain_seg``), segment m after it at
    ``chain_start + chain_len + m s``; hours are billed per placement, from ``placed_at`` to its
    end."""

    k: IntArray
    seg: IntArray
    place: IntArray
    last_run: IntArray
    home: IntArray
    since: IntArray  # boundary of the last segment done
    inter: IntArray
    start: IntArray
    kfull: IntArray
    conf: IntArray
    id: IntArray
    chain_seg: IntArray
    market: IntArray  # the market (scenario) the run replays
    in_att: BoolArray
    restart: BoolArray
    fell: BoolArray
    live: BoolArray
    att_start: FloatArray
    att_len: FloatArray
    chain_start: FloatArray
    chain_len: FloatArray
    placed_at: FloatArray
    spot: FloatArray
    wait: FloatArray
    odh: FloatArray
    cost: FloatArray
    s: FloatArray
    sl: FloatArray
    rr: FloatArray
    total: FloatArray
    price: FloatArray
    fb: FloatArray
    od: FloatArray

    def __init__(self, job: BacktestJob, first: IntArray, markets: int = 1) -> None:
        nconf, nstart = job.configurations, first.size
        ci = np.repeat(np.arange(nconf), markets * nstart)
        n = ci.size
        self.pools = job.pools
        self.ints = np.zeros((len(_INTS), n), dtype=np.int64)
        self.bools = np.zeros((len(_BOOLS), n), dtype=bool)
        self.floats = np.zeros((_BY + KINDS * job.pools, n))
        self._views()
        self.place[:] = NOTHING
        self.last_run[:] = NOTHING
        self.live[:] = True
        self.ended = 0  # rows of runs that ended, still in the arrays
        self.start[:] = np.tile(first, nconf * markets)
        self.market[:] = np.tile(np.repeat(np.arange(markets), nstart), nconf)
        self.kfull[:] = job.full_segments[ci]
        self.conf[:] = ci
        self.id[:] = np.arange(n)
        #: (configuration * pools + pool, figure): the home figures of each pool's cluster
        self.figures = np.stack([
            job.full_segment_hours.ravel(), job.last_segment_hours.ravel(),
            job.restart_hours.ravel(),
            (job.full_segments[:, None] * job.full_segment_hours
             + job.last_segment_hours).ravel(),
            job.price_usd_per_hour.ravel(), job.fallback_usd_per_hour.ravel(),
            job.on_demand_usd_per_hour.ravel()], axis=1)
        self.set_home(np.arange(n), np.zeros(n, dtype=np.int64))
        #: Per configuration: every pool's cluster has the same segment hours and R.
        self.same_pools = np.asarray(
            ((job.full_segment_hours == job.full_segment_hours[:, :1])
             & (job.last_segment_hours == job.last_segment_hours[:, :1])
             & (job.restart_hours == job.restart_hours[:, :1])).all(axis=1), dtype=bool)
        self.all_same = bool(self.same_pools.all())
        self.out_floats = np.zeros((4, n))  # makespan, spot, wait, odh
        self.out_by = np.zeros((KINDS * job.pools, n))  # hours per (kind, home pool)
        self.out_inter = np.zeros(n, dtype=np.int64)
        self.out_fell = np.zeros(n, dtype=bool)
        self.out_never = np.zeros(n, dtype=bool)

    def _views(self) -> None:
        for i, name in enumerate(_INTS):
            setattr(self, name, self.ints[i])
        for i, name in enumerate(_BOOLS):
            setattr(self, name, self.bools[i])
        for i, name in enumerate((*_FLOATS, *_HOME)):
            setattr(self, name, self.floats[i])

    @property
    def size(self) -> int:
        """Runs still going."""
        return int(self.ints.shape[1])

    def set_home(self, rows: IntArray, pool: IntArray) -> None:
        """Runs ``rows`` now run in (and are billed as) the cluster of ``pool``."""
        self.home[rows] = pool
        self.floats[len(_FLOATS):_BY, rows] = self.figures[self.conf[rows] * self.pools + pool].T

    def seglen(self, seg: IntArray) -> FloatArray:
        """Hours of segment ``seg`` in each run's home cluster."""
        return np.where(seg < self.kfull, self.s, self.sl)

    def remaining(self) -> FloatArray:
        """``rem``: every segment from the current one on, in the home cluster."""
        return np.asarray((self.kfull - self.seg) * self.s + self.sl, dtype=np.float64)

    def finish(self, done: BoolArray, at: FloatArray, never: bool = False) -> None:
        """Runs ``done`` ended at ``at`` (``never``: they never finish; their makespan and
        cost are infinite): their outputs written; they idle from now on (no attempt,
        nothing placed, at segment 0) and are dropped once a quarter of the rows have
        ended."""
        ended = np.flatnonzero(done)
        self.bill(ended, at[ended])
        rows = self.id[ended]
        self.out_floats[0, rows] = np.inf if never else at[ended]
        self.out_floats[1:, rows] = self.floats[_OUT, ended]
        self.out_by[:, rows] = self.floats[_BY:, ended]
        self.out_inter[rows] = self.inter[done]
        self.out_fell[rows] = self.fell[done]
        self.out_never[rows] = never
        self.live &= ~done
        self.in_att &= ~done
        self.place[done] = NOTHING
        self.seg[done] = 0
        self.ended += int(np.count_nonzero(done))
        if 4 * self.ended >= self.size:
            keep = np.flatnonzero(self.live)
            self.ints = self.ints.take(keep, axis=1)
            self.bools = self.bools.take(keep, axis=1)
            self.floats = self.floats.take(keep, axis=1)
            self.ended = 0
            self._views()

    def bill(self, rows: IntArray, at: FloatArray) -> None:
        """The placements of runs ``rows`` end at ``at``: their hours since ``placed_at``,
        billed (spot at the pool's price, on demand at the home cluster's fallback price,
        waiting at its on-demand part)."""
        p = self.place[rows]
        kind = np.where(p >= 0, 0, np.where(p == ON_DEMAND, 1, 2))  # spot, on demand, waiting
        n = self.size
        flat = self.floats.reshape(-1)  # a view: (row, run) is row * n + run
        hours = at - flat[_PLACED * n + rows]
        flat[(_BY + kind * self.pools + self.home[rows]) * n + rows] += hours
        flat[(_HOURS + kind) * n + rows] += hours
        flat[_PLACED * n + rows] = at

    def progress(self, until: FloatArray,
                 ) -> tuple[IntArray, FloatArray, FloatArray, BoolArray, FloatArray]:
        """Every run, as if its chain of attempts ran without a break until ``until``: the
        segment, attempt start and length, whether an attempt is in progress at ``until`` (not
        when one ended exactly there) and the job's end (NaN if later). Only the answers of
        runs with an attempt in progress mean anything."""
        seg, kf, s, sl = self.chain_seg, self.kfull, self.s, self.sl
        a0, l0 = self.chain_start, self.chain_len
        c1 = a0 + l0
        reach = until + _TOL
        first = c1 <= reach
        left = kf - seg - 1  # full segments after the current one (-1: it is the last)
        m = np.floor((until - c1 + _TOL) / s)
        m = np.minimum(np.maximum(np.where(first, m, 0), 0), np.maximum(left, 0)).astype(np.int64)
        over = (m > 0) & (c1 + m * s > reach)
        m -= over
        more = (m < left) & (c1 + (m + 1) * s <= reach) & first
        m += more
        t2 = c1 + m * s
        end_last = t2 + sl
        done_at = np.where(first & (left < 0), c1,
                           np.where(first & (left >= 0) & (m == left) & (end_last <= reach),
                                    end_last, np.nan))
        nseg = np.where(first, seg + 1 + m, seg)
        nstart = np.where(first, t2, a0)
        nlen = np.where(first, self.seglen(np.minimum(nseg, kf)), l0)
        going = ~first | (t2 < until - _TOL)
        return nseg, nstart, nlen, going, done_at
