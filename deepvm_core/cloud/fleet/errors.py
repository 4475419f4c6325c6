"""Exceptions of :mod:`deepvm_core.cloud.fleet`, and the exit code the CLI gives each.

* :class:`FleetInputError` (exit 2): the user can fix it, and nothing was launched: a bad
  argument or export, an unknown launch template or subnet, no credentials, an AWS call that
  failed before any instance was launched.
* :class:`LaunchFailed` (exit 1): a launch step fell short or failed after it began;
  everything the plan launched was terminated (:attr:`LaunchFailed.rollback`). Exit 3 instead
  when the rollback could not confirm every instance terminated (the message lists them), and
  130 when the user pressed Ctrl-C (after the rollback).
* :class:`TeardownIncomplete` (exit 1): ``teardown`` could not confirm every instance
  shutting-down or terminated in time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from deepvm_core.errors import DeepVMError

EXIT_OK = 0
EXIT_LAUNCH_FAILED = 1
# 2 is deepvm_core.errors.EXIT_USAGE, as for every command.
EXIT_ROLLBACK_INCOMPLETE = 3
EXIT_INTERRUPTED = 130


class FleetInputError(DeepVMError):
    """A problem the user can fix; nothing was launched."""


class AwsCallError(DeepVMError):
    """An EC2 call failed (one line, credentials redacted).

    Attributes:
        operation: the EC2 operation (``CreateFleet``).
        code: the AWS error code (``InsufficientInstanceCapacity``) or a kind of failure
            (``NoCredentials``, ``EndpointUnreachable``, ``Timeout``).
    """

    def __init__(self, message: str, *, operation: str, code: str) -> None:
        super().__init__(message)
        self.operation = operation
        self.code = code


@dataclass
class RollbackReport:
    """What a rollback did.

    Attributes:
        deleted_fleets: fleets deleted with their instances.
        terminated: instances that were terminated (asked to, and confirmed shutting-down or
            terminated).
        still_running: instances not confirmed shutting-down or terminated.
        errors: calls that failed during the rollback and leave instances unaccounted for
            (one line each).
        notes: what went wrong without leaving anything running (a fleet that could not be
            deleted although its instances were terminated).
    """

    deleted_fleets: list[str] = field(default_factory=list)
    terminated: list[str] = field(default_factory=list)
    still_running: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """True when nothing of the plan is left running."""
        return not self.still_running and not self.errors

    def describe(self) -> str:
        """One sentence for the user."""
        if self.complete:
            n = len(self.terminated)
            return (f"rolled back: {n} instance{'s' if n != 1 else ''} terminated, nothing is "
                    "left running")
        left = ", ".join(self.still_running) or "unknown (a call failed)"
        problems = f"; {'; '.join(self.errors)}" if self.errors else ""
        return (f"ROLLBACK INCOMPLETE: instances possibly still running: {left}{problems}")


class LaunchFailed(DeepVMError):
    """A launch failed after it began; :attr:`rollback` says what was cleaned up."""

    def __init__(self, reason: str, rollback: RollbackReport, *, interrupted: bool = False):
        super().__init__(f"{reason.rstrip('.')}; {rollback.describe()}")
        self.reason = reason
        self.rollback = rollback
        self.interrupted = interrupted

    @property
    def exit_code(self) -> int:
        """1 after a complete rollback, 3 when something may still run, 130 on Ctrl-C."""
        if not self.rollback.complete:
            return EXIT_ROLLBACK_INCOMPLETE
        return EXIT_INTERRUPTED if self.interrupted else EXIT_LAUNCH_FAILED



class TeardownIncomplete(DeepVMError):
    """Some instances were not confirmed shutting-down or terminated in time."""

    def __init__(self, message: str, still_running: Sequence[str]) -> None:
        super().__init__(message)
        self.still_running = tuple(still_running)
