"""The ledger's file (issue 28): one append-only JSON-lines file per watched plan in the user's
folder (``<home>/ledgers/PLAN_ID.jsonl``, :func:`ledger_path`), one record a line
(:mod:`~deepvm_core.cloud.fleet.ledger`, ``kind`` first), each appended and flushed to disk; a
last line cut short by a crash is ignored when it is read back.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any, Final

from deepvm_core.cloud.fleet.ledger import (
    Action,
    Done,
    Ledger,
    Observation,
    Record,
    Seen,
    WatchSetup,
)
from deepvm_core.errors import DeepVMError
from deepvm_core.home import data_home

#: The ledgers' folder under the per-user folder.
LEDGER_FOLDER: Final = "ledgers"


def ledger_dir() -> Path:
    """``<home>/ledgers`` (:func:`deepvm_core.home.data_home`)."""
    return data_home() / LEDGER_FOLDER


def ledger_path(plan_id: str) -> Path:
    """The ledger of plan ``plan_id``."""
    return ledger_dir() / f"{plan_id}.jsonl"


def _kind(record: Record) -> str:
    return {WatchSetup: "start", Observation: "observe", Action: "act",
            Done: "done"}[type(record)]


def record_to_dict(record: Record) -> dict[str, Any]:
    """A record as its JSON object (``kind`` first)."""
    return {"kind": _kind(record), **asdict(record)}


def append_record(path: Path, record: Record) -> None:
    """Append ``record`` to the ledger at ``path`` (created with its folder), flushed to
    disk."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record_to_dict(record), allow_nan=False, separators=(",", ":"))
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


def record_from_dict(obj: Mapping[str, Any]) -> Record:
    """The record of one JSON object (raises ``KeyError``/``TypeError``/``ValueError`` when it
    is not one)."""
    data = {k: v for k, v in obj.items() if k != "kind"}
    kind = obj["kind"]
    if kind == "start":
        for key in ("pools", "spot_usd_per_hour"):
            data[key] = tuple(data[key])
        if data.get("on_demand_part") is not None:
            data["on_demand_part"] = tuple(data["on_demand_part"])
        return WatchSetup(**data)
    if kind == "observe":
        data["instances"] = tuple(Seen(**i) for i in data["instances"])
        data["pools_up"] = tuple(data["pools_up"])
        return Observation(**data)
    if kind == "act":
        data["instance_ids"] = tuple(data.get("instance_ids") or ())
        return Action(**data)
    if kind == "done":
        return Done(**data)
    raise ValueError(f"unknown kind {kind!r}")


def read_ledger(path: Path) -> Ledger:
    """The ledger at ``path``.

    Raises:
        DeepVMError: no such file, a line that is not a record (named by its number), or no
            ``start`` record first.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DeepVMError(f"no ledger at {path}: the plan was never watched here "
                          "(deepvm watch PLAN.json --yes writes it)") from None
    except OSError as exc:
        raise DeepVMError(f"{path}: cannot read the ledger: {exc.strerror}") from None
    records: list[Record] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(record_from_dict(json.loads(line)))
        except (ValueError, KeyError, TypeError) as exc:
            if number == len(text.splitlines()) and not text.endswith("\n"):
                break  # a last line cut short by a crash: ignored
            raise DeepVMError(f"{path}, line {number}: not a ledger record ({exc})") from None
    if not records or not isinstance(records[0], WatchSetup):
        raise DeepVMError(f"{path}: a ledger begins with a 'start' record")
    rest = tuple(r for r in records[1:] if not isinstance(r, WatchSetup))
    return Ledger(records[0], rest)


def ledger_paths() -> list[Path]:
    """Every ledger in the user's folder, by name."""
    folder = ledger_dir()
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
