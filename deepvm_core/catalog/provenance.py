"""Where a GPU row's eFLOPS and scaling come from after an edit (``eflops_source``,
``scaling_source``).

An edited row keeps its base row's source while its value is unchanged; a changed value is the
user's: ``edited``. A row the base does not have is ``edited`` when it has a value (the user
typed it). The catalog editor calls :func:`carry_sources` on its rows before validation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from deepvm_core.catalog.catalog import Catalog
from deepvm_core.catalog.types import MEASURED, GpuType

#: The source of a value the user typed or changed.
EDITED = "edited"


def _scaling_dict(g: GpuType) -> dict[str, float] | None:
    s = g.scaling
    return None if s is None else {"a": s.a, "b": s.b, "c": s.c}


def carry_sources(base: Catalog, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``gpu_types`` rows (our file format) with ``eflops_source`` and ``scaling_source`` set
    against ``base``'s rows of the same name (module docstring); the rows are copied, never
    changed. A source of ``measured`` is left out, as in our files."""
    by_name = {g.name: g for g in base.gpu_types}
    out = []
    for row in rows:
        new = dict(row)
        before = by_name.get(str(row.get("name")))
        for value_key, source_key, old in (
                ("eflops", "eflops_source", None if before is None else before.eflops),
                ("scaling", "scaling_source",
                 None if before is None else _scaling_dict(before))):
            if before is not None and new.get(value_key) == old:
                source = getattr(before, source_key)
            elif new.get(value_key) is None:
                source = MEASURED  # nothing to attribute
            else:
                source = EDITED
            if source == MEASURED:
                new.pop(source_key, None)
            else:
                new[source_key] = source
        out.append(new)
    return out
