"""One ``deepvm watch`` per plan (issue 28): a lock file beside the plan's ledger holds the
watching process's id; a second watch of the plan is refused while that process lives, and a
lock left by a dead process is taken over (so a killed watch can be restarted)."""

from __future__ import annotations

import os
from pathlib import Path

from deepvm_core.cloud.fleet.ledger_file import ledger_path
from deepvm_core.errors import DeepVMError

__all__ = ["acquire_lock", "lock_path", "release_lock"]


def lock_path(plan_id: str) -> Path:
    """The lock of a watched plan, beside its ledger."""
    return ledger_path(plan_id).with_suffix(".lock")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def acquire_lock(plan_id: str) -> Path:
    """Take the plan's lock (its file holds this process id); a lock held by a live process is
    refused, one left by a dead process is taken over."""
    path = lock_path(plan_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                pid = int(path.read_text(encoding="utf-8").strip() or "0")
            except (OSError, ValueError):
                pid = 0
            if pid > 0 and _alive(pid):
                raise DeepVMError(f"plan {plan_id} is already watched by process {pid} (lock "
                                  f"{path}); stop it first") from None
            path.unlink(missing_ok=True)
            continue
        with os.fdopen(fd, "w") as f:
            f.write(f"{os.getpid()}\n")
        return path
    raise DeepVMError(f"the lock {path} could not be taken")


def release_lock(path: Path) -> None:
    """Remove the lock if this process holds it."""
    try:
        if int(path.read_text(encoding="utf-8").strip()) == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass
