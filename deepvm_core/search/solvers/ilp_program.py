r"""The DeepVM integer program: its formulation, how one stage is built, and one CBC solve.

The search over the ranking (which programs to solve, in which order) is in
:mod:`deepvm_core.search.solvers.ilp`; whether a program is worth building within a time
budget (its size, :func:`program_size`, :func:`fits_time_limit`) is here, with the program.

Formulation
===========

**Sets.** The candidate domain of :func:`deepvm_core.search.candidates.build_domain`, cut at the
budget: its GPU rows :math:`R` (one per architecture, GPU type :math:`v` and GPU VM count :math:`n`;
:math:`R^{SA}` and :math:`R^{TR}` by architecture), its GPU types :math:`V` and its memory-node
types :math:`W`. A row is in the domain only if it can be part of an affordable configuration on
its own (presolve): a Single Anchor row within the spot limit of :math:`v`, with the anchor
within its on-demand limit and priced within the budget; a Tiering row within the spot limit,
with :math:`n SP_v + \min_w OD_w` within the budget; a memory-node type that holds :math:`f s`,
may have a node, and is affordable with some Tiering row. The limits carry the node cap
:math:`C` and the vCPU quotas.

**Parameters** (all from the domain). :math:`P_r` the GPU price of row :math:`r`
(:math:`OD_v + (n-1) SP_v` or :math:`n SP_v`, USD/h); :math:`OD_w` the price of a memory node;
:math:`L_w` the most memory nodes of :math:`w` (cap and on-demand quota);
:math:`\nu_{vw} = n_{sat}(\min(BW_v, BW_w))`; :math:`B = PW + \epsilon_{\$}` the budget
(:data:`~deepvm_core.model.PRICE_TOLERANCE_USD`); :math:`\zeta_r` the objective value of row
:math:`r` (Z or performance, with :math:`K \equiv 1` for NoScale).

**Variables.**

* :math:`x_r \in \{0,1\}` for :math:`r \in R`: "this row's configuration" (:math:`a_{vn}` for
  Single Anchor, :math:`t_{vn}` for Tiering in the variable names).
* :math:`u_w \in \{0,1\}`: "the memory nodes are of type w"; :math:`m_w \in \mathbb{Z}`,
  :math:`0 \le m_w \le L_w`, the memory nodes of :math:`w`.
* Two auxiliaries per GPU type, for sparsity: :math:`\tau_v = \sum_{r \in R^{TR}_v} x_r`
  (Tiering uses :math:`v`) and :math:`\eta_v = \sum_{r \in R^{TR}_v} n_r x_r` (its GPU VMs).

**How the nonlinear K(n) enters.** Node counts are encoded in unary (one binary per value of
:math:`n`), so any function of :math:`n` is a constant per variable: :math:`\zeta_r` is the
domain's value, the number the model reports.

**Constraints.**

.. math::

    \textstyle\sum_r x_r = 1
        && \text{(1) exactly one configuration}\\
    \textstyle\sum_w u_w = \sum_v \tau_v
        && \text{(2) Tiering has one memory-node type}\\
    u_w \le m_w \le L_w u_w
        && \text{(3) at least one memory node, none of an unused type}\\
    \textstyle\sum_r P_r x_r + \sum_w OD_w m_w \le B
        && \text{(4) budget}\\
    \eta_v \le \nu_{vw} m_w - 1 + M_v (2 - u_w - \tau_v) \quad \forall v, w
        && \text{(5) saturation } n/m < n_{sat}

(5) is :math:`n < n_{sat} m`, i.e. :math:`n \le n_{sat} m - 1` in integers, when Tiering pairs
:math:`v` with :math:`w`, and is relaxed otherwise; :math:`M_v = \max_{r \in R^{TR}_v} n_r + 1`
is a valid big-M (with :math:`u_w = 0` (3) forces :math:`m_w = 0` and the right side is at
least :math:`M_v - 1 \ge \eta_v`; with :math:`\tau_v = 0`, :math:`\eta_v = 0`). Minimising the
price makes :math:`m_w` the cheapest valid one, :math:`\lfloor n / n_{sat} \rfloor + 1`, as
``model.md`` requires; in any case a solution is read out as (row, :math:`w`) and rebuilt by the
domain with that cheapest :math:`m`.

**No quota rows.** A configuration uses one GPU type, and the presolve keeps only the rows
within that type's spot quota and, for Single Anchor, with the anchor within its on-demand
quota. Memory nodes are the only other on-demand VMs and exist only in Tiering, where there is
no anchor, so :math:`m_w \le L_w` carries their on-demand quota. Spot and on-demand quotas
are separate, so no quota couples two choices: per-family quota rows would never bind (the
tests check the answers against an oracle that applies the quotas of ``model.md`` literally).

Stages
======

The same constraints serve three objectives (:data:`Stage`): ``objective`` maximises
:math:`\sum_r \zeta_r x_r / \zeta_{max}`; ``price`` minimises :math:`(\sum_r P_r x_r + \sum_w
OD_w m_w) / \max(B, 1)`; ``tiebreak`` minimises :math:`(\text{total VMs}) (\rho_{max} + 1) +
\rho`, where :math:`\rho` is the domain's name rank (architecture, GPU name, CPU name), linear
as the sum of a row part on :math:`x_r` and a CPU part on :math:`u_w`
(:meth:`~deepvm_core.search.tables.CandidateDomain.name_rank`), and total VMs is
:math:`\sum_r n_r x_r + \sum_w m_w`.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pulp

from deepvm_core.arrays import FloatArray
from deepvm_core.errors import SolverError
from deepvm_core.model import (
    Arch,
)
from deepvm_core.search.tables import CandidateDomain

__all__ = ["CBC_KILL_GRACE_S", "CBC_OPTIONS", "ILP_SIZE_PER_SECOND", "BuiltProblem",
           "SolveResult", "Stage", "build_problem", "fits_time_limit", "program_size",
           "solve_problem"]

#: Program size (GPU-row binaries plus saturation constraints, :func:`program_size`) built per
#: second of budget; a larger program is not built (:mod:`deepvm_core.search.solvers.ilp`,
#: "Time budget"). Measured (2
#: shared cores): a top-3 over 18,000 binaries takes 5 s; a stage 1 over 1,700 binaries and
#: 40,000 saturation constraints 5.6 s, over 830 and 10,000 0.6 s.
ILP_SIZE_PER_SECOND = 4_000

#: CBC options: only ``increment`` (a new incumbent must improve by at least this much; the
#: default, 1e-5, is coarser than the objective window of :mod:`deepvm_core.search.solvers.ilp`).
#: Everything else stays at CBC's defaults on purpose: ``preprocess off`` would make stage 1
#: several times faster, but the bundled CBC 2.10.3 then crashes (SIGSEGV) on some infeasible
#: programs (seen in the ILP's property test; cf. coin-or/Cbc#463, #734), and ``cuts off`` /
#: ``heuristics off`` gained nothing measurable here.
CBC_OPTIONS = ("increment 1e-9",)
#: CBC checks its time limit (``timeMode elapsed``) only between phases: 4 s into a 1.1 s limit
#: it was still preprocessing 24,500 binaries. :func:`solve_problem` kills it this long after
#: the limit.
CBC_KILL_GRACE_S = 0.5

Stage = Literal["objective", "price", "tiebreak"]
#: A Tiering exclusion cut: (GPU row, CPU index), ``x_row + u_cpu <= 1``.
Cut = tuple[int, int]


@dataclass(frozen=True, eq=False)
class BuiltProblem:
    """A PuLP problem of one stage and the variables to read the answer from.

    Attributes:
        x: per domain row, its binary; u, m: per CPU index, its binary and memory-node count.
    """

    problem: pulp.LpProblem
    x: Mapping[int, pulp.LpVariable]
    u: Mapping[int, pulp.LpVariable]
    m: Mapping[int, pulp.LpVariable]


def max_name_rank(domain: CandidateDomain) -> int:
    """An upper bound on the domain's name rank (stage ``tiebreak``)."""
    return 2 * len(domain.gpus) * (len(domain.cpus) + 1)


def program_size(domain: CandidateDomain) -> tuple[int, int]:
    """The program's GPU-row binaries and saturation constraints (one per GPU type with Tiering
    rows and memory-node type) over ``domain``."""
    tiering_gpus = np.unique(domain.gpu[domain.architecture == Arch.TIERING]).size
    return len(domain), tiering_gpus * len(domain.cpus)


def fits_time_limit(binaries: int, constraints: int, time_limit_s: float) -> bool:
    """True when a program of this size is worth building within ``time_limit_s`` seconds
    (:data:`ILP_SIZE_PER_SECOND`)."""
    return binaries + constraints <= ILP_SIZE_PER_SECOND * time_limit_s


def build_problem(
    domain: CandidateDomain,
    coef: FloatArray,
    stage: Stage,
    rows: Iterable[int],
    *,
    price_limit: float | None = None,
    cuts: Iterable[Cut] = (),
) -> BuiltProblem:
    """Build the program of one stage (module doc).

    Args:
        domain: the candidate domain, cut at the budget.
        coef: the objective value of every domain row (stage ``objective``).
        stage: ``objective``, ``price`` or ``tiebreak``.
        rows: the domain rows that may be 1; every other one is fixed to 0 (left out).
        price_limit: right-hand side of the budget row (default: the domain's budget).
        cuts: Tiering exclusion cuts ``(row, cpu)``: ``x[row] + u[cpu] <= 1``.
    """
    keys = sorted(rows)
    prob = pulp.LpProblem("deepvm", pulp.LpMaximize if stage == "objective" else pulp.LpMinimize)
    arch, gpu, n = domain.architecture, domain.gpu, domain.n
    x = {r: prob.add_variable(
        f"{'a' if arch[r] == Arch.SINGLE_ANCHOR else 't'}_{gpu[r]}_{n[r]}", 0, 1,
        cat=pulp.LpBinary) for r in keys}
    tr_rows = [r for r in keys if arch[r] == Arch.TIERING]
    tr_gpus = sorted({int(gpu[r]) for r in tr_rows})
    cpu_idx = range(len(domain.cpus)) if tr_rows else range(0)
    limit = domain.memory_node_limit
    u = {wi: prob.add_variable(f"u_{wi}", 0, 1, cat=pulp.LpBinary) for wi in cpu_idx}
    m = {wi: prob.add_variable(f"m_{wi}", 0, int(limit[wi]), cat=pulp.LpInteger)
         for wi in cpu_idx}
    mine = {gi: [r for r in tr_rows if gpu[r] == gi] for gi in tr_gpus}
    top_n = {gi: max(int(n[r]) for r in mine[gi]) for gi in tr_gpus}
    tau = {gi: prob.add_variable(f"tau_{gi}", 0, 1) for gi in tr_gpus}
    eta = {gi: prob.add_variable(f"eta_{gi}", 0, top_n[gi]) for gi in tr_gpus}
    LE, EQ, GE = pulp.LpConstraintLE, pulp.LpConstraintEQ, pulp.LpConstraintGE

    def row(name: str, terms: list[tuple[pulp.LpVariable, float]], sense: int,
            rhs: float) -> None:
        # built from (variable, coefficient) lists: much faster than PuLP's operators
        prob.addConstraint(pulp.LpConstraint(pulp.LpAffineExpression(terms), sense, name, rhs))

    # (1) one configuration; (2) one memory-node type iff Tiering; (3) memory-node counts
    row("one", [(var, 1) for var in x.values()], EQ, 1)
    for gi in tr_gpus:
        row(f"tau_def_{gi}", [(tau[gi], 1), *((x[r], -1) for r in mine[gi])], EQ, 0)
        row(f"eta_def_{gi}", [(eta[gi], 1), *((x[r], -int(n[r])) for r in mine[gi])], EQ, 0)
    if tr_rows:
        row("memory_type", [*((u[wi], 1) for wi in cpu_idx), *((tau[gi], -1) for gi in tr_gpus)],
            EQ, 0)
    for wi in cpu_idx:
        row(f"m_min_{wi}", [(m[wi], 1), (u[wi], -1)], GE, 0)
        row(f"m_max_{wi}", [(m[wi], 1), (u[wi], -int(limit[wi]))], LE, 0)
    # (4) budget
    node_price = domain.memory_node_price_usd_per_hour
    price = [*((x[r], float(domain.gpu_price_usd_per_hour[r])) for r in keys),
             *((m[wi], float(node_price[wi])) for wi in cpu_idx)]
    row("budget", price, LE, domain.budget_usd_per_hour if price_limit is None else price_limit)
    # (5) saturation: eta_v - nsat m_w + M u_w + M tau_v <= 2 M - 1
    for gi in tr_gpus:
        big_m = top_n[gi] + 1
        for wi in cpu_idx:
            row(f"saturation_{gi}_{wi}", [(eta[gi], 1),
                                          (m[wi], -int(domain.saturation_limit[gi, wi])),
                                          (u[wi], big_m), (tau[gi], big_m)], LE, 2 * big_m - 1)
    # exclusion cuts
    for r, wi in sorted(cuts):
        if r in x and wi in u:
            row(f"cut_{r}_{wi}", [(x[r], 1), (u[wi], 1)], LE, 1)

    if stage == "objective":
        scale = float(coef.max()) if coef.size and coef.max() > 0 else 1.0
        objective = [(x[r], float(coef[r]) / scale) for r in keys]
    elif stage == "price":
        price_scale = max(domain.budget_usd_per_hour, 1.0)
        objective = [(var, value / price_scale) for var, value in price]
    else:
        weight = max_name_rank(domain) + 1
        row_part = domain.name_rank(np.array(keys, dtype=np.int64))
        objective = [(x[r], weight * int(n[r]) + int(part))
                     for r, part in zip(keys, row_part, strict=True)]
        objective += [(u[wi], int(domain.cpu_name_rank[wi])) for wi in cpu_idx]
        objective += [(m[wi], weight) for wi in cpu_idx]
    prob.setObjective(pulp.LpAffineExpression(objective))
    return BuiltProblem(prob, x, u, m)


@dataclass(frozen=True)
class SolveResult:
    """What one CBC solve returned.

    Attributes:
        status: PuLP's status code (``pulp.LpStatusOptimal`` = 1, infeasible = -1, ...).
        sol_status: PuLP's solution status (``pulp.LpSolutionOptimal`` = 1, ...).
        objective: the solver's objective value, or ``None``.
        chosen: domain rows at 1.
        cpus: CPU indices with u = 1.
        memory_nodes: the solver's m per CPU type with u = 1 (diagnostics only).
        seconds: wall-clock time of the solve (MPS write, CBC, read back).
        stopped_on_time: CBC stopped on its time limit (it may do so before the limit by the
            wall clock: seen at 3.8 s of 4.7) or was killed.
    """

    status: int
    sol_status: int
    objective: float | None
    chosen: tuple[int, ...] = ()
    cpus: tuple[int, ...] = ()
    memory_nodes: tuple[int, ...] = ()
    seconds: float = 0.0
    stopped_on_time: bool = False

    @property
    def optimal(self) -> bool:
        """CBC proved an optimum (status and solution status both optimal)."""
        return bool(self.status == pulp.LpStatusOptimal
                    and self.sol_status == pulp.LpSolutionOptimal)

    @property
    def infeasible(self) -> bool:
        """CBC proved the program infeasible."""
        # CBC proves infeasibility as "Infeasible" or "Integer infeasible"; PuLP maps the
        # second to solution status "No Solution Found".
        return bool(self.status == pulp.LpStatusInfeasible and self.sol_status in (
            pulp.LpSolutionInfeasible, pulp.LpSolutionNoSolutionFound))

    def describe(self) -> str:
        """The two statuses in words, for error messages."""
        return (f"status {pulp.LpStatus.get(self.status, self.status)!r}, solution status "
                f"{pulp.LpSolution.get(self.sol_status, self.sol_status)!r}")


def _cbc(time_limit_s: float) -> pulp.LpSolver:
    # The CBC binary bundled with the pulp wheel (what PULP_CBC_CMD runs), through COIN_CMD:
    # PULP_CBC_CMD itself warns that it is deprecated for PuLP 4.0.
    return pulp.COIN_CMD(path=pulp.PULP_CBC_CMD.pulp_cbc_path, msg=False,
                         timeLimit=time_limit_s, timeMode="elapsed", gapRel=0, gapAbs=0,
                         options=list(CBC_OPTIONS))


def _wait_or_kill(args: list[str], kill_after_s: float) -> tuple[int, bool]:
    """Run ``args`` (no input, output discarded) and wait for it, killing it after
    ``kill_after_s`` seconds: (exit code, killed).

    One blocking wait and a timer thread, not ``subprocess.run(timeout=...)``, which polls
    with sleeps of up to 50 ms: most CBC runs here take 5-20 ms, and the polling doubled
    their wall time (5.3 s of sleep in 369 solves)."""
    try:
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    except OSError as exc:
        raise SolverError(f"CBC could not be run: {exc}") from None
    fired = threading.Event()

    def kill() -> None:
        fired.set()
        proc.kill()

    timer = threading.Timer(kill_after_s, kill)
    timer.start()
    try:
        returncode = proc.wait()
    except BaseException:  # interrupted: leave no CBC running
        proc.kill()
        proc.wait()
        raise
    finally:
        timer.cancel()
    return returncode, fired.is_set() and returncode != 0


def _run_cbc(prob: pulp.LpProblem, time_limit_s: float) -> bool:
    """Solve ``prob`` with CBC as :class:`pulp.COIN_CMD` does (MPS in, solution file out, the
    same options), but kill CBC :data:`CBC_KILL_GRACE_S` after its time limit: the status is
    then "not solved" and no value is set. True when CBC stopped on its time limit (its
    solution file says "Stopped on time") or was killed."""
    solver = _cbc(time_limit_s)
    with tempfile.TemporaryDirectory(prefix="deepvm-cbc-") as folder:
        mps, solution = Path(folder, "program.mps"), Path(folder, "program.sol")
        variables, variable_names, constraint_names, _ = prob.writeMPS(str(mps), rename=1)
        options = [word for option in (*solver.getOptions(), *CBC_OPTIONS)
                   for word in f"-{option}".split()]  # "-ratio 0" -> "-ratio", "0"
        args = [solver.path, str(mps), *(["-max"] if prob.sense == pulp.LpMaximize else []),
                "-sec", f"{time_limit_s}", *options, "-solve", "-printingOptions", "all",
                "-solution", str(solution)]
        returncode, killed = _wait_or_kill(args, time_limit_s + CBC_KILL_GRACE_S)
        if killed:
            prob.assignStatus(pulp.LpStatusNotSolved, pulp.LpSolutionNoSolutionFound)
            return True
        if returncode != 0 or not solution.exists():
            raise SolverError(f"CBC could not be run: exit code {returncode}, "
                              f"{'a' if solution.exists() else 'no'} solution file")
        status, values, _, _, _, sol_status = solver.readsol_MPS(
            str(solution), prob, variables, variable_names, constraint_names)
        with solution.open() as handle:
            stopped = handle.readline().startswith("Stopped on time")
    prob.assignVarsVals(values)
    prob.assignStatus(status, sol_status)
    return stopped


def solve_problem(built: BuiltProblem, time_limit_s: float) -> SolveResult:
    """Solve ``built`` with CBC within ``time_limit_s`` seconds of wall-clock time (CBC's own
    limit, then a kill) and read the chosen variables (no status check here)."""
    start = time.perf_counter()
    stopped = _run_cbc(built.problem, time_limit_s)
    prob = built.problem
    chosen = tuple(r for r, var in built.x.items() if (var.varValue or 0.0) > 0.5)
    cpus = tuple(wi for wi, var in built.u.items() if (var.varValue or 0.0) > 0.5)
    return SolveResult(
        status=prob.status,
        sol_status=prob.sol_status,
        objective=pulp.value(prob.objective),
        chosen=chosen,
        cpus=cpus,
        memory_nodes=tuple(round(built.m[wi].varValue or 0.0) for wi in cpus),
        seconds=time.perf_counter() - start,
        stopped_on_time=stopped,
    )
