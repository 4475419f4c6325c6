"""Mean time between interruption events and capacity wait per GPU type (``job-model.md``,
"MTBI defaults"; issue 25: defaults derived from the development traces).

The AWS Spot Instance Advisor publishes per instance type a bucket ``r`` of the share of spot
capacity reclaimed in the trailing month. A bucket is an ordinal risk class, not a rate. The
worst bucket's defaults are measured on the development traces of its types (p3.2xlarge and
p3.16xlarge, ">20 %"; ``bench/bench_defaults.py`` prints the derivation, docs/method.md
quotes it): over 48 windows of 7 days, the median MTBI of one spot VM is 1.86 h and the median
capacity wait W 1.10 h, rounded to 1.9 h and 1.1 h. The traces say nothing about the other
buckets: MTBI doubles per bucket below (``job-model.md``'s rule), W stays:

=====  =======  ====================  =================
``r``  bucket   default MTBI (hours)  default W (hours)
=====  =======  ====================  =================
0      <5%      30.4                  1.1
1      5-10%    15.2                  1.1
2      10-15%   7.6                   1.1
3      15-20%   3.8                   1.1
4      >20%     1.9                   1.1
=====  =======  ====================  =================

**Spread** (:data:`BUCKET_SPREAD`): the same windows vary 6x either way. Ten scenarios, the
window at the middle of each decile of slowness, as (MTBI factor, W factor) against the
medians; a plan from a bucket draws its Monte Carlo runs equally from them
(:mod:`deepvm_core.job.spread`), so its P10-P90 says how little a bucket tells.

A type without a bucket gets the 10-15 % defaults, flagged ``default``; a user override wins
(``user``). These are assumptions: show them as such. ``mtbi_scale`` multiplies every MTBI,
overrides included (it is the sensitivity control, MTBI x 0.25 ... x 4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.workload.workload import Workload

MtbiSource = Literal["advisor", "user", "default"]

#: Default MTBI of one spot VM in hours for the Spot Advisor's bucket index r = 0..4: the
#: ">20 %" traces' median 1.9 h, doubling per bucket below (bench/bench_defaults.py).
ADVISOR_BUCKET_MTBI_HOURS: tuple[float, ...] = (30.4, 15.2, 7.6, 3.8, 1.9)
#: MTBI of a type without a bucket: the 10-15 % bucket's default.
DEFAULT_MTBI_HOURS = ADVISOR_BUCKET_MTBI_HOURS[2]
#: Default capacity wait W in hours per bucket: the ">20 %" traces' median, 1.1 h, for every
#: bucket (the traces say nothing about the others).
ADVISOR_BUCKET_WAIT_HOURS: tuple[float, ...] = (1.1, 1.1, 1.1, 1.1, 1.1)
#: W of a type without a bucket: the 10-15 % bucket's default.
DEFAULT_WAIT_HOURS = ADVISOR_BUCKET_WAIT_HOURS[2]
#: The spread of a bucket's MTBI and W: ten (MTBI factor, W factor) scenarios, the development
#: windows at the middle of each decile of slowness, fastest first (bench/bench_defaults.py).
BUCKET_SPREAD: tuple[tuple[float, float], ...] = (
    (6.08, 1.36), (1.96, 0.79), (1.6, 0.74), (1.36, 1.09), (1.18, 0.99),
    (0.96, 1.18), (0.56, 0.67), (0.47, 1.29), (0.43, 1.58), (0.32, 1.19))


@dataclass(frozen=True)
class MtbiEstimate:
    """The MTBI used for one GPU type, and where it comes from.

    Attributes:
        gpu: GPU type name.
        mtbi_hours: mean hours between interruption events of one spot VM, after
            ``mtbi_scale``.
        mtbi_source: ``advisor`` (from the bucket), ``user`` (override) or ``default``
            (no bucket: the 10-15 % default, an assumption to flag).
        interruption_bucket: the Spot Advisor bucket index 0..4, or ``None``.
        wait_hours: W, the mean capacity wait, hours.
        wait_source: ``advisor``, ``user`` (``Workload.wait_hours``) or ``default``.
    """

    gpu: str
    mtbi_hours: float
    mtbi_source: MtbiSource
    interruption_bucket: int | None
    wait_hours: float
    wait_source: MtbiSource


def default_mtbi(gpu: GpuType) -> tuple[float, MtbiSource]:
    """MTBI(g) hours of one GPU type without an override or scale, and its source: its
    bucket's default (``advisor``), else 8 h (``default``)."""
    bucket = gpu.interruption_bucket  # 0..4 or None, checked by GpuType itself
    if bucket is not None:
        return ADVISOR_BUCKET_MTBI_HOURS[bucket], "advisor"
    return DEFAULT_MTBI_HOURS, "default"


def default_wait(gpu: GpuType) -> tuple[float, MtbiSource]:
    """W hours of one GPU type without the user's W, and its source: its bucket's default
    (``advisor``), else the 10-15 % bucket's (``default``)."""
    bucket = gpu.interruption_bucket
    if bucket is not None:
        return ADVISOR_BUCKET_WAIT_HOURS[bucket], "advisor"
    return DEFAULT_WAIT_HOURS, "default"


def mtbi_estimate(gpu: GpuType, workload: Workload) -> MtbiEstimate:
    """MTBI(g) of one GPU type: the user's override, else its bucket's default, else the
    10-15 % default; then times ``workload.mtbi_scale``. W: ``workload.wait_hours`` when
    given, else the bucket's."""
    source: MtbiSource
    if gpu.name in workload.mtbi_hours_by_gpu:
        hours, source = float(workload.mtbi_hours_by_gpu[gpu.name]), "user"
    else:
        hours, source = default_mtbi(gpu)
    wait_source: MtbiSource
    if workload.wait_hours is not None:
        wait, wait_source = float(workload.wait_hours), "user"
    else:
        wait, wait_source = default_wait(gpu)
    return MtbiEstimate(gpu.name, hours * float(workload.mtbi_scale), source,
                        gpu.interruption_bucket, wait, wait_source)


def mtbi_estimates(workload: Workload, catalog: Catalog) -> tuple[MtbiEstimate, ...]:
    """:func:`mtbi_estimate` of every GPU type of ``catalog``, in catalog order."""
    return tuple(mtbi_estimate(g, workload) for g in catalog.gpu_types)
