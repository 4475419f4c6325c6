"""The top-k as a person reads it (issue 18): one row per distinct cluster (architecture, GPU
type, GPU VMs), its memory-node variants named in that row, its speed as a multiple of one
reference VM (pure, pandas)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from dashboard.columns import Col
from dashboard.formatting import TIMES
from dashboard.result_frames import CONFIG_COLUMNS, configuration_row
from deepvm_core.model import Configuration, Objective
from deepvm_core.recommend.distinct import DistinctCluster

#: The speed column: "2.12 × one A10G".
SPEED = "Training speed"


def single(config: Configuration) -> DistinctCluster:
    """``config`` as a cluster without variants."""
    return DistinctCluster(config, (config,))


def memory_nodes(cluster: DistinctCluster) -> str:
    """``1 × c5.xlarge (or m6i.xlarge, c5n.xlarge)``, or ``none`` (Single Anchor)."""
    config = cluster.configuration
    if config.cpu is None:
        return "none"
    others = cluster.memory_node_types[1:]
    tail = f" (or {', '.join(others)})" if others else ""
    return f"{config.memory_nodes} × {config.cpu}{tail}"


def distinct_frame(clusters: Sequence[DistinctCluster], pw: float,
                   objective: Objective) -> pd.DataFrame:
    """One row per distinct cluster, best first: its best variant's numbers, the variants'
    memory-node types, and its training speed."""
    rows = []
    for rank, cluster in enumerate(clusters, 1):
        row = {Col.RANK: rank, **configuration_row(cluster.configuration, pw, objective)}
        row[Col.MEM_NODES] = memory_nodes(cluster)
        row[SPEED] = cluster.configuration.speed_text(TIMES) or "unknown"
        rows.append(row)
    columns = [Col.RANK, *CONFIG_COLUMNS[:CONFIG_COLUMNS.index(Col.PERF)], SPEED,
               *CONFIG_COLUMNS[CONFIG_COLUMNS.index(Col.PERF):]]
    return pd.DataFrame(rows, columns=columns)
