"""Checkpoint stall δ, checkpoint interval τ and the job's segments (``job-model.md``,
"Checkpoints"). Every function works on numpy arrays (one entry per configuration) and
broadcasts its arguments.

* **Tiering:** the checkpoint is sharded over the n GPU VMs, each shard goes to one of the m
  memory nodes: ``δ = δ0 + 8 f ceil(n / m) / (n BW(w))`` seconds (f in GB, BW(w) the memory
  node's bandwidth in Gbit/s).
* **Single Anchor** (and the baselines): the spot VMs send their shards to the anchor, which
  writes to its disk: ``δ = δ0 + 8 f (n - 1) / (n BW(v)) + f / D`` seconds (D in GB/s).
* **Daly's interval** (Daly, "A higher order estimate of the optimum checkpoint interval for
  restart dumps", FGCS 22, 2006; Young 1974 is its first term), M the MTBI in seconds: if
  ``δ < 2M``, ``τ = sqrt(2 δ M) [1 + (1/3) sqrt(δ / (2M)) + (1/9) (δ / (2M))] - δ``, otherwise
  ``τ = M``. With δ = 5 min it gives 117 min at M = 24 h, 57 min at M = 6 h and 9.1 min at
  M = 15 min (the restart time does not enter it).
* **Segments:** the compute time ``T_c`` is cut into segments of τ compute seconds, each but
  the last followed by a checkpoint: ``ceil(T_c / τ)`` segments (a ratio within 1e-12 of a whole
  number counts as that number, so ``T_c = 3 τ`` is three segments, not four); at most
  :data:`MAX_SEGMENTS`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from deepvm_core.arrays import FloatArray, IntArray

#: Bits per byte: f (GB) over a network in Gbit/s takes 8 f / BW seconds.
BITS_PER_BYTE = 8.0
#: T_c / τ within this relative distance of a whole number counts as that number.
SEGMENT_RATIO_TOLERANCE = 1e-12
#: At most this many segments (2^53, the largest exact float integer): a longer job (epoch
#: times beyond any real one, e.g. from a degenerate speedup fit) keeps the rest in its last
#: segment, so its expectations are still huge or infinite, and counts never overflow.
MAX_SEGMENTS = float(2**53)


def tiering_stall_seconds(checkpoint_gb: npt.ArrayLike, gpu_vms: npt.ArrayLike,
                          memory_nodes: npt.ArrayLike, memory_network_gbps: npt.ArrayLike,
                          fixed_seconds: npt.ArrayLike = 0.0) -> FloatArray:
    """Tiering: ``δ = δ0 + 8 f ceil(n / m) / (n BW(w))`` seconds (n >= 1, m >= 1)."""
    n = np.asarray(gpu_vms, dtype=np.int64)
    m = np.asarray(memory_nodes, dtype=np.int64)
    per_node = -(-n // m)  # ceil(n / m) in integers
    f = np.asarray(checkpoint_gb, dtype=np.float64)
    bw = np.asarray(memory_network_gbps, dtype=np.float64)
    return np.asarray(fixed_seconds, dtype=np.float64) + BITS_PER_BYTE * f * per_node / (n * bw)


def single_anchor_stall_seconds(checkpoint_gb: npt.ArrayLike, gpu_vms: npt.ArrayLike,
                                gpu_network_gbps: npt.ArrayLike,
                                disk_gb_per_second: npt.ArrayLike,
                                fixed_seconds: npt.ArrayLike = 0.0) -> FloatArray:
    """Single Anchor: ``δ = δ0 + 8 f (n - 1) / (n BW(v)) + f / D`` seconds (n >= 1)."""
    n = np.asarray(gpu_vms, dtype=np.float64)
    f = np.asarray(checkpoint_gb, dtype=np.float64)
    bw = np.asarray(gpu_network_gbps, dtype=np.float64)
    disk = np.asarray(disk_gb_per_second, dtype=np.float64)
    return (np.asarray(fixed_seconds, dtype=np.float64)
            + BITS_PER_BYTE * f * (n - 1.0) / (n * bw) + f / disk)


def daly_interval_seconds(stall_seconds: npt.ArrayLike,
                          mtbi_seconds: npt.ArrayLike) -> FloatArray:
    """Daly's optimum compute time between checkpoints τ, seconds.

    ``τ = sqrt(2 δ M) [1 + (1/3) sqrt(δ / (2M)) + (1/9) (δ / (2M))] - δ`` when ``δ < 2M``,
    else ``τ = M``. An infinite M (nothing is ever interrupted) gives an infinite τ.
    """
    delta = np.asarray(stall_seconds, dtype=np.float64)
    m = np.asarray(mtbi_seconds, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ratio = delta / (2.0 * m)
        daly = (np.sqrt(2.0 * delta * m) * (1.0 + np.sqrt(ratio) / 3.0 + ratio / 9.0)
                - delta)
    return np.asarray(np.where(np.isinf(m), np.inf, np.where(delta < 2.0 * m, daly, m)),
                      dtype=np.float64)


def segment_plan(compute_seconds: npt.ArrayLike,
                 interval_seconds: npt.ArrayLike) -> tuple[IntArray, FloatArray]:
    """Cut ``T_c`` into segments of τ: the number of checkpoints (segments - 1) and the last
    segment's compute seconds, ``T_c - checkpoints τ`` (in ``(0, τ]`` up to rounding).

    ``τ`` may be infinite (one segment). ``T_c`` and ``τ`` must be > 0.
    """
    total = np.asarray(compute_seconds, dtype=np.float64)
    tau = np.asarray(interval_seconds, dtype=np.float64)
    total, tau = np.broadcast_arrays(total, tau)
    with np.errstate(invalid="ignore", over="ignore"):
        ratio = np.where(np.isinf(tau), 0.0, total / tau)  # an infinite τ: one segment
        whole = np.rint(ratio)
        near = np.abs(ratio - whole) <= SEGMENT_RATIO_TOLERANCE * np.maximum(whole, 1.0)
        segments = np.clip(np.where(near, whole, np.ceil(ratio)), 1.0, MAX_SEGMENTS)
    checkpoints = (segments - 1.0).astype(np.int64)
    with np.errstate(invalid="ignore"):
        last = np.where(checkpoints > 0, total - checkpoints * tau, total)
    return checkpoints, np.asarray(last, dtype=np.float64)
