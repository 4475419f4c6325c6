"""The catalog's rules on numbers and sizes: what each numeric field must be (:data:`RULES`,
by its name in our file format) and how many rows a catalog holds (:data:`ROW_LIMITS`).

The row types check them when they are built (:mod:`deepvm_core.catalog.types`), and loading a
file checks them on the raw JSON first (:mod:`deepvm_core.catalog.validation`), so that every
problem of every row is reported at once; the rules that span rows are
:func:`deepvm_core.catalog.catalog.catalog_problems`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from deepvm_core.errors import Problem


@dataclass(frozen=True)
class NumberRule:
    """What a numeric catalog field must be: finite, within bounds, maybe whole.

    Attributes:
        low: the lower bound, or ``None`` for none.
        low_open: True when ``low`` itself is not allowed (``> low`` rather than ``>= low``).
        high: the inclusive upper bound, or ``None`` for none.
        integer: True when the value must be a whole number.
        meaning: what the number is, quoted in the message of a range problem.
    """

    low: float | None = None
    low_open: bool = False
    high: float | None = None
    integer: bool = False
    meaning: str = ""

    def problem(self, value: float) -> str | None:
        """The message for a finite ``value`` that breaks this rule, or ``None``."""
        below = self.low is not None and (value <= self.low if self.low_open else value < self.low)
        above = self.high is not None and value > self.high
        if below or above:
            return self._range_text()
        if self.integer and value != int(value):
            return "must be a whole number"
        return None

    def _range_text(self) -> str:
        if self.high is None and self.low == 0:
            return "must be greater than 0" if self.low_open else "must not be negative"
        low = "(-inf" if self.low is None else f"{'(' if self.low_open else '['}{self.low:g}"
        text = f"must be in {low}, {self.high:g}]" if self.high is not None else (
            f"must be {'greater than' if self.low_open else 'at least'} {self.low:g}")
        return f"{text} ({self.meaning})" if self.meaning else text



#: The most GPUs (chips) per VM a catalog accepts: 4x EC2's most, 16 (inf1.24xlarge,
#: trn1.32xlarge; ``data/instance-gpus.csv``).
MAX_GPUS_PER_VM = 64

POSITIVE = NumberRule(low=0, low_open=True)
POSITIVE_WHOLE = NumberRule(low=0, low_open=True, integer=True)
NONNEGATIVE_WHOLE = NumberRule(low=0, integer=True)

#: The rule of each numeric field, by its name in our file format (``data/README.md``).
RULES: Mapping[str, NumberRule] = {
    "on_demand_usd_per_hour": POSITIVE,
    "spot_usd_per_hour": POSITIVE,
    "vcpus": POSITIVE_WHOLE,
    "memory_gib": POSITIVE,
    "network_gbps": POSITIVE,
    "eflops": POSITIVE,
    "spot_by_zone_usd_per_hour": POSITIVE,
    "scaling.a": NumberRule(low=0, low_open=True, high=10, meaning="steepness per node"),
    "scaling.b": NumberRule(low=0, high=100_000, meaning="inflection point, nodes"),
    "scaling.c": NumberRule(low=0, low_open=True, high=1_000_000, meaning="asymptotic speedup"),
    "on_demand_vcpus": NONNEGATIVE_WHOLE,
    "spot_vcpus": NONNEGATIVE_WHOLE,
    "bandwidth_gbps": POSITIVE,
    "max_gpu_vms": POSITIVE_WHOLE,
    "interruption_bucket": NumberRule(low=0, high=4, integer=True,
                                      meaning="Spot Instance Advisor bucket index"),
    "gpu_count": NumberRule(low=0, low_open=True, high=MAX_GPUS_PER_VM, integer=True,
                            meaning="GPUs per VM"),
    "gpu_memory_gb": POSITIVE,
}


def number_problem(value: object, rule: NumberRule, *, integer_type: bool = False) -> str | None:
    """Why ``value`` (a built object's field) breaks ``rule``, or ``None`` when it does not.

    ``integer_type`` requires a Python ``int`` (not only a whole float), as for ``vcpus``.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "must be a whole number (int)" if integer_type else "must be a number"
    if not math.isfinite(value):
        return "must be a finite number (not NaN or infinity)"
    broken = rule.problem(float(value))
    if broken is None and integer_type and not isinstance(value, int):
        return "must be a whole number (int)"
    return broken



#: The most GPU types a catalog holds (``data/README.md``, "Limits"). A real region offers well
#: under 1,000 instance types in all; at this limit a recommendation stays interactive.
MAX_GPU_TYPES = 1_000
#: The most CPU types (memory-node candidates) a catalog holds.
MAX_CPU_TYPES = 1_000
#: The row limits by list name, with the kind of type they count.
ROW_LIMITS: Mapping[str, tuple[int, str]] = {
    "gpu_types": (MAX_GPU_TYPES, "GPU types"), "cpu_types": (MAX_CPU_TYPES, "CPU types")}


def row_count_problem(kind: str, count: int) -> Problem | None:
    """The problem of a catalog with ``count`` rows in ``kind`` (``gpu_types`` or
    ``cpu_types``) beyond :data:`ROW_LIMITS`, or ``None``."""
    limit, label = ROW_LIMITS[kind]
    if count <= limit:
        return None
    return Problem("(catalog)", kind, count,
                   f"{count:,} {label}; a catalog holds at most {limit:,} {label} "
                   "(data/README.md, Limits)")

