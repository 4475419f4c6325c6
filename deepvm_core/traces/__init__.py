"""Spot traces (``traces.md``): real spot markets instead of an assumed MTBI.

Modules: ``trace`` (reading and checking a trace file), ``stats`` (a pool's availability,
interruptions, MTBI and mean wait for a cluster of n spot VMs), ``pools`` (``TYPE@ZONE`` pools
priced from a catalog), ``backtest`` (replaying a job from many start times under the ``wait``,
``failover`` and ``deadline`` policies, vectorised). Nothing is read at import time.
"""

from deepvm_core.traces.backtest import (
    DEFAULT_STARTS,
    MAX_STARTS,
    POLICIES,
    BacktestJob,
    BacktestRuns,
    BacktestSummary,
    Policy,
    backtest,
    start_ticks,
)
from deepvm_core.traces.pools import Pool, check_pools, make_pool, pool_gpu, split_pool_name
from deepvm_core.traces.stats import PoolStatistics, pool_statistics, up_threshold, up_ticks
from deepvm_core.traces.trace import MAX_TICKS, SpotTrace, TraceError, load_trace, parse_trace

__all__ = [
    "DEFAULT_STARTS", "MAX_STARTS", "MAX_TICKS", "POLICIES", "BacktestJob", "BacktestRuns",
    "BacktestSummary", "Policy", "Pool", "PoolStatistics", "SpotTrace", "TraceError", "backtest",
    "check_pools", "load_trace", "make_pool", "parse_trace", "pool_gpu", "pool_statistics",
    "split_pool_name", "start_ticks", "up_threshold", "up_ticks",
]
