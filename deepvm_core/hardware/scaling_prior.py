"""A scaling prior: the speedup of n data-parallel VMs from a model of one training step.

**One step.** Each GPU processes its own mini-batch (weak scaling per step; an epoch of n VMs
has 1/n of the steps), then the VMs average their gradients by a ring all-reduce (the
alpha-beta cost model of Thakur, Rabenseifner & Gropp 2005; Patarasuk & Yuan 2009):

    t_c(g)    = tau G m_g / E_g                                  compute, seconds
    t_ar(n)   = 2 (n - 1) alpha  +  2 (n - 1) / n * 8 G / BW_g   all-reduce, seconds
    t_step(n) = t_c(g) + t_ar(n)          (t_ar(1) = 0)
    S(n)      = n t_step(1) / t_step(n)

with ``E_g`` the VM's eFLOPS, ``m_g`` its GPUs (per-GPU mini-batches: a VM of m GPUs does m
times the work per step at ``E_g`` eFLOPS), ``BW_g`` its network bandwidth (Gbit/s),
``G`` the gradient size (GB, a workload input; 8 G is Gbit), ``tau`` the compute of one
per-GPU mini-batch per GB of gradient, eFLOPS-seconds per GB (at a fixed per-GPU batch, both the
compute of a step and the gradient grow with the parameter count, so a larger model spends more
time computing per byte of latency-bound traffic), and ``alpha`` the per-hop latency of the ring
(seconds; it also takes the synchronisation and straggler cost of each hop). The latency
term ``2 (n - 1) alpha`` grows with n, so the speedup saturates at ``t_c / (2 alpha)``: the
artifact's measurements do (g4dn.xlarge: 3.7x on 16 VMs). Without it (alpha = 0) S(n) tends to n.

**Calibration.** ``tau`` and ``alpha`` are fitted (least squares on log-parameters, scipy's
``least_squares``) to the measured speedups t(1)/t(n), n >= 2, of every measured curve
(``data/measurements/deepvm-scaling.csv``: g3s.xlarge, g4dn.xlarge, g5.xlarge) at the default
``G``. Speedups identify ``tau`` and ``alpha / G`` only, so the workload's ``G`` sets the
scale of ``alpha``: the default 0.1 GB is ResNet-50's FP32 gradient (25.6 M parameters x 4
bytes), the artifact's workload. The fitted constants are :data:`DEFAULT_STEP_MODEL` (a test
refits them).

**Into the catalog.** :func:`prior_scaling` evaluates S(n) at the measured node counts (1, 2,
4, 8, 12, ..., 32) and fits the catalog's logistic (a, b, c) with
:func:`deepvm_core.hardware.calibrate.fit_scaling` (with extra steep starts,
:data:`PRIOR_EXTRA_STARTS`), so the rest of the model is unchanged. Points below 1 are raised
to 1 first (``max(S(n), 1)``: the logistic only rises; a prior whose second VM does not pay,
``t_c < 2 alpha + 4 G / BW``, is then flat at 1, which is :data:`NO_GAIN_SCALING`). The
inflection is kept at b >= 1 node, so that the paper's K(1) = 1. Caveat of the paper's K: past
the inflection ``n K(n)`` tends to ``4 / a`` nodes' worth,
so a shallow fit (small ``a``) still promises near-linear growth under ``--model paper``.
:func:`prior_errors` reports the prior's leave-one-curve-out error beside K = 1 (S(n) = n).

**EFA families (p4d, p4de, p5, p5e, p5en: EFA with GPUDirect RDMA) keep alpha.** alpha is not
the wire's latency: fitted on the artifact's ResNet/CIFAR-10 curves over 10-25 Gbit/s TCP, it
takes each hop's synchronisation and straggler cost too, and at 5 ms it is some 30 times the
whole small-message all-reduce time that nccl-tests report on two p3dn.24xlarge with EFA
(about 0.16 ms at 8 bytes, github gist jacobkahn/a92f4425abf831ac0799fabe9079263d, 2019).
No source the project has measures what remains of alpha on an EFA family (the per-step
overhead of a framework on those VMs), so a smaller alpha for them would be a number tuned to
an answer: the prior keeps one alpha for every type, uses the bandwidth each type's catalog row
gives (400-3200 Gbit/s for these families), and says so in docs/method.md. The consequence: for
fast 8-GPU VMs the prior predicts little gain from a second VM (p4d.24xlarge: S(32) about 1.6;
p5.48xlarge: none, :data:`NO_GAIN_SCALING`), which is pessimistic if that overhead is smaller
on EFA; a measured curve (``deepvm calibrate``) replaces the prior.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from deepvm_core.arrays import FloatArray
from deepvm_core.catalog.types import ScalingParams
from deepvm_core.hardware.calibrate import fit_scaling
from deepvm_core.hardware.measurements import InstanceMeasurements, MeasurementTable

#: Default gradient size, GB: ResNet-50's FP32 gradient (25.6 M parameters x 4 bytes).
DEFAULT_GRADIENT_GB = 0.1
#: Node counts the prior is evaluated at before the logistic fit (the artifact's).
PRIOR_NODES: tuple[int, ...] = (1, 2, 4, 8, 12, 16, 20, 24, 28, 32)
#: Extra (a0, b0) starts of the logistic fit: steep curves with an early inflection, which
#: the measured curves' starts miss when the prior is concave from two nodes on.
PRIOR_EXTRA_STARTS: tuple[tuple[float, float], ...] = (
    (0.5, 1.0), (1.0, 1.0), (3.0, 1.0), (0.5, 2.0))
#: (a, b, c) of a prior that is flat at 1 (a second VM never pays): the steepest logistic at
#: one node, S(n) = 1 from two nodes on (the least-squares fit has no unique optimum there).
NO_GAIN_SCALING = ScalingParams(a=10.0, b=1.0, c=1.0)
#: ``scaling_source`` of a type whose (a, b, c) come from this prior.
PRIOR_LABEL = "prior: data-parallel step, ring all-reduce"


@dataclass(frozen=True)
class StepModel:
    """The constants of the step model (module docstring).

    Attributes:
        tau: compute of one per-GPU mini-batch per GB of gradient, eFLOPS-seconds per GB
            (t_c = tau G m / E seconds).
        alpha: per-hop latency of the ring all-reduce, seconds.
        gradient_gb: gradient size G, GB.
    """

    tau: float
    alpha: float
    gradient_gb: float = DEFAULT_GRADIENT_GB


#: tau and alpha fitted to the three measured curves at G = 0.1 GB (see the module docstring;
#: ``tests/test_gpu_estimates.py`` refits them).
DEFAULT_STEP_MODEL = StepModel(tau=295.5, alpha=0.004993)


@dataclass(frozen=True)
class StepHardware:
    """What the step model reads of one VM type (module docstring: ``E_g``, ``m_g``,
    ``BW_g``).

    Attributes:
        eflops: its eFLOPS (per VM); gpus: its GPUs; network_gbps: its bandwidth, Gbit/s.
    """

    eflops: float
    gpus: int
    network_gbps: float


def step_speedup(model: StepModel, vm: StepHardware, nodes: npt.ArrayLike) -> FloatArray:
    """``S(n) = n t_step(1) / t_step(n)`` of the step model (module docstring) on VMs ``vm``,
    per node count."""
    n = np.asarray(nodes, dtype=np.float64)
    t_c = model.tau * model.gradient_gb * vm.gpus / vm.eflops
    t_ar = np.where(n > 1, 2.0 * (n - 1.0) * model.alpha
                    + 2.0 * (n - 1.0) / n * 8.0 * model.gradient_gb / vm.network_gbps, 0.0)
    return np.asarray(n * t_c / (t_c + t_ar), dtype=np.float64)


@dataclass(frozen=True)
class Curve:
    """One measured speedup curve.

    Attributes:
        instance: the instance type; vm: what the step model reads of it.
        nodes: node counts n >= 2; speedups: measured t(1)/t(n) at them.
    """

    instance: str
    vm: StepHardware
    nodes: tuple[int, ...]
    speedups: tuple[float, ...]


def fit_step_model(curves: Sequence[Curve],
                   gradient_gb: float = DEFAULT_GRADIENT_GB) -> StepModel:
    """tau and alpha by least squares of S(n) - measured over ``curves`` (module docstring)."""
    from scipy.optimize import least_squares  # scipy loads with the first fit

    def residuals(p: FloatArray) -> FloatArray:
        model = StepModel(float(np.exp(p[0])), float(np.exp(p[1])), gradient_gb)
        return np.concatenate([
            step_speedup(model, c.vm, c.nodes) - np.asarray(c.speedups) for c in curves])

    fit = least_squares(residuals, np.log([300.0, 0.05 * gradient_gb]))
    return StepModel(float(np.exp(fit.x[0])), float(np.exp(fit.x[1])), gradient_gb)


def prior_scaling(model: StepModel, vm: StepHardware) -> ScalingParams:
    """(a, b, c) of the logistic fitted to the prior's S(n) on VMs ``vm`` at
    :data:`PRIOR_NODES`."""
    speedup = np.maximum(step_speedup(model, vm, PRIOR_NODES), 1.0)
    if float(speedup.max()) <= 1.0:
        return NO_GAIN_SCALING
    rows = InstanceMeasurements(instance="prior", nodes=PRIOR_NODES,
                                epoch_seconds=tuple(float(1.0 / s) for s in speedup),
                                repeats=(1,) * len(PRIOR_NODES))
    return fit_scaling(rows, extra_starts=PRIOR_EXTRA_STARTS, min_b=1.0).params


@dataclass(frozen=True)
class PriorError:
    """The prior's error on one measured curve, fitted without that curve.

    Attributes:
        instance: the curve judged.
        rmse_prior: RMSE of the prior's S(n) against the measured speedups (speedup units).
        rmse_linear: the same for K = 1 (S(n) = n).
        model: tau and alpha fitted on the other curves.
    """

    instance: str
    rmse_prior: float
    rmse_linear: float
    model: StepModel


def prior_errors(curves: Sequence[Curve],
                 gradient_gb: float = DEFAULT_GRADIENT_GB) -> tuple[PriorError, ...]:
    """Leave-one-curve-out: fit on the others, judge on the one left out, beside K = 1."""
    out = []
    for i, c in enumerate(curves):
        model = fit_step_model([o for j, o in enumerate(curves) if j != i], gradient_gb)
        measured = np.asarray(c.speedups)
        prior = step_speedup(model, c.vm, c.nodes)
        linear = np.asarray(c.nodes, dtype=np.float64)
        out.append(PriorError(c.instance, float(np.sqrt(np.mean((prior - measured) ** 2))),
                              float(np.sqrt(np.mean((linear - measured) ** 2))), model))
    return tuple(out)


def measured_curves(table: MeasurementTable, eflops: Mapping[str, float], gpus: Mapping[str, int],
                    network_gbps: Mapping[str, float]) -> tuple[Curve, ...]:
    """The :class:`Curve` of each type of a :class:`~deepvm_core.hardware.measurements.
    MeasurementTable` that has a one-node time and is in ``eflops``."""
    out = []
    for m in table.instances:
        t1 = m.one_node_epoch_seconds
        if t1 is None or m.instance not in eflops:
            continue
        n = m.nodes_array()
        use = n >= 2
        vm = StepHardware(eflops[m.instance], gpus.get(m.instance, 1), network_gbps[m.instance])
        out.append(Curve(m.instance, vm, tuple(int(x) for x in n[use]),
                         tuple(float(x) for x in t1 / m.epoch_seconds_array()[use])))
    return tuple(out)
