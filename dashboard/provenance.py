"""Where a page's numbers come from, in words: how old a catalog's prices are, and whether a GPU
type's eFLOPS and scaling curve were measured, estimated or edited.

The rules are the core's (:mod:`deepvm_core.catalog.age`, ``GpuType.eflops_source`` and
``scaling_source``); this module only words them, against today's date.
"""

from __future__ import annotations

from datetime import date

from dashboard.plain_view import words
from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.catalog.age import describe_age
from deepvm_core.catalog.provenance import EDITED
from deepvm_core.catalog.types import MEASURED

#: The short word per kind of source (the part of a source before its first ``:``).
SOURCE_WORDS = {MEASURED: "measured", "estimated": "estimated", "prior": "estimated",
                EDITED: "edited"}
SOURCE_NOTES = {
    MEASURED: "measured (the DeepVM artifact's measurements)",
    EDITED: "edited by you in the catalog editor",
}


def prices_age(catalog: Catalog, today: date | None = None) -> str:
    """``prices of 2025-H1, 17 months old`` for ``catalog`` (today's date by default)."""
    return describe_age(catalog.prices_date, today or date.today())


def source_word(source: str) -> str:
    """``measured``, ``estimated`` or ``edited`` for an ``eflops_source``/``scaling_source``
    (``estimated: k C^0.34 B^0.66 (4 x T4)`` and ``prior: ...`` are estimates)."""
    kind = source.split(":", 1)[0].strip()
    return SOURCE_WORDS.get(kind, kind or MEASURED)


def source_note(source: str) -> str:
    """The source in full, for a tooltip: the estimate's model, or what measured/edited
    mean."""
    return SOURCE_NOTES.get(source.strip(), source.strip())


def eflops_source(gpu: GpuType) -> str:
    """``estimated``/``measured``/``edited``: the word for ``gpu``'s eFLOPS."""
    return source_word(gpu.eflops_source)


def scaling_source(gpu: GpuType) -> str:
    """The word for ``gpu``'s scaling curve (``measured`` when it has none: K(n) = 1 is then
    not an estimate but the model's rule)."""
    return source_word(gpu.scaling_source)


def gpu_sources(gpu: GpuType) -> tuple[str, str]:
    """A card's line on ``gpu``'s numbers and its tooltip: ``g5g.xlarge: eFLOPS 376,
    estimated · scaling curve estimated`` and the sources in full (the estimate's model)."""
    eflops = "none" if gpu.eflops is None else f"{gpu.eflops:,.0f}"
    text = f"{gpu.name}: eFLOPS {eflops}, {eflops_source(gpu)}"
    notes = [f"eFLOPS: {source_note(gpu.eflops_source)}."]
    if gpu.scaling is not None:
        text += f" · scaling curve {scaling_source(gpu)}"
        notes.append(f"Scaling curve (a, b, c): {source_note(gpu.scaling_source)}.")
    else:
        notes.append("No scaling curve: K(n) = 1.")
    notes.append("The Method page shows how far the estimates are off on measured types.")
    return text, " ".join(notes)


def gpu_sources_caption(gpu: GpuType) -> None:
    """:func:`gpu_sources` as a caption with its tooltip."""
    import streamlit as st

    text, note = gpu_sources(gpu)
    st.caption(words(text), help=note)


def gpu_of(catalog: Catalog, name: str) -> GpuType | None:
    """The GPU type ``name`` of ``catalog`` (``None`` when it has none of that name)."""
    return next((g for g in catalog.gpu_types if g.name == name), None)
