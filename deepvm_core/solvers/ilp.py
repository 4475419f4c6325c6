r"""DeepVM as an integer program (PuLP + the CBC binary shipped in the ``pulp`` wheel).

The paper (section III) says DeepVM's architecture decision is taken by "linear programming";
this module states the decision as a mixed-integer linear program, solves it with CBC, and
reads out the ``k`` best configurations in the ranking order of ``model.md`` (stage 4). It must
agree with the exact enumeration of :mod:`deepvm_core.solvers.enumeration`, and the tests check
that it does.

Formulation
===========

**Sets.** :math:`V`: the solvable GPU types (those with an eFLOPS score). :math:`W`: the CPU
types able to be memory nodes, :math:`\mathrm{MEM}(w) \cdot 1.073741824 \ge f s`. :math:`F`:
the quota families of the catalog's quota table (only when quotas are on; a family missing
from the table is unlimited). :math:`N^{SA}_v` and :math:`N^{TR}_v`: the node counts allowed
for :math:`v` in each architecture, after the presolve below.

**Parameters.** :math:`OD, SP` on-demand and spot prices (USD/h); :math:`c_x` vCPUs of type
:math:`x`; :math:`C` the node cap per role (``scenario.max_nodes``);
:math:`\nu^{sat}_{vw} = n_{sat}(\min(BW_v, BW_w))`; :math:`Q^{od}_F, Q^{sp}_F` the vCPU
quotas; :math:`B = PW + \epsilon_{\$}` the budget (:data:`~deepvm_core.model.PRICE_TOLERANCE_USD`);
:math:`P^{SA}_{vn} = OD_v + (n-1) SP_v` and :math:`P^{TR}_{vn} = n SP_v` the GPU part of a price.

**Variables.**

* :math:`a_{vn} \in \{0,1\}`, :math:`n \in N^{SA}_v`: "Single Anchor with n GPU VMs of v".
* :math:`t_{vn} \in \{0,1\}`, :math:`n \in N^{TR}_v`: "Tiering with n spot GPU VMs of v".
* :math:`u_w \in \{0,1\}`: "the memory nodes are of type w"; :math:`m_w \in \mathbb{Z}`,
  :math:`0 \le m_w \le L_w` memory nodes of :math:`w`, where :math:`L_w = \min(C,
  \lfloor Q^{od}_{F(w)} / c_w \rfloor)` (the bound implied by the cap and the quota row).
* Two auxiliaries per GPU type, for sparsity: :math:`\tau_v = \sum_n t_{vn}` (Tiering uses
  :math:`v`) and :math:`\eta_v = \sum_n n\, t_{vn}` (its GPU VM count).

**How the nonlinear K(n) enters.** Node counts are encoded in unary (one binary per value of
:math:`n`), so any function of :math:`n` is a constant per variable. The objective coefficient
of :math:`a_{vn}` is :math:`\zeta^{SA}_{vn} = ((n-1) SPFP_v + ODFP_v) K_v(n)` (objective
``paper``) or :math:`eFLOPS_v\, n\, K_v(n)` (objective ``performance``); that of
:math:`t_{vn}` is :math:`\zeta^{TR}_{vn} = n\, SPFP_v K_v(n)` or :math:`eFLOPS_v\, n\, K_v(n)`.
NoScale sets :math:`K \equiv 1`. The coefficients are computed with the model's own formulas
(:func:`~deepvm_core.model.scaling_factor`), so they are the numbers the model reports.

**Constraints.**

.. math::

    \textstyle\sum_{v,n} a_{vn} + \sum_{v,n} t_{vn} = 1
        && \text{(1) exactly one configuration}\\
    \textstyle\sum_w u_w = \sum_v \tau_v
        && \text{(2) Tiering has one memory-node type}\\
    u_w \le m_w \le L_w u_w
        && \text{(3) at least one memory node, none of an unused type}\\
    \textstyle\sum P^{SA}_{vn} a_{vn} + \sum P^{TR}_{vn} t_{vn} + \sum_w OD_w m_w \le B
        && \text{(4) budget}\\
    \eta_v \le \nu^{sat}_{vw} m_w - 1 + M_v (2 - u_w - \tau_v) \quad \forall v, w
        && \text{(5) saturation } n/m < n_{sat}\\
    \textstyle\sum_{v \in F} c_v \big(\sum_n (n-1) a_{vn} + \eta_v\big) \le Q^{sp}_F
        && \text{(6) spot quota}\\
    \textstyle\sum_{v \in F} c_v \sum_n a_{vn} + \sum_{w \in F} c_w m_w \le Q^{od}_F
        && \text{(7) on-demand quota}

(5) is :math:`n < n_{sat} m`, i.e. :math:`n \le n_{sat} m - 1` in integers, when Tiering pairs
:math:`v` with :math:`w`, and is relaxed otherwise; :math:`M_v = \max N^{TR}_v + 1` is a valid
big-M (with :math:`u_w = 0` (3) forces :math:`m_w = 0` and the right side is at least
:math:`M_v - 1 \ge \eta_v`; with :math:`\tau_v = 0`, :math:`\eta_v = 0`). Minimising the price
(stage 2 below) makes :math:`m_w` the cheapest valid one, :math:`\lfloor n / n_{sat} \rfloor +
1`, as ``model.md`` requires; in any case the configuration is read out as :math:`(v, n, w)` and
rebuilt by the model with that cheapest :math:`m` (see "Exactness").

**Presolve (domain reduction).** A variable is created only if it can be part of a feasible
configuration on its own: :math:`a_{vn}` for :math:`2 \le n`, :math:`n - 1 \le C`, within the
spot quota of :math:`F(v)`, with the anchor within its on-demand quota and
:math:`P^{SA}_{vn} \le B`; :math:`t_{vn}` for :math:`1 \le n \le C`, within the spot quota, with
:math:`P^{TR}_{vn} + \min_w OD_w \le B` (one memory node at least); :math:`u_w, m_w` for
:math:`w \in W` with :math:`L_w \ge 1` and :math:`OD_w + \min_{v,n} P^{TR}_{vn} \le B`. This
keeps the program small (tens to a few hundred binaries on the bundled catalogs instead of
:math:`2 |V| C`), turns the quota rows (6) into redundant rows (kept for completeness), and
leaves (4), (5) and (7) as the coupling constraints between GPU and memory-node choices.

Lexicographic ranking
=====================

The ranking of ``model.md`` (objective descending, then lower hourly price, fewer VMs,
architecture, GPU name, CPU name) is solved stage by stage, each stage a CBC solve:

1. **Objective.** Maximise :math:`\sum \zeta a + \sum \zeta t`, coefficients divided by the
   largest one (order 1). Let :math:`\zeta^\circ` be the coefficient of the chosen variable.
2. **Price.** Fix the objective *exactly*: every objective variable whose coefficient is not
   :math:`\zeta^*` is fixed to 0 (left out of the program), where :math:`\zeta^*` is
   :math:`\zeta^\circ`, or a coefficient in :math:`(\zeta^\circ, \zeta^\circ + 10^{-6}
   \zeta_{max}]` if one of those is feasible (CBC separates objective values only to about
   :math:`10^{-7}` of the scale; these "suspect" values are tried highest first, so objective
   values that differ by one ulp are still ranked exactly). Minimise the hourly price. A class
   made of a single Single Anchor variable needs no solve (its configuration is determined and
   feasible by the presolve).
3. **Tie-break.** Only when needed: with the class fixed as in 2 and the price limited to
   :math:`p_2 + \delta/2` (:math:`p_2` the stage-2 price, :math:`\delta = 10^{-5} \max(B, 1)`
   USD), minimise :math:`(\text{total VMs}) (R + 1) + r`, where :math:`r \in [0, R]` is an
   integer rank of (architecture, GPU name, CPU name), linear in :math:`a, t, u`:
   :math:`r = \sum (\rho_v (|W| + 1)) a_{vn} + \sum (|V|(|W|+1) + \rho_v (|W|+1)) t_{vn} +
   \sum_w (\rho_w + 1) u_w` with :math:`\rho` the alphabetical ranks. Stage 3 is skipped when
   stage 2's optimum is proved unique: the configurations of the fixed class are few
   (:math:`(v, n)` with the same coefficient, times :math:`|W|`), and if none other than stage
   2's is feasible with a price within :math:`\delta` of :math:`p_2` (checked with the model's
   formulas), stage 2's is the next one. If the others within :math:`\delta` all cost exactly
   :math:`p_2`, one stage-3 solve breaks the tie. If some cost differs from :math:`p_2` by
   less than :math:`\delta` (too close for CBC to order), stage 3 is solved repeatedly with
   temporary exclusion cuts until infeasible, and the configurations found are ordered exactly
   by :func:`~deepvm_core.model.rank_key`.

**Top-k by exclusion cuts.** After a configuration is read out, a no-good cut removes it
(Single Anchor: :math:`a_{vn} = 0`; Tiering: :math:`t_{vn} + u_w \le 1`) and the search goes
on. While the current objective class still has configurations, the next one is found by
stage 2 alone (the classes above it are exhausted or infeasible, and cuts only remove); when
stage 2 is infeasible the class is exhausted, its variables are fixed to 0 and stage 1 runs
again.

**Exactness.** Every configuration read from CBC is rebuilt with
:func:`~deepvm_core.model.single_anchor` / :func:`~deepvm_core.model.tiering` (with the cheapest
valid :math:`m`) and checked against the budget, saturation, quotas and caps in exact
arithmetic; one that fails only within CBC's tolerances (:math:`10^{-7}`) is cut off and the
stage re-solved. The reported numbers are the model's, never the solver's. A status other than
optimal (time limit, numerical trouble) raises :class:`~deepvm_core.errors.SolverError`;
"infeasible" means "no further configuration" and ends the list.

**Cost.** A solve is a CBC subprocess (about 5-10 ms on these programs, 20-100 ms for a stage 1
over about 1,300 binaries). On the bundled AWS catalog at PW 3 a top-3 takes four solves (one
stage 1, three stage 2) and a best-of-one-architecture one or two.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pulp

from deepvm_core.catalog import Catalog, CpuType, GpuType
from deepvm_core.errors import InputError, SolverError
from deepvm_core.model import (
    ARCHITECTURES,
    PRICE_TOLERANCE_USD,
    SECONDS_PER_HOUR,
    Architecture,
    Configuration,
    Objective,
    Scenario,
    affordable,
    holds_checkpoints,
    max_on_demand_vms,
    max_spot_vms,
    memory_nodes_needed,
    pair_bandwidth_gbps,
    rank_key,
    saturation_limit,
    scaling_factor,
    single_anchor,
    tiering,
)

__all__ = [
    "BuiltProblem",
    "SearchSpace",
    "SolveResult",
    "Stage",
    "build_problem",
    "build_search_space",
    "solve_problem",
    "solve_top_k",
]

SA: Architecture = "single_anchor"
TR: Architecture = "tiering"

#: Objective values closer than this (relative to the largest coefficient) are "suspects" that
#: CBC may not separate (it resolves about 1e-7 of the objective's scale).
OBJECTIVE_WINDOW = 1e-6
#: Prices closer than this times max(budget, 1 USD) are too close for CBC to order reliably.
PRICE_WINDOW = 1e-5
#: CBC options: only ``increment`` (a new incumbent must improve by at least this much; the
#: default, 1e-5, is coarser than the objective window above). Everything else stays at CBC's
#: defaults on purpose: ``preprocess off`` would make stage 1 several times faster, but the
#: bundled CBC 2.10.3 then crashes (SIGSEGV) on some infeasible programs (seen in this module's
#: property test; cf. coin-or/Cbc#463, #734), and ``cuts off`` / ``heuristics off`` gained
#: nothing measurable here.
CBC_OPTIONS = ("increment 1e-9",)

Stage = Literal["objective", "price", "tiebreak"]
#: An objective variable: (architecture, GPU index, n).
Key = tuple[Architecture, int, int]
#: A Tiering exclusion cut: (GPU index, n, CPU index).
Cut = tuple[int, int, int]


# ----------------------------------------------------------------------------- search space


@dataclass(frozen=True, eq=False)
class SearchSpace:
    """The presolved data of one program: everything :func:`build_problem` needs.

    Attributes:
        objective, noscale: what is maximised.
        gpus, cpus: the GPU types V (solvable) and CPU types W (memory-feasible, affordable,
            allowed at least one node); indices below refer to these tuples.
        coef: objective coefficient of every objective variable (unscaled).
        gpu_price: USD/h of the GPU part: Single Anchor ``OD + (n-1) SP``, Tiering ``n SP``.
        nsat: n_sat(min(BW(v), BW(w))) per (GPU index, CPU index).
        cpu_limit: most memory nodes of each CPU type (cap and on-demand quota).
        spot_quotas, od_quotas: (family, vCPUs) rows (6) and (7); empty when quotas are off.
        pw: PW, USD/h; budget: PW + PRICE_TOLERANCE_USD (the right side of row (4)).
        gpu_rank, cpu_rank: alphabetical ranks (tie-breaks).
    """

    objective: Objective
    noscale: bool
    gpus: tuple[GpuType, ...]
    cpus: tuple[CpuType, ...]
    coef: Mapping[Key, float]
    gpu_price: Mapping[Key, float]
    nsat: tuple[tuple[int, ...], ...]
    cpu_limit: tuple[int, ...]
    spot_quotas: tuple[tuple[str, int], ...]
    od_quotas: tuple[tuple[str, int], ...]
    pw: float
    budget: float
    gpu_rank: tuple[int, ...]
    cpu_rank: tuple[int, ...]

    @property
    def scale(self) -> float:
        """The largest objective coefficient (stage 1 divides by it)."""
        return max(self.coef.values(), default=1.0) or 1.0

    @property
    def price_scale(self) -> float:
        """USD/h the price objective is divided by, and the unit of :data:`PRICE_WINDOW`."""
        return max(self.budget, 1.0)

    @property
    def max_rank(self) -> int:
        """R: an upper bound on the name rank r (stage 3)."""
        return 2 * len(self.gpus) * (len(self.cpus) + 1)


def _ranks(names: list[str]) -> tuple[int, ...]:
    order = sorted(range(len(names)), key=lambda i: names[i])
    rank = [0] * len(names)
    for r, i in enumerate(order):
        rank[i] = r
    return tuple(rank)


def build_search_space(
    catalog: Catalog,
    scenario: Scenario,
    *,
    noscale: bool = False,
    architecture: Architecture | None = None,
) -> SearchSpace:
    """Presolve: the sets, parameters and variable domains of the program (module doc)."""
    budget = scenario.pw_usd_per_hour + PRICE_TOLERANCE_USD
    gpus = catalog.solvable_gpu_types
    want_sa = architecture in (None, SA)
    want_tr = architecture in (None, TR)
    cpus_all = [
        w for w in catalog.cpu_types
        if holds_checkpoints(w, scenario.checkpoint_gb, scenario.buffer_checkpoints)
        and max_on_demand_vms(catalog, w, scenario) >= 1
    ] if want_tr else []
    min_cpu_od = min((w.on_demand_usd_per_hour for w in cpus_all), default=np.inf)

    coef: dict[Key, float] = {}
    gpu_price: dict[Key, float] = {}
    for gi, g in enumerate(gpus):
        eflops = float(g.eflops)  # type: ignore[arg-type]  # solvable: not None
        sp, od = g.spot_usd_per_hour, g.on_demand_usd_per_hour
        spfp = eflops / sp * SECONDS_PER_HOUR
        odfp = eflops / od * SECONDS_PER_HOUR
        spot_limit = max_spot_vms(catalog, g, scenario)

        if want_sa and max_on_demand_vms(catalog, g, scenario) >= 1 and od <= budget:
            top = min(spot_limit + 1, int((budget - od) / sp) + 2)  # +1 spare, masked below
            n = np.arange(2, top + 1, dtype=np.int64)
            price = od + (n - 1) * sp
            n, price = n[price <= budget], price[price <= budget]
            k = np.ones(n.shape) if noscale else scaling_factor(g.scaling, n)
            value = ((n - 1) * spfp + odfp) * k if scenario.objective == "paper" \
                else eflops * n * k
            for ni, zi, pi in zip(n.tolist(), value.tolist(), price.tolist(), strict=True):
                coef[(SA, gi, ni)] = zi
                gpu_price[(SA, gi, ni)] = pi

        if want_tr and cpus_all and sp + min_cpu_od <= budget:
            top = min(spot_limit, int((budget - min_cpu_od) / sp) + 1)
            n = np.arange(1, top + 1, dtype=np.int64)
            price = n * sp
            keep = price + min_cpu_od <= budget
            n, price = n[keep], price[keep]
            k = np.ones(n.shape) if noscale else scaling_factor(g.scaling, n)
            value = n * spfp * k if scenario.objective == "paper" else eflops * n * k
            for ni, zi, pi in zip(n.tolist(), value.tolist(), price.tolist(), strict=True):
                coef[(TR, gi, ni)] = zi
                gpu_price[(TR, gi, ni)] = pi

    min_tr_price = min((p for key, p in gpu_price.items() if key[0] == TR), default=np.inf)
    cpus = tuple(w for w in cpus_all if w.on_demand_usd_per_hour + min_tr_price <= budget)
    if not cpus:  # no memory node is affordable: no Tiering variable can be 1
        for key in [key for key in coef if key[0] == TR]:
            del coef[key], gpu_price[key]

    families = {x.family for x in (*gpus, *cpus)}
    quotas = [q for q in catalog.quotas if q.family in families] if scenario.use_quotas else []
    return SearchSpace(
        objective=scenario.objective,
        noscale=noscale,
        gpus=gpus,
        cpus=cpus,
        coef=coef,
        gpu_price=gpu_price,
        nsat=tuple(
            tuple(saturation_limit(catalog.saturation, pair_bandwidth_gbps(g, w)) for w in cpus)
            for g in gpus
        ),
        cpu_limit=tuple(max_on_demand_vms(catalog, w, scenario) for w in cpus),
        spot_quotas=tuple((q.family, q.spot_vcpus) for q in quotas),
        od_quotas=tuple((q.family, q.on_demand_vcpus) for q in quotas),
        pw=scenario.pw_usd_per_hour,
        budget=budget,
        gpu_rank=_ranks([g.name for g in gpus]),
        cpu_rank=_ranks([w.name for w in cpus]),
    )


# ----------------------------------------------------------------------------- build


@dataclass(frozen=True, eq=False)
class BuiltProblem:
    """A PuLP problem of one stage and the variables to read the answer from."""

    problem: pulp.LpProblem
    x: Mapping[Key, pulp.LpVariable]
    u: Mapping[int, pulp.LpVariable]
    m: Mapping[int, pulp.LpVariable]


def build_problem(
    space: SearchSpace,
    stage: Stage,
    keys: Iterable[Key],
    *,
    price_limit: float | None = None,
    cuts: Iterable[Cut] = (),
) -> BuiltProblem:
    """Build the program of one stage.

    Args:
        space: the presolved data.
        stage: ``objective`` (maximise the scaled objective), ``price`` (minimise the hourly
            price) or ``tiebreak`` (minimise total VMs, then the name rank).
        keys: the objective variables that may be 1; every other one is fixed to 0 (left out).
        price_limit: right-hand side of the budget row (default: the budget).
        cuts: Tiering exclusion cuts ``(gpu, n, cpu)``: ``t[gpu, n] + u[cpu] <= 1``.
    """
    keys = sorted(keys)
    prob = pulp.LpProblem("deepvm", pulp.LpMaximize if stage == "objective" else pulp.LpMinimize)
    x = {key: prob.add_variable(f"{'a' if key[0] == SA else 't'}_{key[1]}_{key[2]}", 0, 1,
                                cat=pulp.LpBinary) for key in keys}
    tr_keys = [key for key in keys if key[0] == TR]
    tr_gpus = sorted({key[1] for key in tr_keys})
    cpu_idx = range(len(space.cpus)) if tr_keys else range(0)
    u = {wi: prob.add_variable(f"u_{wi}", 0, 1, cat=pulp.LpBinary) for wi in cpu_idx}
    m = {wi: prob.add_variable(f"m_{wi}", 0, space.cpu_limit[wi], cat=pulp.LpInteger)
         for wi in cpu_idx}
    tau = {gi: prob.add_variable(f"tau_{gi}", 0, 1) for gi in tr_gpus}
    top_n = {gi: max(key[2] for key in tr_keys if key[1] == gi) for gi in tr_gpus}
    eta = {gi: prob.add_variable(f"eta_{gi}", 0, top_n[gi]) for gi in tr_gpus}
    LE, EQ, GE = pulp.LpConstraintLE, pulp.LpConstraintEQ, pulp.LpConstraintGE

    def row(name: str, terms: list[tuple[pulp.LpVariable, float]], sense: int,
            rhs: float) -> None:
        # built from (variable, coefficient) lists: much faster than PuLP's operators
        prob.addConstraint(pulp.LpConstraint(pulp.LpAffineExpression(terms), sense, name, rhs))

    # (1) one configuration; (2) one memory-node type iff Tiering; (3) memory-node counts
    row("one", [(var, 1) for var in x.values()], EQ, 1)
    for gi in tr_gpus:
        mine = [key for key in tr_keys if key[1] == gi]
        row(f"tau_def_{gi}", [(tau[gi], 1), *((x[key], -1) for key in mine)], EQ, 0)
        row(f"eta_def_{gi}", [(eta[gi], 1), *((x[key], -key[2]) for key in mine)], EQ, 0)
    if tr_keys:
        row("memory_type", [*((u[wi], 1) for wi in cpu_idx), *((tau[gi], -1) for gi in tr_gpus)],
            EQ, 0)
    for wi in cpu_idx:
        row(f"m_min_{wi}", [(m[wi], 1), (u[wi], -1)], GE, 0)
        row(f"m_max_{wi}", [(m[wi], 1), (u[wi], -space.cpu_limit[wi])], LE, 0)
    # (4) budget
    price = [*((x[key], space.gpu_price[key]) for key in keys),
             *((m[wi], space.cpus[wi].on_demand_usd_per_hour) for wi in cpu_idx)]
    row("budget", price, LE, space.budget if price_limit is None else price_limit)
    # (5) saturation: eta_v - nsat m_w + M u_w + M tau_v <= 2 M - 1
    for gi in tr_gpus:
        big_m = top_n[gi] + 1
        for wi in cpu_idx:
            row(f"saturation_{gi}_{wi}", [(eta[gi], 1), (m[wi], -space.nsat[gi][wi]),
                                          (u[wi], big_m), (tau[gi], big_m)], LE, 2 * big_m - 1)
    # (6) spot and (7) on-demand vCPU quotas per family
    for family, limit in space.spot_quotas:
        terms = [(x[key], space.gpus[key[1]].vcpus * (key[2] - 1)) for key in keys
                 if key[0] == SA and space.gpus[key[1]].family == family]
        terms += [(eta[gi], space.gpus[gi].vcpus) for gi in tr_gpus
                  if space.gpus[gi].family == family]
        if terms:
            row(f"quota_spot_{family}", terms, LE, limit)
    for family, limit in space.od_quotas:
        terms = [(x[key], space.gpus[key[1]].vcpus) for key in keys
                 if key[0] == SA and space.gpus[key[1]].family == family]
        terms += [(m[wi], space.cpus[wi].vcpus) for wi in cpu_idx
                  if space.cpus[wi].family == family]
        if terms:
            row(f"quota_od_{family}", terms, LE, limit)
    # exclusion cuts
    for gi, n, wi in sorted(cuts):
        if (TR, gi, n) in x and wi in u:
            row(f"cut_{gi}_{n}_{wi}", [(x[(TR, gi, n)], 1), (u[wi], 1)], LE, 1)

    if stage == "objective":
        scale = space.scale
        objective = [(x[key], space.coef[key] / scale) for key in keys]
    elif stage == "price":
        objective = [(var, coef / space.price_scale) for var, coef in price]
    else:
        width = len(space.cpus) + 1
        weight = space.max_rank + 1
        objective = [(x[key], weight * key[2] + space.gpu_rank[key[1]] * width
                      + (len(space.gpus) * width if key[0] == TR else 0)) for key in keys]
        objective += [(u[wi], space.cpu_rank[wi] + 1) for wi in cpu_idx]
        objective += [(m[wi], weight) for wi in cpu_idx]
    prob.setObjective(pulp.LpAffineExpression(objective))
    return BuiltProblem(prob, x, u, m)


# ----------------------------------------------------------------------------- solve


@dataclass(frozen=True)
class SolveResult:
    """What one CBC solve returned.

    Attributes:
        status: PuLP's status code (``pulp.LpStatusOptimal`` = 1, infeasible = -1, ...).
        sol_status: PuLP's solution status (``pulp.LpSolutionOptimal`` = 1, ...).
        objective: the solver's objective value, or ``None``.
        chosen: objective variables at 1.
        cpus: CPU types with u = 1.
        memory_nodes: the solver's m per CPU type with u = 1 (diagnostics only).
        seconds: wall-clock time of the solve (MPS write, CBC, read back).
    """

    status: int
    sol_status: int
    objective: float | None
    chosen: tuple[Key, ...] = ()
    cpus: tuple[int, ...] = ()
    memory_nodes: tuple[int, ...] = ()
    seconds: float = 0.0

    @property
    def optimal(self) -> bool:
        return self.status == pulp.LpStatusOptimal and self.sol_status == pulp.LpSolutionOptimal

    @property
    def infeasible(self) -> bool:
        # CBC proves infeasibility as "Infeasible" or "Integer infeasible"; PuLP maps the
        # second to solution status "No Solution Found".
        return self.status == pulp.LpStatusInfeasible and self.sol_status in (
            pulp.LpSolutionInfeasible, pulp.LpSolutionNoSolutionFound)

    def describe(self) -> str:
        return (f"status {pulp.LpStatus.get(self.status, self.status)!r}, solution status "
                f"{pulp.LpSolution.get(self.sol_status, self.sol_status)!r}")


def _cbc(time_limit_s: float) -> pulp.LpSolver:
    # The CBC binary bundled with the pulp wheel (what PULP_CBC_CMD runs), through COIN_CMD:
    # PULP_CBC_CMD itself warns that it is deprecated for PuLP 4.0.
    return pulp.COIN_CMD(path=pulp.PULP_CBC_CMD.pulp_cbc_path, msg=False,
                         timeLimit=time_limit_s, gapRel=0, gapAbs=0, options=list(CBC_OPTIONS))


def solve_problem(built: BuiltProblem, time_limit_s: float) -> SolveResult:
    """Solve ``built`` with CBC and read the chosen variables (no status check here)."""
    start = time.perf_counter()
    try:
        built.problem.solve(_cbc(time_limit_s))
    except pulp.PulpSolverError as exc:
        raise SolverError(f"CBC could not be run: {exc}") from None
    prob = built.problem
    chosen = tuple(key for key, var in built.x.items() if (var.varValue or 0.0) > 0.5)
    cpus = tuple(wi for wi, var in built.u.items() if (var.varValue or 0.0) > 0.5)
    return SolveResult(
        status=prob.status,
        sol_status=prob.sol_status,
        objective=pulp.value(prob.objective),
        chosen=chosen,
        cpus=cpus,
        memory_nodes=tuple(round(built.m[wi].varValue or 0.0) for wi in cpus),
        seconds=time.perf_counter() - start,
    )


# ----------------------------------------------------------------------------- top-k search


@dataclass(frozen=True)
class _Choice:
    key: Key
    cpu: int | None


class _Search:
    """The top-k loop of one :func:`solve_top_k` call (state: fixings and cuts)."""

    def __init__(self, space: SearchSpace, time_limit_s: float, objective: Objective,
                 noscale: bool) -> None:
        self.space = space
        self.time_limit_s = time_limit_s
        self.objective = objective
        self.noscale = noscale
        self.fixed: set[Key] = set()  # objective variables fixed to 0 (SA cuts, dead classes)
        self.cuts: set[Cut] = set()  # Tiering exclusion cuts
        self.classes: dict[float, list[Key]] = {}
        for key, value in space.coef.items():
            self.classes.setdefault(value, []).append(key)
        self.values = np.array(sorted(self.classes), dtype=np.float64)
        self.solves: list[tuple[Stage, float]] = []

    # -- solving

    def _solve(self, stage: Stage, keys: Iterable[Key], *, price_limit: float | None = None,
               extra_cuts: Iterable[Cut] = ()) -> _Choice | None:
        """One CBC solve; ``None`` when infeasible; :class:`SolverError` when not optimal."""
        built = build_problem(self.space, stage, keys, price_limit=price_limit,
                              cuts=self.cuts | set(extra_cuts))
        result = solve_problem(built, self.time_limit_s)
        self.solves.append((stage, result.seconds))
        if result.infeasible:
            return None
        if not result.optimal:
            raise SolverError(f"CBC did not prove an optimum at stage {stage!r}: "
                              f"{result.describe()}")
        if len(result.chosen) != 1:
            raise SolverError(f"CBC returned {len(result.chosen)} configurations at stage "
                              f"{stage!r}, expected exactly one")
        key = result.chosen[0]
        if key[0] == TR and len(result.cpus) != 1:
            raise SolverError(f"CBC returned {len(result.cpus)} memory-node types for a "
                              f"Tiering configuration at stage {stage!r}, expected one")
        return _Choice(key, result.cpus[0] if key[0] == TR else None)

    # -- exact configurations

    def _configuration(self, key: Key, cpu: int | None) -> Configuration | None:
        """The model's configuration of a choice, or ``None`` if it is not exactly feasible."""
        arch, gi, n = key
        gpu = self.space.gpus[gi]
        if arch == SA:
            return single_anchor(gpu, n)  # feasible by the presolve
        assert cpu is not None  # a Tiering choice always names its memory-node type
        m = memory_nodes_needed(n, self.space.nsat[gi][cpu])
        if m > self.space.cpu_limit[cpu]:
            return None
        config = tiering(gpu, n, self.space.cpus[cpu], m)
        return config if affordable(config.hourly_price_usd, self.space.pw) else None

    def _exclude(self, key: Key, cpu: int | None) -> None:
        if key[0] == SA:
            self.fixed.add(key)
        else:
            assert cpu is not None
            self.cuts.add((key[1], key[2], cpu))

    def _exact(self, stage: Stage, keys: list[Key], **kwargs: float) -> (
            tuple[_Choice, Configuration] | None):
        """Solve, and cut off (then re-solve) answers feasible only within CBC's tolerance."""
        while True:
            live = [key for key in keys if key not in self.fixed]
            if not live:
                return None
            choice = self._solve(stage, live, **kwargs)  # type: ignore[arg-type]
            if choice is None:
                return None
            config = self._configuration(choice.key, choice.cpu)
            if config is not None:
                return choice, config
            self._exclude(choice.key, choice.cpu)  # infeasible for every m: a valid cut

    def _members(self, keys: list[Key], chosen: tuple[Key, int | None],
                 price_limit: float) -> list[tuple[Key, int | None, Configuration]]:
        """Feasible configurations of the class ``keys`` other than ``chosen`` priced at most
        ``price_limit`` (the uniqueness proof of stage 2; model formulas, exact)."""
        out = []
        for key in keys:
            if key in self.fixed:
                continue
            arch, gi, n = key
            if arch == SA:
                config = single_anchor(self.space.gpus[gi], n)
                if (key, None) != chosen and config.hourly_price_usd <= price_limit:
                    out.append((key, None, config))
                continue
            for wi in range(len(self.space.cpus)):
                if (gi, n, wi) in self.cuts or (key, wi) == chosen:
                    continue
                config = self._configuration(key, wi)
                if config is not None and config.hourly_price_usd <= price_limit:
                    out.append((key, wi, config))
        return out

    def _rank(self, config: Configuration) -> tuple:
        return rank_key(config, self.objective, noscale=self.noscale)

    def _best_in_class(self, value: float) -> tuple[_Choice, Configuration] | None:
        """The best remaining configuration whose objective coefficient is exactly ``value``
        (stages 2 and 3), or ``None`` when the class has none left."""
        keys = [key for key in self.classes[value] if key not in self.fixed]
        if not keys:
            return None
        if len(keys) == 1 and keys[0][0] == SA:
            key = keys[0]
            return _Choice(key, None), single_anchor(self.space.gpus[key[1]], key[2])
        found = self._exact("price", keys)
        if found is None:
            return None
        choice, config = found
        p2 = config.hourly_price_usd
        delta = PRICE_WINDOW * self.space.price_scale
        others = self._members(keys, (choice.key, choice.cpu), p2 + delta)
        if not others:
            return found  # stage 2's optimum is unique: no stage 3
        window = p2 + delta / 2
        if all(o[2].hourly_price_usd == p2 for o in others):
            tied = self._exact("tiebreak", keys, price_limit=window)
            known = {(choice.key, choice.cpu)} | {(o[0], o[1]) for o in others}
            if tied is not None and (tied[0].key, tied[0].cpu) in known:
                return tied
        # prices closer than CBC can order: collect the window, then order exactly
        collected = [found]
        blocked: set[Key] = set()  # temporary: these configurations stay valid for later
        extra: set[Cut] = set()
        while True:
            last = collected[-1][0]
            if last.key[0] == SA:
                blocked.add(last.key)
            else:
                assert last.cpu is not None
                extra.add((last.key[1], last.key[2], last.cpu))
            live = [key for key in keys if key not in self.fixed and key not in blocked]
            if not live:
                break
            more = self._solve("tiebreak", live, price_limit=window, extra_cuts=extra)
            if more is None:
                break
            config = self._configuration(more.key, more.cpu)
            if config is None:  # feasible only within CBC's tolerance: a valid cut for good
                self._exclude(more.key, more.cpu)
                continue
            collected.append((more, config))
        return min(collected, key=lambda item: self._rank(item[1]))

    def _next_class(self) -> tuple[float, tuple[_Choice, Configuration]] | None:
        """Stage 1, then the best configuration of the best feasible objective class."""
        while True:
            live = [key for key in self.space.coef if key not in self.fixed]
            if not live:
                return None
            choice = self._solve("objective", live)
            if choice is None:
                return None
            value = self.space.coef[choice.key]
            top = value + OBJECTIVE_WINDOW * self.space.scale
            lo, hi = np.searchsorted(self.values, [value, top], side="right")
            suspects = [float(v) for v in self.values[lo:hi][::-1]]
            for candidate in [*suspects, value]:
                best = self._best_in_class(candidate)
                if best is not None:
                    return candidate, best
                self.fixed.update(self.classes[candidate])  # no feasible configuration left
            # the stage-1 answer was feasible only within CBC's tolerance: solve again

    def run(self, k: int) -> list[Configuration]:
        out: list[Configuration] = []
        current: float | None = None
        while len(out) < k:
            best = None
            if current is not None:
                best = self._best_in_class(current)
                if best is None:
                    self.fixed.update(self.classes[current])
                    current = None
            if best is None:
                found = self._next_class()
                if found is None:
                    break
                current, best = found
            choice, config = best
            out.append(config)
            self._exclude(choice.key, choice.cpu)
        return sorted(out, key=self._rank)  # already in order; sorting is a safety net


# ----------------------------------------------------------------------------- public API


def solve_top_k(
    catalog: Catalog,
    scenario: Scenario,
    k: int,
    *,
    noscale: bool = False,
    architecture: Literal["single_anchor", "tiering"] | None = None,
    time_limit_s: float = 30.0,
) -> list[Configuration]:
    """The k best configurations affordable at scenario.pw_usd_per_hour under scenario.objective
    (K = 1 in the objective if noscale), best first, in the ranking order of model.md stage 4
    (objective desc, then lower hourly price, fewer VMs, architecture, GPU name, CPU name).

    Fewer than ``k`` (possibly none) are returned when fewer exist. The configurations are
    built by :func:`~deepvm_core.model.single_anchor` / :func:`~deepvm_core.model.tiering`.
    ``time_limit_s`` is CBC's limit for each solve (a call makes about two solves per
    configuration returned); reaching it raises :class:`SolverError`.

    Raises:
        InputError: ``k``, ``architecture`` or ``time_limit_s`` out of range.
        SolverError: CBC ended a solve with a status other than optimal (or infeasible).
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise InputError("k", k, "must be a whole number >= 0")
    if architecture is not None and architecture not in ARCHITECTURES:
        raise InputError("architecture", architecture,
                         f"must be one of {', '.join(ARCHITECTURES)} or None")
    if isinstance(time_limit_s, bool) or not isinstance(time_limit_s, (int, float)) or not (
        time_limit_s > 0
    ):
        raise InputError("time_limit_s", time_limit_s, "must be a number of seconds > 0")
    if k == 0:
        return []
    space = build_search_space(catalog, scenario, noscale=noscale, architecture=architecture)
    if not space.coef:
        return []
    return _Search(space, float(time_limit_s), scenario.objective, noscale).run(k)
