r"""DeepVM as an integer program (PuLP + the CBC binary shipped in the ``pulp`` wheel).

The paper (section III) says DeepVM's architecture decision is taken by "linear programming".
:mod:`deepvm_core.search.solvers.ilp_program` states it as a mixed-integer linear program over the
candidate domain (:func:`deepvm_core.search.candidates.build_domain`); this module solves it with
CBC and reads out the ``k`` best configurations in the ranking order of ``model.md`` (stage 4). It
must agree with the exact enumeration (:mod:`deepvm_core.search.solvers.enumeration`), and the tests
check that it does.

Lexicographic ranking
=====================

The ranking (objective descending, then lower hourly price, fewer VMs, architecture, GPU name,
CPU name) is solved stage by stage, each stage a CBC solve:

1. **Objective.** Maximise :math:`\sum_r \zeta_r x_r`, coefficients divided by the largest one
   (order 1). :math:`\zeta_r` is the row's value under the scenario's objective: Z
   (``paper``), :math:`eFLOPS(v)\, n\, K_v(n)` (``performance``) or the job's training speed
   :math:`3600\, S_v(n) / t_v(1)` epochs per hour (``speed``, :mod:`deepvm_core.workload.speed`);
   all three are per GPU row (architecture, v, n), independent of the memory-node type, so one
   program serves them (with ``noscale``: K = 1, or S(n) = n for speed). Let
   :math:`\zeta^\circ` be the coefficient of the chosen row.
2. **Price.** Fix the objective *exactly*: every row whose coefficient is not :math:`\zeta^*` is
   fixed to 0 (left out of the program), where :math:`\zeta^*` is :math:`\zeta^\circ`, or a
   coefficient in :math:`(\zeta^\circ, \zeta^\circ + 10^{-6} \zeta_{max}]` if one of those is
   feasible (CBC separates objective values only to about :math:`10^{-7}` of the scale; these
   "suspect" values are tried highest first, so objective values that differ by one ulp are
   still ranked exactly). Minimise the hourly price. A class made of a single Single Anchor row
   needs no solve (its configuration is determined and feasible by the presolve).
3. **Tie-break.** Only when needed: with the class fixed as in 2 and the price limited to
   :math:`p_2 + \delta/2` (:math:`p_2` the stage-2 price, :math:`\delta = 10^{-5} \max(B, 1)`
   USD), minimise total VMs, then the name rank (stage ``tiebreak`` of the program). Stage 3 is
   skipped when stage 2's optimum is proved unique: the configurations of the fixed class are
   few (rows with the same coefficient, times :math:`|W|`), and if none other than stage 2's is
   a configuration priced within :math:`\delta` of :math:`p_2` (checked by the domain, exactly),
   stage 2's is the next one. If the others within :math:`\delta` all cost exactly :math:`p_2`,
   one stage-3 solve breaks the tie. If some cost differs from :math:`p_2` by less than
   :math:`\delta` (too close for CBC to order), stage 3 is solved repeatedly with temporary
   exclusion cuts until infeasible, and the configurations found are ordered exactly by the
   candidate table's ranking (:func:`deepvm_core.search.candidates.rank_order`).

**Top-k by exclusion cuts.** After a configuration is read out, a no-good cut removes it
(Single Anchor: :math:`x_r = 0`; Tiering: :math:`x_r + u_w \le 1`) and the search goes on. While
the current objective class still has configurations, the next one is found by stage 2 alone
(the classes above it are exhausted or infeasible, and cuts only remove); when stage 2 is
infeasible the class is exhausted, its rows are fixed to 0 and stage 1 runs again.

**Exactness.** Every (row, memory-node type) read from CBC is rebuilt by
:meth:`~deepvm_core.search.tables.CandidateDomain.configurations` (with the cheapest valid
:math:`m`), which checks the memory-node limit and the budget in exact arithmetic; one that
fails only within CBC's tolerances (:math:`10^{-7}`) is cut off and the stage re-solved. The
reported numbers are the domain's, never the solver's. A status other than optimal (time limit,
numerical trouble) raises :class:`~deepvm_core.errors.SolverError`; "infeasible" means "no
further configuration" and ends the list.

**Time budget.** One call has ``time_limit_s`` seconds (default :data:`ILP_TIME_LIMIT_S`, what
an interactive page can wait) for all its solves: each CBC run gets what is left as its wall-clock
limit (CBC's ``timeMode elapsed``), and a solve that reaches it, or a call whose budget is spent,
raises :class:`~deepvm_core.errors.SolverTimeoutError`, as does CBC's own "stopped on time"
(which it may say before the limit by the wall clock). CBC 2.10.3 stopped by its time limit
during preprocessing reports the program *infeasible* (seen on 28,000 binaries), so a
non-optimal answer after :data:`SUSPECT_SHARE` of the limit is a time-out too, never "no
further configuration". A
program larger than :data:`~deepvm_core.search.solvers.ilp_program.ILP_SIZE_PER_SECOND`
(binaries plus saturation constraints, :func:`~deepvm_core.search.solvers.ilp_program.
program_size`) per
second of budget is not built at all (building and writing it alone would use the budget, and
CBC does not prove those in time): the same error, with ``started`` False. The saturation
constraints count: one per Tiering GPU type and memory-node type, a million on a catalog at the
size limit, where building took 12 s and writing the program 13 s.
:func:`deepvm_core.recommend.recommendation.recommend` then answers with the exact enumeration and
says so.

**Cost** (measured with ``recommend(..., solver="ilp")``: a top-3, the NoScale best and a
best-of-architecture when needed; CBC 2.10.3 from the pulp wheel on 2 shared cores, so the
ranges follow the machine's load). A solve is a CBC subprocess: 12-50 ms on programs of up to a few
hundred binaries, 0.2 s for a stage 1 over about 1,300 binaries, 1 s over about 4,100. On the
bundled AWS catalog at PW 3 (69 binaries, 7 solves) a recommendation takes 0.08-0.2 s; on the
simulated catalog without quotas 0.4-1.0 s at PW 10 (1,262 binaries, 8 solves) and 1.7-3.7 s at
PW 50 (4,129 binaries, 8 solves). The enumeration answers each in a few milliseconds. A top-3
alone (issue 9, quotas off, PW 1000, AWS catalog): 0.2 s over 1,536 binaries (256 nodes), 0.8 s
over 6,000, 2.5 s over 12,000, 5 s over 18,000; a stage 1 over 25,000 does not end within 5 s.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from deepvm_core.arrays import FloatArray
from deepvm_core.errors import InputError, SolverError, SolverTimeoutError
from deepvm_core.model import (
    ARCHITECTURES,
    Arch,
    Architecture,
    Configuration,
    Objective,
)
from deepvm_core.search.solvers import ILP_TIME_LIMIT_S
from deepvm_core.search.solvers.ilp_program import (
    ILP_SIZE_PER_SECOND,
    Cut,
    Stage,
    build_problem,
    fits_time_limit,
    program_size,
    solve_problem,
)
from deepvm_core.search.tables import CandidateDomain, CandidateTable

__all__ = ["ILP_TIME_LIMIT_S", "OBJECTIVE_WINDOW", "PRICE_WINDOW", "solve_top_k"]

#: A solve that ends without an optimum after this share of its time limit counts as timed
#: out, whatever it says: CBC 2.10.3 stopped by its limit in preprocessing reports
#: "infeasible". Falling back to the enumeration is always correct; ending a top-k list on a
#: false "infeasible" is not.
SUSPECT_SHARE = 0.5

#: Objective values closer than this (relative to the largest coefficient) are "suspects" that
#: CBC may not separate (it resolves about 1e-7 of the objective's scale).
OBJECTIVE_WINDOW = 1e-6
#: Prices closer than this times max(budget, 1 USD) are too close for CBC to order reliably.
PRICE_WINDOW = 1e-5

#: A choice read from CBC: (domain row, CPU index), CPU -1 for Single Anchor.
Choice = tuple[int, int]
Found = tuple[Choice, Configuration]


class _Search:
    """The top-k loop of one :func:`solve_top_k` call (state: rows fixed to 0, and cuts)."""

    def __init__(self, domain: CandidateDomain, coef: FloatArray, time_limit_s: float,
                 deadline: float, objective: Objective, noscale: bool) -> None:
        self.domain = domain
        self.coef = coef
        self.time_limit_s = time_limit_s
        self.deadline = deadline  # time.monotonic() at which the budget is spent
        self.objective = objective
        self.noscale = noscale
        #: rows fixed to 0: Single Anchor configurations read out (or infeasible), and the rows
        #: of exhausted objective classes
        self.zeroed: set[int] = set()
        self.cuts: set[Cut] = set()  # Tiering exclusion cuts
        self.classes: dict[float, list[int]] = {}
        for row, value in enumerate(coef.tolist()):
            self.classes.setdefault(value, []).append(row)
        self.values = np.array(sorted(self.classes), dtype=np.float64)
        self.scale = float(coef.max()) if coef.size and coef.max() > 0 else 1.0
        self.solves: list[tuple[Stage, float]] = []

    def _timeout(self, stage: Stage, when: str) -> SolverTimeoutError:
        return SolverTimeoutError(
            f"the integer program did not prove an optimum within {self.time_limit_s:g} s "
            f"(stage {stage!r}, {when} the time limit)", time_limit_s=self.time_limit_s,
            started=True, binaries=len(self.domain))

    def _is_single_anchor(self, row: int) -> bool:
        return bool(self.domain.architecture[row] == Arch.SINGLE_ANCHOR)

    # -- solving

    def _solve(self, stage: Stage, rows: list[int], *, price_limit: float | None = None,
               extra_cuts: set[Cut] | None = None) -> Choice | None:
        """One CBC solve within what is left of the budget; ``None`` when infeasible;
        :class:`SolverTimeoutError` when the budget runs out, :class:`SolverError` when CBC ends
        otherwise without an optimum."""
        built = build_problem(self.domain, self.coef, stage, rows, price_limit=price_limit,
                              cuts=self.cuts | (extra_cuts or set()))
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self._timeout(stage, "before")
        result = solve_problem(built, left)
        self.solves.append((stage, result.seconds))
        if result.optimal:
            pass
        elif (result.stopped_on_time or result.seconds >= SUSPECT_SHARE * left
              or time.monotonic() >= self.deadline):  # "infeasible" included
            raise self._timeout(stage, f"with {result.describe()}; at")
        elif result.infeasible:
            return None
        else:
            raise SolverError(f"CBC did not prove an optimum at stage {stage!r}: "
                              f"{result.describe()}")
        if len(result.chosen) != 1:
            raise SolverError(f"CBC returned {len(result.chosen)} configurations at stage "
                              f"{stage!r}, expected exactly one")
        row = result.chosen[0]
        if self._is_single_anchor(row):
            return row, -1
        if len(result.cpus) != 1:
            raise SolverError(f"CBC returned {len(result.cpus)} memory-node types for a "
                              f"Tiering configuration at stage {stage!r}, expected one")
        return row, result.cpus[0]

    # -- exact configurations

    def _table(self, choices: list[Choice]) -> CandidateTable:
        """The configurations of ``choices`` (those that are configurations, exactly)."""
        return self.domain.configurations([c[0] for c in choices], [c[1] for c in choices])

    def _configuration(self, choice: Choice) -> Configuration | None:
        """The configuration of a choice, or ``None`` if it is not one exactly."""
        table = self._table([choice])
        return table.configuration(0) if len(table) else None

    def _best(self, choices: list[Choice]) -> Found:
        """The best of ``choices`` (all configurations) in the ranking order."""
        table = self._table(choices)
        i = int(table.rank_order(self.objective, noscale=self.noscale)[0])
        return (int(table.row[i]), int(table.cpu[i])), table.configuration(i)

    def _exclude(self, choice: Choice) -> None:
        if self._is_single_anchor(choice[0]):
            self.zeroed.add(choice[0])
        else:
            self.cuts.add(choice)

    def _exact(self, stage: Stage, rows: list[int], **kwargs: Any) -> Found | None:
        """Solve, and cut off (then re-solve) answers feasible only within CBC's tolerance."""
        while True:
            live = [row for row in rows if row not in self.zeroed]
            if not live:
                return None
            choice = self._solve(stage, live, **kwargs)
            if choice is None:
                return None
            config = self._configuration(choice)
            if config is not None:
                return choice, config
            self._exclude(choice)  # infeasible for every m: a valid cut

    def _members(self, rows: list[int], chosen: Choice, price_limit: float) -> list[
            tuple[Choice, float]]:
        """Configurations of the class ``rows`` other than ``chosen`` priced at most
        ``price_limit``, with their prices (the uniqueness proof of stage 2; exact)."""
        pairs = []
        for row in rows:
            if row in self.zeroed:
                continue
            cpus = [-1] if self._is_single_anchor(row) else range(len(self.domain.cpus))
            pairs += [(row, wi) for wi in cpus
                      if (row, wi) != chosen and (row, wi) not in self.cuts]
        table = self._table(pairs)
        return [((int(table.row[i]), int(table.cpu[i])), float(table.price_usd_per_hour[i]))
                for i in np.flatnonzero(table.price_usd_per_hour <= price_limit)]

    def _best_in_class(self, value: float) -> Found | None:
        """The best remaining configuration whose objective coefficient is exactly ``value``
        (stages 2 and 3), or ``None`` when the class has none left."""
        rows = [row for row in self.classes[value] if row not in self.zeroed]
        if not rows:
            return None
        if len(rows) == 1 and self._is_single_anchor(rows[0]):
            return self._best([(rows[0], -1)])
        found = self._exact("price", rows)
        if found is None:
            return None
        choice, config = found
        p2 = config.hourly_price_usd
        delta = PRICE_WINDOW * max(self.domain.budget_usd_per_hour, 1.0)
        others = self._members(rows, choice, p2 + delta)
        if not others:
            return found  # stage 2's optimum is unique: no stage 3
        window = p2 + delta / 2
        if all(price == p2 for _, price in others):
            tied = self._exact("tiebreak", rows, price_limit=window)
            if tied is not None and tied[0] in {choice} | {o for o, _ in others}:
                return tied
        # prices closer than CBC can order: collect the window, then order exactly
        collected = [choice]
        blocked: set[int] = set()  # temporary: these configurations stay valid for later
        extra: set[Cut] = set()
        while True:
            last = collected[-1]
            if self._is_single_anchor(last[0]):
                blocked.add(last[0])
            else:
                extra.add(last)
            live = [row for row in rows if row not in self.zeroed and row not in blocked]
            if not live:
                break
            more = self._solve("tiebreak", live, price_limit=window, extra_cuts=extra)
            if more is None:
                break
            if self._configuration(more) is None:  # within CBC's tolerance only: cut for good
                self._exclude(more)
                continue
            collected.append(more)
        return self._best(collected)

    def _next_class(self) -> tuple[float, Found] | None:
        """Stage 1, then the best configuration of the best feasible objective class."""
        while True:
            live = [row for row in range(len(self.domain)) if row not in self.zeroed]
            if not live:
                return None
            choice = self._solve("objective", live)
            if choice is None:
                return None
            value = float(self.coef[choice[0]])
            top = value + OBJECTIVE_WINDOW * self.scale
            lo, hi = np.searchsorted(self.values, [value, top], side="right")
            suspects = [float(v) for v in self.values[lo:hi][::-1]]
            for candidate in [*suspects, value]:
                best = self._best_in_class(candidate)
                if best is not None:
                    return candidate, best
                self.zeroed.update(self.classes[candidate])  # no feasible configuration left
            # the stage-1 answer was feasible only within CBC's tolerance: solve again

    def run(self, k: int) -> list[Configuration]:
        found: list[Choice] = []
        current: float | None = None
        while len(found) < k:
            best = None
            if current is not None:
                best = self._best_in_class(current)
                if best is None:
                    self.zeroed.update(self.classes[current])
                    current = None
            if best is None:
                found_class = self._next_class()
                if found_class is None:
                    break
                current, best = found_class
            choice, _ = best
            found.append(choice)
            self._exclude(choice)
        table = self._table(found)  # in order already; ranking them again is a safety net
        return [table.configuration(i)
                for i in table.rank_order(self.objective, noscale=self.noscale)]


def solve_top_k(
    domain: CandidateDomain,
    objective: Objective,
    k: int,
    *,
    noscale: bool = False,
    architecture: Arch | Architecture | None = None,
    time_limit_s: float = ILP_TIME_LIMIT_S,
) -> list[Configuration]:
    """The k best configurations of ``domain`` (the candidate domain cut at the budget,
    :func:`~deepvm_core.search.candidates.build_domain` with ``pw_usd_per_hour``: the caller
    builds it once and hands it to every call) under ``objective`` (K = 1 in the objective if
    noscale), best first, in the ranking order of model.md stage 4 (objective desc, then lower
    hourly price, fewer VMs, architecture, GPU name, CPU name).

    Fewer than ``k`` (possibly none) are returned when fewer exist. ``architecture`` (an
    :class:`~deepvm_core.model.Arch` or its key) limits the search to one architecture
    (:meth:`~deepvm_core.search.tables.CandidateDomain.only`). ``time_limit_s`` is the budget
    of the whole call, seconds (a call makes about two solves per configuration returned;
    module doc, "Time budget"). The ``speed`` objective is the domain's speed basis.

    Raises:
        InputError: ``k``, ``architecture`` or ``time_limit_s`` out of range.
        SolverTimeoutError: the budget ran out, or the program is too large for it
            (:func:`~deepvm_core.search.solvers.ilp_program.fits_time_limit`).
        SolverError: CBC ended a solve otherwise with a status other than optimal (or
            infeasible).
    """
    start = time.monotonic()
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise InputError("k", k, "must be a whole number >= 0")
    if architecture is not None and not isinstance(architecture, Arch) and (
            architecture not in ARCHITECTURES):
        raise InputError("architecture", architecture,
                         f"must be one of {', '.join(ARCHITECTURES)} or None")
    if isinstance(time_limit_s, bool) or not isinstance(time_limit_s, (int, float)) or not (
        0 < time_limit_s < math.inf
    ):
        raise InputError("time_limit_s", time_limit_s, "must be a finite number of seconds > 0")
    if k == 0:
        return []
    if architecture is not None:
        domain = domain.only(architecture if isinstance(architecture, Arch)
                             else Arch.of(architecture))
    if len(domain) == 0:
        return []
    binaries, constraints = program_size(domain)
    if not fits_time_limit(binaries, constraints, time_limit_s):
        raise SolverTimeoutError(
            f"the integer program was not run: its {binaries:,} binaries and {constraints:,} "
            f"saturation constraints are more than it solves within {time_limit_s:g} s (about "
            f"{ILP_SIZE_PER_SECOND:,} per second)", time_limit_s=time_limit_s, started=False,
            binaries=binaries, constraints=constraints)
    coef = domain.objective_values(objective, noscale=noscale)
    return _Search(domain, coef, float(time_limit_s), start + time_limit_s, objective,
                   noscale).run(k)
