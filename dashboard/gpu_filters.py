"""The sidebar's GPU filters (issue 24): models, least GB per GPU, GPUs per VM.

They are the scenario's :class:`~deepvm_core.catalog.gpu_filter.GpuFilter`
(:func:`dashboard.state.gpu_filter`), so every page answers within them; they are in the URL
(``gpus``, ``min_gpu_gb``, ``gpus_per_vm``: :mod:`dashboard.url`) whenever set, and each card
states them in the core's sentence (:func:`dashboard.widgets.gpu_filter_line`).

The models offered are the active catalog's first, then the other training chips of
``data/accelerators.csv`` (a model the catalog lacks leaves nothing, and the answer says so),
then any chosen one (a link's); the GPU counts offered are the catalog's, plus a link's.
"""

from __future__ import annotations

import streamlit as st

from dashboard import compute, glossary, keys, typed_inputs, url
from deepvm_core.catalog import Catalog
from deepvm_core.catalog.gpu_filter import MAX_GPU_MEMORY_GB
from deepvm_core.hardware.accelerators import bundled_accelerators

#: The GPUs-per-VM choice that means any count.
ANY_COUNT = url.DEFAULTS["gpus_per_vm"]


def model_options(catalog_models: tuple[str, ...], chosen: list[str]) -> list[str]:
    """The models the multiselect offers: the catalog's, the other training chips, the chosen
    ones (module docstring)."""
    training = [name for name, acc in bundled_accelerators().items() if acc.trains]
    return list(dict.fromkeys([*catalog_models, *training, *chosen]))


def count_options(catalog_counts: tuple[int, ...], chosen: int) -> list[int]:
    """The GPUs-per-VM choices: any, the catalog's counts, the chosen one."""
    return sorted({ANY_COUNT, *catalog_counts, chosen})


def sidebar(catalog: Catalog | None) -> None:
    """The three filters, in an expander of the sidebar (open while one is set)."""
    models, counts = compute.gpu_choices(catalog.sha256, catalog) if catalog else ((), ())
    chosen = keys.GPU_MODELS.get()
    active = bool(chosen) or bool(keys.MIN_GPU_GB.get()) or keys.GPUS_PER_VM.get() != ANY_COUNT
    with st.expander("GPU filters", expanded=active, icon=":material/filter_alt:"):
        st.multiselect("GPU models", model_options(models, chosen), key=keys.GPU_MODELS.name,
                       persist_state=keys.PERSIST, placeholder="Any model",
                       help=glossary.GLOSSARY["GPU filters"])
        typed_inputs.number(st.container(), "Least GB per GPU (0: any)", keys.MIN_GPU_GB, 0.0,
                            MAX_GPU_MEMORY_GB, unit=" GB", step=8.0, format="%.1f",
                            help="Only GPUs with at least this much memory each, GB (the "
                                 "datasheet's figure: 80 for an H100). The CLI's "
                                 "--min-gpu-memory-gb.")
        st.selectbox("GPUs per VM", count_options(counts, keys.GPUS_PER_VM.get()),
                     key=keys.GPUS_PER_VM.name, persist_state=keys.PERSIST,
                     format_func=lambda n: "Any" if n == ANY_COUNT else str(n),
                     help="Only VMs with exactly this many GPUs. The CLI's --gpus-per-vm.")

