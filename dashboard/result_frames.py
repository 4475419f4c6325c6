"""Data frames of core results, as the pages show them and the charts draw them (pure).

Column names are defined once in :mod:`columns` (:class:`Col`, re-exported here) and used
by pages and charts alike.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from dashboard.columns import Col
from deepvm_core.catalog import Catalog
from deepvm_core.catalog.diff import PriceChange
from deepvm_core.model import (
    ARCHITECTURE_LABELS,
    Configuration,
    Objective,
    flopp_ranking,
    saturation_limits,
    scaling_factor,
)
from deepvm_core.recommend.policies import POLICY_LABELS
from deepvm_core.recommend.regions import RegionComparison
from deepvm_core.recommend.sweep import SweepResult

CONFIG_COLUMNS = (Col.ARCH, Col.GPU, Col.SPOT, Col.ON_DEMAND, Col.MEM_NODES, Col.PRICE,
                  Col.PW_SHARE, Col.PERF, Col.OBJECTIVE, Col.K, Col.FLOPP)


def configuration_row(config: Configuration, pw: float,
                      objective: Objective) -> dict[str, object]:
    """One table row describing ``config``."""
    return {
        Col.ARCH: ARCHITECTURE_LABELS[config.architecture],
        Col.GPU: config.gpu,
        Col.SPOT: config.gpu_spot,
        Col.ON_DEMAND: config.gpu_on_demand,
        Col.MEM_NODES: f"{config.memory_nodes} × {config.cpu}" if config.cpu else "none",
        Col.PRICE: config.hourly_price_usd,
        Col.PW_SHARE: 100.0 * config.hourly_price_usd / pw if pw > 0 else np.nan,
        Col.PERF: config.performance,
        Col.OBJECTIVE: config.objective_value(objective),
        Col.K: config.scaling_factor,
        Col.FLOPP: config.cluster_flopp,
    }


def policy_frame(configs: dict[str, Configuration | None], pw: float) -> pd.DataFrame:
    """One row per policy (a policy with nothing feasible keeps its row, empty)."""
    rows = []
    for policy, c in configs.items():
        row: dict[str, object] = {Col.POLICY: POLICY_LABELS[policy],
               Col.CONFIG: c.describe().rsplit(",", 1)[0] if c else "none feasible"}
        if c is not None:
            row.update(configuration_row(c, pw, "paper"))
            row.pop(Col.OBJECTIVE)
        rows.append(row)
    return pd.DataFrame(rows, columns=[Col.POLICY, Col.CONFIG, Col.PRICE, Col.PW_SHARE, Col.PERF,
                                       Col.K, Col.FLOPP])


def flopp_frame(catalog: Catalog) -> pd.DataFrame:
    """Stage 2: eFLOP per USD of every solvable GPU type, spot and on-demand."""
    rows = [{Col.GPU: r.name, Col.EFLOPS: r.eflops, Col.SPOT_PRICE: r.spot_usd_per_hour,
             Col.OD_PRICE: r.on_demand_usd_per_hour, Col.SPOT_FLOPP: r.spot_flopp,
             Col.OD_FLOPP: r.on_demand_flopp, Col.SPOT_RANK: r.spot_rank,
             Col.OD_RANK: r.on_demand_rank} for r in flopp_ranking(catalog)]
    return pd.DataFrame(rows, columns=[Col.GPU, Col.EFLOPS, Col.SPOT_PRICE, Col.OD_PRICE,
                                       Col.SPOT_FLOPP, Col.OD_FLOPP, Col.SPOT_RANK, Col.OD_RANK])


def scaling_frame(catalog: Catalog, n_max: int) -> pd.DataFrame:
    """K(n) and n·K(n) for n = 1..n_max of every solvable GPU type (long format)."""
    n = np.arange(1, n_max + 1)
    parts = []
    for gpu in catalog.solvable_gpu_types:
        k = scaling_factor(gpu.scaling, n)
        parts.append(pd.DataFrame({Col.GPU: gpu.name, Col.NODES: n, Col.K: k,
                                   Col.SPEEDUP: n * k}))
    if not parts:
        return pd.DataFrame(columns=[Col.GPU, Col.NODES, Col.K, Col.SPEEDUP])
    return pd.concat(parts, ignore_index=True)


def inflection_frame(catalog: Catalog) -> pd.DataFrame:
    """Each GPU type's scaling parameters (a, b, c); empty fits mean K = 1."""
    rows = []
    for gpu in catalog.solvable_gpu_types:
        s = gpu.scaling
        rows.append({Col.GPU: gpu.name, "a": s.a if s else np.nan,
                     Col.INFLECTION: s.b if s else np.nan, "c": s.c if s else np.nan})
    return pd.DataFrame(rows, columns=[Col.GPU, "a", Col.INFLECTION, "c"])


def quota_frame(catalog: Catalog) -> pd.DataFrame:
    """The catalog's vCPU quotas, one row per family: its rows in order, then the families of
    its types that have none (limits empty: unlimited), with how many GPU and CPU types each
    family has."""
    types = (*catalog.gpu_types, *catalog.cpu_types)
    families = [q.family for q in catalog.quotas]
    families += sorted({t.family for t in types} - set(families))
    rows = []
    for family in families:
        q = catalog.quota(family)
        gpus = sum(1 for t in catalog.gpu_types if t.family == family)
        cpus = sum(1 for t in catalog.cpu_types if t.family == family)
        rows.append({Col.FAMILY: family,
                     Col.OD_VCPUS: q.on_demand_vcpus if q is not None else None,
                     Col.SPOT_VCPUS: q.spot_vcpus if q is not None else None,
                     Col.FAMILY_TYPES: f"{gpus} GPU, {cpus} CPU"})
    return pd.DataFrame(rows, columns=[Col.FAMILY, Col.OD_VCPUS, Col.SPOT_VCPUS,
                                       Col.FAMILY_TYPES]).astype(
        {Col.OD_VCPUS: "Int64", Col.SPOT_VCPUS: "Int64"})


def saturation_frame(catalog: Catalog) -> pd.DataFrame:
    """The catalog's network-saturation table."""
    return pd.DataFrame({Col.BANDWIDTH: [s.bandwidth_gbps for s in catalog.saturation],
                         Col.N_SAT: [s.serves_fewer_than for s in catalog.saturation]})


def pair_saturation_frame(catalog: Catalog, limit: int | None = None) -> pd.DataFrame:
    """n_sat(min(BW(v), BW(w))) for the GPU types (rows) and CPU types (columns), the first
    ``limit`` of each (all without a limit); vectorised over every pair."""
    gpus, cpus = catalog.gpu_types[:limit], catalog.cpu_types[:limit]
    gpu_bw = np.array([v.network_gbps for v in gpus], dtype=np.float64)
    cpu_bw = np.array([w.network_gbps for w in cpus], dtype=np.float64)
    nsat = saturation_limits(catalog.saturation, np.minimum(gpu_bw[:, None], cpu_bw[None, :]))
    return pd.DataFrame(nsat.reshape(len(gpus), len(cpus)), columns=[w.name for w in cpus],
                        index=pd.Index([v.name for v in gpus], name=Col.GPU))


# ----------------------------------------------------------------------------- live prices

DIFF_COLUMNS = (Col.TYPE, Col.KIND, Col.STATUS, Col.NOTE, Col.OD_OLD, Col.OD_NEW, Col.OD_CHANGE,
                Col.SPOT_OLD, Col.SPOT_NEW, Col.SPOT_CHANGE)


def diff_frame(changes: Sequence[PriceChange]) -> pd.DataFrame:
    """``deepvm_core.catalog.diff.price_diff``'s rows as a frame (:data:`DIFF_COLUMNS`; absent
    prices and undefined changes are NaN)."""
    def nan(value: float | None) -> float:
        return np.nan if value is None else value

    rows = [{
        Col.TYPE: c.name, Col.KIND: c.kind.upper(), Col.STATUS: c.status,
        Col.OD_OLD: c.on_demand_old, Col.OD_NEW: c.on_demand_new,
        Col.OD_CHANGE: nan(c.on_demand_change_pct),
        Col.SPOT_OLD: c.spot_old, Col.SPOT_NEW: c.spot_new,
        Col.SPOT_CHANGE: nan(c.spot_change_pct), Col.NOTE: c.note,
    } for c in changes]
    frame = pd.DataFrame(rows, columns=list(DIFF_COLUMNS))
    for column in (Col.OD_OLD, Col.OD_NEW, Col.SPOT_OLD, Col.SPOT_NEW):
        frame[column] = frame[column].astype(float)
    return frame


REGION_COLUMNS = (Col.RANK, Col.REGION, Col.CATALOG, Col.CONFIG, Col.JOB_HOURS, Col.JOB_COST,
                  Col.JOB_RATE, Col.PRICE, Col.PW_SHARE, Col.PERF, Col.OBJECTIVE, Col.FLOPP,
                  Col.NOTE)
_REGION_NUMBERS = (Col.RANK, Col.JOB_HOURS, Col.JOB_COST, Col.JOB_RATE, Col.PRICE, Col.PW_SHARE,
                   Col.PERF, Col.OBJECTIVE, Col.FLOPP)


def region_frame(rows: Sequence[RegionComparison], pw: float,
                 objective: Objective) -> pd.DataFrame:
    """One row per region (``deepvm_core.recommend.regions.rank_regions`` order): its best
    configuration and the job's expected hours, cost and epochs per hour there (empty without
    a job estimate), or, when nothing is feasible, empty numbers and the reason."""
    out = []
    rank = 0
    for r in rows:
        row: dict[str, object] = {Col.REGION: r.region, Col.CATALOG: r.catalog_name}
        if r.best is None:
            row.update({Col.RANK: np.nan, Col.CONFIG: "nothing feasible",
                        Col.NOTE: r.explanation or "nothing is feasible"})
        else:
            rank += 1
            c = configuration_row(r.best, pw, objective)
            row.update({Col.RANK: rank, Col.CONFIG: r.best.describe().rsplit(",", 1)[0],
                        Col.NOTE: ""})
            row.update({k: c[k] for k in (Col.PRICE, Col.PW_SHARE, Col.PERF, Col.OBJECTIVE,
                                          Col.FLOPP)})
            row.update({Col.JOB_HOURS: r.job_hours, Col.JOB_COST: r.job_cost_usd,
                        Col.JOB_RATE: r.job_epochs_per_hour})
        out.append(row)
    frame = pd.DataFrame(out, columns=list(REGION_COLUMNS))
    for column in _REGION_NUMBERS:
        frame[column] = frame[column].astype(float)
    return frame


def sweep_frame(result: SweepResult) -> pd.DataFrame:
    """The sweep's rows (one per PW and policy), as in the CSV download."""
    return pd.DataFrame(result.rows())
