"""Exceptions of the job model (:mod:`deepvm_core.job`).

All derive from :class:`~deepvm_core.errors.DeepVMError`, so a front end that catches that one
class shows their messages. Errors about user input list every problem found (row or field,
value, sentence), not only the first.
"""

from __future__ import annotations

from collections.abc import Sequence

from deepvm_core.errors import DeepVMError, Problem


class JobModelError(DeepVMError):
    """Base class of the job model's errors (e.g. a GPU type without any epoch time)."""


class _ProblemsError(JobModelError):
    """An error that lists problems (:class:`~deepvm_core.errors.Problem`)."""

    what = "input"

    def __init__(self, problems: Sequence[Problem], source: str | None = None):
        self.problems: tuple[Problem, ...] = tuple(problems)
        self.source = source if source is not None else self.what
        count = len(self.problems)
        head = f"{self.source} is invalid ({count} problem{'s' if count != 1 else ''})"
        super().__init__(head + ":\n" + "\n".join(f"  - {p}" for p in self.problems))


class WorkloadError(_ProblemsError):
    """A :class:`~deepvm_core.job.workload.Workload` is invalid, alone or against a catalog."""

    what = "workload"


class MeasurementsError(_ProblemsError):
    """A measurements CSV (``instance,nodes,epoch_seconds``) is invalid; problems name lines."""

    what = "measurements"


class CalibrationError(JobModelError):
    """A scaling fit failed or was refused; the message names the instance type and why."""

    def __init__(self, instance: str, message: str):
        self.instance = instance
        super().__init__(f"{instance}: {message}")
