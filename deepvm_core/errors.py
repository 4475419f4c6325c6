"""Library exceptions of :mod:`deepvm_core`.

Every error a user can cause derives from :class:`DeepVMError`, so a front end (the CLI, the
dashboard) can catch that one class and show its message instead of a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass


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
        return f"{self.where}: {self.field} = {self.value!r}: {self.message}"


class CatalogError(DeepVMError):
    """A catalog is invalid. ``problems`` lists every problem found, not only the first."""

    def __init__(self, problems: list[Problem] | tuple[Problem, ...], source: str = "catalog"):
        self.problems: tuple[Problem, ...] = tuple(problems)
        self.source = source
        count = len(self.problems)
        head = f"{source} is invalid ({count} problem{'s' if count != 1 else ''})"
        super().__init__(head + ":\n" + "\n".join(f"  - {p}" for p in self.problems))


class InputError(DeepVMError, ValueError):
    """A scenario input (PW, checkpoint size, buffer, options) is out of range."""

    def __init__(self, field: str, value: object, message: str):
        self.field = field
        self.value = value
        super().__init__(f"{field} = {value!r}: {message}")


class SolverError(DeepVMError):
    """The integer-programming solver did not prove an optimum (status other than optimal)."""
