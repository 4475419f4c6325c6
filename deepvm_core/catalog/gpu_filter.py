"""Which GPU types a scenario may use: the filters a person expects, in SkyPilot's spirit
(``sky launch --gpus A100:8``; issue 24).

A :class:`GpuFilter` is part of the :class:`~deepvm_core.model.Scenario`: the candidate domain
(:func:`deepvm_core.search.candidates.build_domain`) keeps only the GPU types it admits, so
every solver, policy, sweep and plan built from the scenario sees the same types. Three
criteria, each optional, all of them applying together:

* ``accelerators``: the GPU (chip) models allowed, by the names of ``data/accelerators.csv``
  (SkyPilot's: ``A100``, ``A100-80GB``, ``H100``, ...), matched without regard to case; ``A100``
  is the 40 GB chip, as in SkyPilot (``A100-80GB`` is another model);
* ``min_gpu_memory_gb``: the least memory of one GPU, GB (10^9 bytes, the datasheet's figure);
* ``gpus_per_vm``: exactly this many GPUs per VM (SkyPilot's ``A100:8``).

A type whose model, count or memory is unknown (the simulated catalog's ``A``...) fails a
criterion on it. What a type has is the catalog row's own fields (schema version 3), else the
derivation of :mod:`deepvm_core.workload.gpu_hardware` (applied by
:mod:`deepvm_core.search.gpu_filter`).

:meth:`GpuFilter.describe` is the one sentence that states the filter (the CLI's tables, both
dashboard cards, the exports): ``Only A100 or H100 GPUs with at least 80 GB each, 8 per VM.``
Names a user typed are matched to the known ones by :func:`resolve_accelerators`, which
suggests close matches for a name it does not know.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from deepvm_core.errors import InputError

#: The largest ``gpus_per_vm`` accepted (AWS's largest today: 16 Trainium chips per VM).
MAX_GPUS_PER_VM: Final = 64
#: The largest ``min_gpu_memory_gb`` accepted, GB (H200: 141; B200: 180).
MAX_GPU_MEMORY_GB: Final = 10_000.0
#: The criteria by name, in the order :meth:`GpuFilter.failed` reports them; also the keys of
#: the filter in the exports (:func:`deepvm_core.io.export.gpu_filter_to_dict`).
CRITERIA: Final = ("accelerators", "min_gpu_memory_gb", "gpus_per_vm")


#: What a GPU type has, as a filter reads it: (model, GPUs per VM, GB per GPU), each ``None``
#: when unknown.
Identity = tuple[str | None, int | None, float | None]


def or_list(names: Iterable[str]) -> str:
    """``A100``, ``A100 or H100``, ``A100, H100 or H200``."""
    items = list(names)
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


@dataclass(frozen=True)
class GpuFilter:
    """The GPU types a scenario may use (module docstring). The default admits every type.

    Attributes:
        accelerators: GPU models allowed (``("A100", "H100")``), any case; ``()``: any model.
        min_gpu_memory_gb: least GB per GPU (> 0), or ``None``: any.
        gpus_per_vm: exactly this many GPUs per VM (1 to :data:`MAX_GPUS_PER_VM`), or
            ``None``: any.
    """

    accelerators: tuple[str, ...] = ()
    min_gpu_memory_gb: float | None = None
    gpus_per_vm: int | None = None

    def __post_init__(self) -> None:
        names: object = self.accelerators  # as given, whatever its type
        if not isinstance(names, tuple) or not all(
                isinstance(n, str) and n.strip() for n in names):
            raise InputError("gpus", names, "must be a tuple of GPU model names (non-empty "
                             "texts), () for any")
        memory: object = self.min_gpu_memory_gb
        if memory is not None and (
                isinstance(memory, bool) or not isinstance(memory, int | float)
                or not math.isfinite(memory) or not 0 < memory <= MAX_GPU_MEMORY_GB):
            raise InputError("min_gpu_memory_gb", memory,
                             f"must be a number of GB greater than 0 and at most "
                             f"{MAX_GPU_MEMORY_GB:g}, or None for any")
        count: object = self.gpus_per_vm
        if count is not None and (isinstance(count, bool) or not isinstance(count, int)
                                  or not 1 <= count <= MAX_GPUS_PER_VM):
            raise InputError("gpus_per_vm", count,
                             f"must be a whole number from 1 to {MAX_GPUS_PER_VM}, or None "
                             "for any")

    @property
    def active(self) -> bool:
        """True when a criterion is set (the filter may leave types out)."""
        return any(self.is_set(c) for c in CRITERIA)

    def is_set(self, criterion: str) -> bool:
        """True when ``criterion`` (a name of :data:`CRITERIA`) is set."""
        if criterion == "accelerators":
            return bool(self.accelerators)
        return getattr(self, criterion) is not None

    def failed(self, accelerator: str | None, gpu_count: int | None,
               gpu_memory_gb: float | None) -> tuple[str, ...]:
        """The criteria (names of :data:`CRITERIA`) that a type with this model, GPUs per VM
        and GB per GPU fails (``None``: unknown, which fails a criterion on it); ``()`` when
        the filter admits it."""
        out: list[str] = []
        if self.accelerators and (accelerator is None or accelerator.strip().casefold() not in {
                a.strip().casefold() for a in self.accelerators}):
            out.append("accelerators")
        if self.min_gpu_memory_gb is not None and (
                gpu_memory_gb is None or gpu_memory_gb < self.min_gpu_memory_gb):
            out.append("min_gpu_memory_gb")
        if self.gpus_per_vm is not None and gpu_count != self.gpus_per_vm:
            out.append("gpus_per_vm")
        return tuple(out)

    def admits(self, accelerator: str | None, gpu_count: int | None,
               gpu_memory_gb: float | None) -> bool:
        """True when a type with this model, GPUs per VM and GB per GPU passes every
        criterion."""
        return not self.failed(accelerator, gpu_count, gpu_memory_gb)

    def clause(self) -> str:
        """The filter as a clause to embed in a sentence: ``only A100 or H100 GPUs with at
        least 80 GB each, 8 per VM``, ``only VMs with 8 GPUs``; ``any GPU`` when no criterion
        is set."""
        if not self.active:
            return "any GPU"
        if not self.accelerators and self.min_gpu_memory_gb is None:
            return f"only VMs with {self.criterion_text('gpus_per_vm').removesuffix(' per VM')}"
        what = f"{or_list(self.accelerators)} GPUs" if self.accelerators else "GPUs"
        memory = ("" if self.min_gpu_memory_gb is None
                  else f" with at least {self.min_gpu_memory_gb:g} GB each")
        count = "" if self.gpus_per_vm is None else f", {self.gpus_per_vm} per VM"
        return f"only {what}{memory}{count}"

    def describe(self) -> str:
        """The one sentence that states the filter (the cards, the CLI's tables, the exports):
        ``Only A100 or H100 GPUs with at least 80 GB each, 8 per VM.``; ``Any GPU.`` when no
        criterion is set (:meth:`clause`, as a sentence)."""
        text = self.clause()
        return f"{text[0].upper()}{text[1:]}."

    def criterion_text(self, criterion: str) -> str:
        """How one criterion reads alone: ``A100 or H100``, ``at least 80 GB per GPU``,
        ``8 GPUs per VM``."""
        if criterion == "accelerators":
            return f"{or_list(self.accelerators)}"
        if criterion == "min_gpu_memory_gb":
            return f"at least {self.min_gpu_memory_gb:g} GB per GPU"
        return f"{self.gpus_per_vm} GPU{'s' if self.gpus_per_vm != 1 else ''} per VM"


    def why_alone(self, criterion: str, catalog_name: str,
                  identities: Mapping[str, Identity]) -> str:
        """Why ``criterion`` alone leaves no GPU type of a catalog (``catalog_name``; its types'
        ``(model, GPUs per VM, GB per GPU)`` by name, ``identities``): what the catalog has
        instead, e.g. ``aws-us-west-2-2025-h1 has no A100 GPU type (its models: T4, A10G)``."""
        values = list(identities.values())
        text = self.criterion_text(criterion)
        if criterion == "accelerators":
            models = list(dict.fromkeys(v[0] for v in values if v[0] is not None))
            has = f"its models: {', '.join(models)}" if models else (
                "none of its GPU types has a known model")
            return f"{catalog_name} has no {text} GPU type ({has})"
        if criterion == "min_gpu_memory_gb":
            sized = [(v[2], name) for name, v in identities.items() if v[2] is not None]
            if not sized:
                return "no GPU type has a known memory per GPU"
            most, name = max(sized)
            return f"none has {text} (the most: {most:g} GB, {name})"
        counts = sorted({v[1] for v in values if v[1] is not None})
        has = (f"its VMs have {or_list(str(c) for c in counts)}" if counts
               else "no GPU type has a known GPU count")
        return f"none has {text} ({has})"


#: The filter that admits every GPU type (a scenario's default).
ANY_GPU: Final = GpuFilter()


def split_accelerators(text: str) -> tuple[str, ...]:
    """The names of a comma-separated list (``"A100, h100"`` -> ``("A100", "h100")``), blanks
    dropped.

    Raises:
        InputError: a name with a count (``A100:8``): the count is ``--gpus-per-vm``.
    """
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    for name in names:
        if ":" in name:
            model, _, count = name.partition(":")
            raise InputError("gpus", name, f"give the model alone ({model.strip()}) and the "
                             f"count as GPUs per VM ({count.strip()})")
    return names


def resolve_accelerators(names: Iterable[str], known: Iterable[str],
                         offered: Iterable[str] = ()) -> tuple[str, ...]:
    """``names`` as the known models spell them (``a100`` -> ``A100``), in order, each once.

    Args:
        known: every model name a filter may ask for.
        offered: the models to list in the message of an unknown name (the catalog's);
            ``()``: every known one.

    Raises:
        InputError: a name no known model has, without regard to case; the message suggests
            the closest known names and lists ``offered``.
    """
    spelled = {k.casefold(): k for k in known}
    listed = list(offered) or sorted(spelled.values(), key=str.casefold)
    out: list[str] = []
    for name in names:
        found = spelled.get(name.strip().casefold())
        if found is None:
            close = difflib.get_close_matches(name.strip().casefold(), list(spelled), n=3,
                                              cutoff=0.5)
            hint = (f"did you mean {or_list([spelled[c] for c in close])}? "
                    if close else "")
            what = "the catalog's models" if offered else "the known models"
            raise InputError("gpus", name, f"is not a GPU model known here; {hint}"
                             f"{what}: {', '.join(listed)}")
        if found not in out:
            out.append(found)
    return tuple(out)
