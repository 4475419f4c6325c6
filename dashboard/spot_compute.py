"""The Spot markets page's logic (``traces.md``), without widgets: the trace files of the
per-user folder (:func:`deepvm_core.home.spot_traces_dir`), uploads kept there, pools from a
file -> ``TYPE@ZONE`` mapping, the availability strip, the statistics table, and the backtest of
one planned configuration under each recovery policy.

Every bad input is a message naming the file or the field; a bad file never drops the good
ones. Traces are cached by path and modification time.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from deepvm_core.catalog import Catalog
from deepvm_core.errors import DeepVMError
from deepvm_core.files import write_bytes_atomic
from deepvm_core.home import spot_traces_dir
from deepvm_core.io.backtest_doc import runs_to_dict
from deepvm_core.job.backtest import BACKTEST_BUDGET_SECONDS, RecoveryPolicy, TimeBudget
from deepvm_core.job.backtest import starts_note as core_starts_note
from deepvm_core.job.backtest_runs import BacktestRuns
from deepvm_core.market import trace_fetch
from deepvm_core.market.pool_prices import make_regional_pool, pool_catalog
from deepvm_core.market.pools import Pool, check_pools, make_pool, user_pool_name
from deepvm_core.market.synthetic import SYNTHETIC_SEED, synthetic_market
from deepvm_core.market.trace import SpotTrace, TraceError, load_trace, parse_trace
from deepvm_core.market.trace_stats import pool_statistics, up_ticks
from deepvm_core.model import flopp_ranking
from deepvm_core.pipeline.backtest_plan import PlannedCluster, PolicyBacktests, policy_backtests
from deepvm_core.pipeline.plan import JobPlanResult, PlanEstimate

#: Where the page keeps uploaded traces, under :func:`spot_traces_dir`.
UPLOADS = "uploads"
#: How a mapped file that is not in the folder is reported.
MISSING = "no such trace file in"
#: How the page names the per-user traces folder: never by its path on the server.
TRACES_FOLDER = "the traces folder on the server"
#: The most trace files listed from the folder.
MAX_FILES = 500
#: The availability strip's most columns (ticks are averaged into this many bins).
STRIP_BINS = 1500
#: A deadline of 0 on the page means this many times the configuration's compute hours.
DEFAULT_DEADLINE_FACTOR = 1.5
#: The GPU types of the public traces' file names (``us-west-2a_v100_1.json``: AWS types).
TRACE_GPUS = {"v100_1": "p3.2xlarge", "v100_8": "p3.16xlarge", "k80_1": "p2.xlarge",
              "k80_8": "p2.8xlarge"}
_ZONE = re.compile(r"(?<![A-Za-z0-9])[a-z]{2}(?:-[a-z]+)+-\d+[a-z](?![a-z0-9])")


def trace_root() -> Path:
    """The per-user traces folder (not created)."""
    return spot_traces_dir()


def trace_files(root: Path) -> list[str]:
    """The ``*.json`` files under ``root`` (relative, ``/``-separated, sorted; at most
    :data:`MAX_FILES`); the fetch list ``files.json`` is left out."""
    if not root.is_dir():
        return []
    found = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.json")
                   if p.is_file() and p.name != "files.json")
    return found[:MAX_FILES]


def guess_pool(rel: str) -> str:
    """``TYPE@ZONE`` guessed from a public trace's name (``us-west-2a_v100_1.json`` ->
    ``p3.2xlarge@us-west-2a``), or ``""``."""
    stem = Path(rel).stem
    zone = _ZONE.search(stem)
    gpu = next((g for suffix, g in TRACE_GPUS.items() if stem.endswith(suffix)), None)
    return f"{gpu}@{zone.group(0)}" if zone and gpu else ""


def save_upload(root: Path, name: str, data: bytes) -> str:
    """Check an uploaded trace and keep it as ``uploads/<sha12>-<name>`` under ``root``
    (written atomically; the same content is kept once). Returns its relative path.

    Raises:
        TraceError: not a valid trace (the message names ``name``).
    """
    parse_trace(data, name)
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(name).name)[:80] or "trace.json"
    if not safe.endswith(".json"):
        safe += ".json"
    rel = f"{UPLOADS}/{hashlib.sha256(data).hexdigest()[:12]}-{safe}"
    target = root / rel
    if not target.exists():
        try:
            write_bytes_atomic(target, data)
        except OSError as exc:
            raise TraceError(name, f"cannot be kept in {TRACES_FOLDER}: "
                                   f"{exc.strerror or exc}") from None
    return rel


@st.cache_resource(show_spinner=False, max_entries=64)
def _trace(path: str, mtime_ns: int) -> SpotTrace:
    del mtime_ns  # the cache key only
    return load_trace(path)


def read_trace(root: Path, rel: str) -> SpotTrace:
    """The trace ``rel`` under ``root``, cached (raises :class:`TraceError` naming it). Only
    files inside ``root`` are read (a URL names them: no absolute path, no ``..``)."""
    path = (root / rel).resolve()
    if not path.is_relative_to(root.resolve()):
        raise TraceError(rel, f"not a file of {TRACES_FOLDER}")
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        raise TraceError(rel, f"{MISSING} {TRACES_FOLDER}") from None
    try:
        trace = _trace(str(path), stamp)
    except TraceError as exc:  # named by the file's path on the server: name it by ``rel``
        raise TraceError(rel, exc.reason) from None
    return SpotTrace(source=rel, gap_seconds=trace.gap_seconds, counts=trace.counts)


@dataclass(frozen=True, eq=False)
class PoolSet:
    """The session's pools: ``key`` (name, file, modification time) for caches, and the pools
    in the order of the mapping."""

    key: tuple[tuple[str, str, int], ...]
    pools: tuple[Pool, ...]


def build_pools(catalog: Catalog, root: Path,
                mapping: Mapping[str, str]) -> tuple[PoolSet, list[str]]:
    """The pools of ``mapping`` (file -> ``TYPE@ZONE``; empty names skipped) and one message
    per entry that cannot be used (bad name, type not in the catalog, unreadable trace, a pool
    twice, pools of one type whose traces do not line up); the good entries are kept."""
    pools: list[Pool] = []
    key: list[tuple[str, str, int]] = []
    errors: list[str] = []
    for rel, name in mapping.items():
        if not name.strip():
            continue
        try:
            user_pool_name(name.strip())
            pool = make_regional_pool(catalog, name.strip(), read_trace(root, rel))
            if any(p.name == pool.name for p in pools):
                raise TraceError(rel, f"pool {pool.name} is already mapped to another file")
            same = [p for p in pools if p.gpu == pool.gpu]
            if same:
                check_pools([same[0], pool])
        except DeepVMError as exc:
            errors.append(f"{rel}: {exc}" if rel not in str(exc) else str(exc))
            continue
        pools.append(pool)
        key.append((pool.name, rel, (root / rel).resolve().stat().st_mtime_ns))
    return PoolSet(tuple(key), tuple(pools)), errors


def availability_strip(pools: Sequence[Pool], spot_vms: int,
                       bins: int = STRIP_BINS) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Per pool, the share of up ticks in each of at most ``bins`` equal time bins (the
    strip's z, pools x bins), the bins' start in hours since the trace's start (x) and the
    pool names (y). Ticks of a pool are up as in the statistics (``traces.md``); a count trace
    whose largest count is below ``spot_vms`` is never up (the statistics name it)."""
    if not pools:
        return np.zeros(0), [], np.zeros((0, 0))
    length = max(p.trace.ticks for p in pools)
    width = min(bins, length)
    rows = []
    for p in pools:
        top = p.trace.max_count
        up = (np.zeros(p.trace.ticks, dtype=bool) if 1 < top < spot_vms  # never fits
              else up_ticks(p.trace, spot_vms))
        edges = (np.arange(width + 1) * up.size) // width
        sums = np.add.reduceat(up.astype(np.float64), edges[:-1])
        counts = np.diff(edges).astype(np.float64)
        rows.append(np.where(counts > 0, sums / np.maximum(counts, 1), np.nan))
    gap_h = pools[0].trace.gap_hours
    x = (np.arange(width) * length // width) * gap_h
    return x, [p.name for p in pools], np.vstack(rows)


def stats_frame(pools: Sequence[Pool], spot_vms: int) -> tuple[pd.DataFrame, list[str]]:
    """The statistics table (``traces.md``) for ``spot_vms`` spot VMs; a pool whose count
    trace cannot hold the cluster gets a message instead of a row."""
    rows, errors = [], []
    for p in pools:
        try:
            s = pool_statistics(p.trace, spot_vms)
        except TraceError as exc:
            errors.append(f"{p.name}: {exc}")
            continue
        rows.append({"Pool": p.name, "File": p.trace.source, "Days": s.days,
                     "Tick (s)": s.gap_seconds, "Availability": s.availability,
                     "Interruptions": s.interruptions,
                     "MTBI (h)": s.mtbi_hours if math.isfinite(s.mtbi_hours) else None,
                     "Mean wait (h)": s.mean_wait_hours,
                     "Spot USD/h": p.spot_usd_per_hour, "Prices from": p.prices_from})
    return pd.DataFrame(rows), errors


# ----------------------------------------------------------------------------- the planned job


def backtested(result: JobPlanResult) -> PlanEstimate | None:
    """The configuration the page backtests: the plan's chosen one when the backtest
    evaluated it, else the best (by the plan's goal) of those it evaluated that finish within
    the limits; ``None`` when the backtest evaluated none."""
    chosen = result.chosen
    if chosen is not None and chosen.evaluated_by == "backtest":
        return chosen
    replay = result.replay
    if replay is None:
        return None
    ok = replay.evaluated & result.finishes
    if not ok.any():
        return None
    score = (result.expected_makespan_hours if result.goal == "fastest"
             else result.expected_cost_usd)
    index = int(np.flatnonzero(ok)[np.argmin(score[ok])])
    return result.estimate(index)


def default_deadline(estimate: PlanEstimate) -> float:
    """:data:`DEFAULT_DEADLINE_FACTOR` x the configuration's compute hours."""
    return DEFAULT_DEADLINE_FACTOR * estimate.compute_hours


def policy_frame(runs: Mapping[RecoveryPolicy, BacktestRuns]) -> pd.DataFrame:
    """One row per policy: makespan mean/P50/P90/max, cost mean/P90, the deadline met
    (``k of S``), the share that fell back and the mean interruptions."""
    rows = []
    for policy, r in runs.items():
        s = r.summary()
        met = 0 if s.deadline_met is None else round(float(s.deadline_met[0]) * s.runs)
        rows.append({"Policy": policy, "Mean makespan (h)": float(s.mean_makespan_hours[0]),
                     "P50 (h)": float(s.makespan_hours_p50[0]),
                     "P90 (h)": float(s.makespan_hours_p90[0]),
                     "Max (h)": float(s.max_makespan_hours[0]),
                     "Mean cost (USD)": float(s.mean_cost_usd[0]),
                     "P90 cost (USD)": float(s.cost_usd_p90[0]),
                     "Deadline met": f"{met} of {s.runs}",
                     "Fell back": float(s.fell_back[0]),
                     "Interruptions": float(s.mean_interruptions[0])})
    return pd.DataFrame(rows)


def backtest_json(cluster: PlannedCluster, config_doc: Mapping[str, Any], pools: Sequence[Pool],
                  restart_hours: float, deadline_hours: float,
                  runs: Mapping[RecoveryPolicy, BacktestRuns]) -> str:
    """The download: the configuration, the pools (failover order), the inputs and, per
    policy, the summary and every run's makespan and cost."""
    doc = {"kind": "backtest", "configuration": dict(config_doc),
           "pools": [{"name": p.name, "file": p.trace.source,
                      "gap_seconds": p.trace.gap_seconds, "days": p.trace.days,
                      "spot_usd_per_hour": p.spot_usd_per_hour} for p in pools],
           "restart_hours": restart_hours, "deadline_hours": deadline_hours,
           "compute_hours": cluster.compute_hours,
           "policies": {policy: runs_to_dict(r, per_run=True) for policy, r in runs.items()}}
    return json.dumps(doc, indent=2) + "\n"


@st.cache_data(show_spinner=False, max_entries=32)
def _policy_runs(catalog_sha256: str, _catalog: Catalog, cluster: PlannedCluster,
                 pools_key: tuple[object, ...], _pools: tuple[Pool, ...], restart_hours: float,
                 deadline_hours: float, starts: int,
                 ) -> PolicyBacktests | str:
    del catalog_sha256, pools_key  # the cache key only
    try:
        return policy_backtests(_catalog, cluster, _pools, restart_hours, deadline_hours,
                                starts, budget=TimeBudget(BACKTEST_BUDGET_SECONDS))
    except DeepVMError as exc:
        return str(exc)


def policy_runs(catalog: Catalog, cluster: PlannedCluster, pools: PoolSet,
                ordered: Sequence[Pool], restart_hours: float, deadline_hours: float,
                starts: int) -> PolicyBacktests | str:
    """:func:`~deepvm_core.pipeline.backtest_plan.policy_backtests` of ``cluster`` on
    ``ordered`` (pools of ``pools``, failover order) within the time budget of a request
    (:data:`~deepvm_core.job.backtest.BACKTEST_BUDGET_SECONDS`), or the message of the error
    that stopped it (a bad input, the budget spent). Both are cached (issue 27): a rerun or a
    shared link never replays them again."""
    key = (pools.key, tuple(p.name for p in ordered))
    return _policy_runs(catalog.sha256, catalog, cluster, key, tuple(ordered), restart_hours,
                        deadline_hours, starts)


def starts_note(asked: int, runs: Mapping[RecoveryPolicy, BacktestRuns]) -> str | None:
    """The sentence when fewer runs were replayed than start times asked (a trace has fewer
    ticks than that, and each tick starts one run at most), or ``None``."""
    done = min((int(r.start_ticks.shape[0]) for r in runs.values()), default=asked)
    note = core_starts_note(asked, done)
    return None if note is None else f"{note} per policy."


def card_note(result: JobPlanResult, pools: PoolSet) -> str | None:
    """The budget holder's line when traces gave the chosen figures: ``Figures from a replay
    on 27 days of real availability in us-west-2a, us-west-2b (failover, 200 starts); the
    24 h deadline was met in 200 of 200 starts.``; ``None`` otherwise."""
    chosen = result.chosen
    replay = result.replay
    if chosen is None or replay is None or chosen.evaluated_by != "backtest":
        return None
    used = [p for name in chosen.pools for p in pools.pools if p.name == name]
    days = min((p.trace.days for p in used), default=0.0)
    zones = ", ".join(p.zone for p in used)
    text = (f"Figures from a replay on {days:,.0f} days of real availability in {zones} "
            f"({replay.recovery}, {replay.runs} starts)")
    if replay.deadline_met is not None and result.deadline_hours is not None:
        met = round(float(replay.deadline_met[chosen.index]) * replay.runs)
        text += (f"; the {result.deadline_hours:g} h deadline was met in {met} of "
                 f"{replay.runs} starts")
    return text + "."


# ----------------------------------------------------------------------------- first run


def synthetic_pools(catalog: Catalog, gpu: str) -> PoolSet:
    """The seeded synthetic market (:mod:`deepvm_core.market.synthetic`) as pools of ``gpu``,
    priced from ``catalog``; never written to disk, never used outside the Spot markets page."""
    pools = tuple(make_pool(catalog, f"{gpu}@{zone}", trace)
                  for zone, trace in synthetic_market())
    return PoolSet(tuple((p.name, "synthetic", SYNTHETIC_SEED) for p in pools), pools)


def synthetic_gpu(catalog: Catalog, result: JobPlanResult) -> str | None:
    """The GPU type of the synthetic market: the plan's choice when it has spot VMs, else the
    catalog's best spot FLOP per dollar; ``None`` without a solvable GPU type."""
    chosen = result.chosen
    if chosen is not None and chosen.configuration.gpu_spot > 0:
        return chosen.configuration.gpu
    ranking = flopp_ranking(catalog)  # stage 2: by spot FLOP per dollar, ties by name
    return ranking[0].name if ranking else None


def auto_pools(files: Sequence[str], catalog: Catalog) -> dict[str, str]:
    """The pools to map after a fetch: the files of the first folder of the fetch list whose
    name gives a pool (:func:`guess_pool`) of a GPU type its region's catalog has (one data
    set, so traces of one type line up)."""
    fetched = [f for f in trace_fetch.trace_files() if f in files]
    if not fetched:
        return {}
    folder = fetched[0].rpartition("/")[0]
    pools: dict[str, str] = {}
    for rel in fetched:
        name = guess_pool(rel)
        if rel.rpartition("/")[0] != folder or not name:
            continue
        gpu, _, zone = name.partition("@")
        priced = pool_catalog(catalog, zone)
        if priced is not None and any(g.name == gpu for g in priced.gpu_types):
            pools[rel] = name
    return pools


def fetch_public_traces(root: Path, progress: Callable[[str, int, int], None]) -> list[Path]:
    """``deepvm traces fetch`` into ``root`` (:func:`deepvm_core.market.trace_fetch.
    fetch_traces`, looked up at call time); raises its :class:`~deepvm_core.errors.FetchError`
    (nothing written)."""
    return trace_fetch.fetch_traces(root, progress=progress)
