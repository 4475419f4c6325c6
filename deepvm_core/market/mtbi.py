"""Mean time between interruption events per GPU type (``job-model.md``, "MTBI defaults").

The AWS Spot Instance Advisor publishes per instance type a bucket ``r`` of the share of spot
capacity reclaimed in the trailing month. A bucket is an ordinal risk class, not a rate; the
defaults anchor the worst bucket at about 2 hours (one-week p3.2xlarge traces of
skypilot-org/spot-traces measured mean spot lifetimes of 0.8-2.9 h) and double per bucket:

=====  =======  ====================
``r``  bucket   default MTBI (hours)
=====  =======  ====================
0      <5%      32
1      5-10%    16
2      10-15%   8
3      15-20%   4
4      >20%     2
=====  =======  ====================

A type without a bucket gets the 10-15 % default (8 h), flagged ``default``; a user override
wins (``user``). These are assumptions: show them as such. ``mtbi_scale`` multiplies every
MTBI, overrides included (it is the sensitivity control, MTBI x 0.25 ... x 4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.workload.workload import Workload

MtbiSource = Literal["advisor", "user", "default"]

#: Default MTBI in hours for the Spot Advisor's bucket index r = 0..4.
ADVISOR_BUCKET_MTBI_HOURS: tuple[float, ...] = (32.0, 16.0, 8.0, 4.0, 2.0)
#: MTBI of a type without a bucket: the 10-15 % bucket's default.
DEFAULT_MTBI_HOURS = ADVISOR_BUCKET_MTBI_HOURS[2]


@dataclass(frozen=True)
class MtbiEstimate:
    """The MTBI used for one GPU type, and where it comes from.

    Attributes:
        gpu: GPU type name.
        mtbi_hours: mean hours between interruption events, after ``mtbi_scale``.
        mtbi_source: ``advisor`` (from the bucket), ``user`` (override) or ``default``
            (no bucket: the 10-15 % default, an assumption to flag).
        interruption_bucket: the Spot Advisor bucket index 0..4, or ``None``.
    """

    gpu: str
    mtbi_hours: float
    mtbi_source: MtbiSource
    interruption_bucket: int | None


def default_mtbi(gpu: GpuType) -> tuple[float, MtbiSource]:
    """MTBI(g) hours of one GPU type without an override or scale, and its source: its
    bucket's default (``advisor``), else 8 h (``default``)."""
    bucket = gpu.interruption_bucket  # 0..4 or None, checked by GpuType itself
    if bucket is not None:
        return ADVISOR_BUCKET_MTBI_HOURS[bucket], "advisor"
    return DEFAULT_MTBI_HOURS, "default"


def mtbi_estimate(gpu: GpuType, workload: Workload) -> MtbiEstimate:
    """MTBI(g) of one GPU type: the user's override, else its bucket's default, else 8 h;
    then times ``workload.mtbi_scale``."""
    source: MtbiSource
    if gpu.name in workload.mtbi_hours_by_gpu:
        hours, source = float(workload.mtbi_hours_by_gpu[gpu.name]), "user"
    else:
        hours, source = default_mtbi(gpu)
    return MtbiEstimate(gpu.name, hours * float(workload.mtbi_scale), source,
                        gpu.interruption_bucket)


def mtbi_estimates(workload: Workload, catalog: Catalog) -> tuple[MtbiEstimate, ...]:
    """:func:`mtbi_estimate` of every GPU type of ``catalog``, in catalog order."""
    return tuple(mtbi_estimate(g, workload) for g in catalog.gpu_types)
