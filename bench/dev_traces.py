"""The development traces the trace benchmarks read, one home: ``$DEEPVM_DEV_TRACES``, default
the shared folder, by path (never shipped)."""

from __future__ import annotations

import os
from pathlib import Path

TRACES = Path(os.environ.get("DEEPVM_DEV_TRACES", "/work/shared/reference/data/spot-traces"))


def trace_files() -> list[Path]:
    """Every development trace file (``<market>/<name>.json``), sorted; empty, after saying so
    on stdout, when there is none."""
    files = sorted(TRACES.glob("*/*.json"))
    if not files:
        print(f"no development traces under {TRACES}; set DEEPVM_DEV_TRACES")
    return files
