"""Library exceptions of :mod:`deepvm_core`.

Every error a user can cause derives from :class:`DeepVMError`, so a front end (the CLI, the
dashboard) can catch that one class and show its message instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: Exit code of ``deepvm`` for every error a user can cause (bad argument, missing or invalid
#: file, infeasible input).
EXIT_USAGE = 2
#: A problem's value is shown in at most this many characters (a file may hold megabytes in one
#: field).
VALUE_DISPLAY_CHARS = 120


class DeepVMError(Exception):
    """Base class of every error :mod:`deepvm_core` raises on purpose."""


@dataclass(frozen=True)
class Problem:
    """One problem found in a catalog.

    Attributes:
        where: the row, e.g. ``gpu_types[1] (g4dn.xlarge)`` or ``network_saturation[0]``.
        field: the field at fault, e.g. ``spot_usd_per_hour``.
        value: the offending value, as the user wrote it.
        message: what is wrong, in a sentence.
    """

    where: str
    field: str
    value: object
    message: str

    def __str__(self) -> str:
        shown = repr(self.value)
        if len(shown) > VALUE_DISPLAY_CHARS:
            shown = f"{shown[:VALUE_DISPLAY_CHARS]}... ({len(shown):,} characters)"
        return f"{self.where}: {self.field} = {shown}: {self.message}"


class CatalogError(DeepVMError):
    """A catalog is invalid. ``problems`` lists every problem found, not only the first."""

    def __init__(self, problems: list[Problem] | tuple[Problem, ...],
                 source: str = "catalog") -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        self.source = source
        count = len(self.problems)
        #: ``<source> is invalid (N problems)``: the first line of the message.
        self.headline = f"{source} is invalid ({count} problem{'s' if count != 1 else ''})"
        super().__init__(self.headline + ":\n"
                         + "\n".join(f"  - {p}" for p in self.problems))

    def one_line(self) -> str:
        """The headline and the first problem on one line (and how many more there are)."""
        if not self.problems:
            return self.headline
        more = len(self.problems) - 1
        return f"{self.headline}: {self.problems[0]}" + (f" (+{more} more)" if more else "")


class CatalogNotFoundError(DeepVMError, LookupError):
    """No catalog file at a path and no bundled catalog of that name.

    Attributes:
        name: the path or name asked for.
        suggestions: close bundled names (may be empty).
        bundled: every bundled catalog's name.
    """

    def __init__(self, name: str, suggestions: tuple[str, ...] = (),
                 bundled: tuple[str, ...] = ()) -> None:
        self.name = name
        self.suggestions = suggestions
        self.bundled = bundled
        hint = f" Did you mean {', '.join(suggestions)}?" if suggestions else ""
        if bundled:
            hint += f" Bundled catalogs: {', '.join(bundled)}."
        super().__init__(f"catalog {name!r} not found: no such file or bundled name.{hint}")


class InstanceNotFoundError(DeepVMError, LookupError):
    """A catalog has no instance type of that name.

    Attributes:
        name: the instance type asked for.
        catalog_name: the catalog searched.
        suggestions: close instance type names (may be empty).
    """

    def __init__(self, name: str, catalog_name: str, suggestions: tuple[str, ...] = ()) -> None:
        self.name = name
        self.catalog_name = catalog_name
        self.suggestions = suggestions
        hint = f" Did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"no instance type {name!r} in catalog {catalog_name!r}.{hint}")


class FetchError(DeepVMError):
    """A fetch from a provider failed; nothing was written.

    Attributes:
        operation: the operation that failed (``DescribeSpotPriceHistory``), or ``None``.
        region: the catalog region it failed for, or ``None``.
        kind: ``credentials``, ``unreachable``, ``timeout``, ``throttled``, ``access_denied``,
            ``server_error``, ``malformed``, ``no_offers``, ``invalid``, ``write`` or ``other``.
    """

    def __init__(self, message: str, *, operation: str | None = None,
                 region: str | None = None, kind: str = "other") -> None:
        super().__init__(message)
        self.operation = operation
        self.region = region
        self.kind = kind


class InputError(DeepVMError, ValueError):
    """A scenario input (PW, checkpoint size, buffer, options) is out of range."""

    def __init__(self, field: str, value: object, message: str) -> None:
        self.field = field
        self.value = value
        super().__init__(f"{field} = {value!r}: {message}")


class SolverError(DeepVMError):
    """The integer-programming solver did not prove an optimum (status other than optimal)."""


class SolverTimeoutError(SolverError):
    """The integer program did not prove an optimum within its time budget, or was not run
    because its program is larger than it solves within the budget.

    Attributes:
        time_limit_s: the budget, seconds.
        started: True when CBC ran and hit the budget; False when the program was not built
            (too large for the budget).
        binaries: the program's GPU-row binaries.
        constraints: its saturation constraints (one per Tiering GPU type and memory-node
            type).
    """

    def __init__(self, message: str, *, time_limit_s: float, started: bool,
                 binaries: int, constraints: int = 0) -> None:
        super().__init__(message)
        self.time_limit_s = time_limit_s
        self.started = started
        self.binaries = binaries
        self.constraints = constraints


# --- The job model's errors (workload, measurements, calibration) ---
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
    """A :class:`~deepvm_core.workload.workload.Workload` is invalid, alone or against a catalog."""

    what = "workload"


class MeasurementsError(_ProblemsError):
    """A measurements CSV (``instance,nodes,epoch_seconds``) is invalid; problems name lines."""

    what = "measurements"


class CalibrationError(JobModelError):
    """A scaling fit failed or was refused; the message names the instance type and why."""

    def __init__(self, instance: str, message: str):
        self.instance = instance
        super().__init__(f"{instance}: {message}")
