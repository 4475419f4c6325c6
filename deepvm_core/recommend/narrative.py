"""Why a recommendation: one or two plain sentences generated from a :class:`Recommendation`.

The dashboard shows them under the Recommend card so that a user learns not only *what* to
rent and its hourly price, but *why*: how its training speed compares with the paper's
baseline policies (Cost-First and Performance-First) within the same hourly budget, and what
keeps the checkpoints safe from spot reclaims (Tiering's memory nodes or Single Anchor's
on-demand GPU VM). Every number comes from the configurations; a baseline with more
speed than the choice is said so, never hidden.

Speed is the job's (epochs per hour, ``job-model.md``, the same figure as the job's time on
the card) unless the objective is ``paper`` or a speed is unknown: then it is the paper's proxy,
performance (eFLOPS x n x K(n)), said as "training throughput" (issue 24).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from deepvm_core.catalog import Catalog
from deepvm_core.model import Configuration, Objective
from deepvm_core.recommend.recommendation import Recommendation
from deepvm_core.text import usd_per_hour

#: The baselines the choice is compared with, in the order of :data:`POLICIES`.
BASELINES = (("Cost-First", "cost_first"), ("Performance-First", "performance_first"))
#: Below this relative difference (in percent) two throughputs count as the same.
SAME_PERCENT = 0.05


def _count(number: int, singular: str, *, capital: bool = False) -> str:
    """``1 VM`` / ``17 VMs``; ``One VM`` at the start of a sentence."""
    head = "One" if capital and number == 1 else str(number)
    return f"{head} {singular}{'' if number == 1 else 's'}"


def subject(config: Configuration) -> str:
    """The cluster as the subject of a sentence: ``17 g4dn.xlarge spot VMs``."""
    if config.architecture == "tiering":
        return _count(config.gpu_spot, f"{config.gpu} spot VM")
    return _count(config.gpu_vms, f"{config.gpu} VM")


def short(config: Configuration) -> str:
    """The cluster in brackets: ``7 g5.xlarge`` or ``17 g4dn.xlarge spot + 1 c5.xlarge``."""
    if config.architecture == "tiering":
        return f"{config.gpu_spot} {config.gpu} spot + {config.memory_nodes} {config.cpu}"
    return f"{config.gpu_vms} {config.gpu}"


def percent_more(value: float, reference: float) -> float | None:
    """How much larger ``value`` is than ``reference``, in percent (``None`` if undefined)."""
    if not (math.isfinite(value) and math.isfinite(reference)) or reference <= 0:
        return None
    return (value / reference - 1.0) * 100.0


def _percent(diff: float) -> str:
    size = abs(diff)
    return f"{size:.1f} %" if size < 9.95 else f"{size:.0f} %"


def _names(labels: list[str]) -> str:
    return " and ".join(labels)


@dataclass(frozen=True)
class _Measure:
    """What the sentences compare: the job's speed, or the paper's proxy."""

    job_speed: bool

    @property
    def name(self) -> str:
        return "training speed" if self.job_speed else "training throughput"

    @property
    def per_usd(self) -> str:
        return "epochs of the job per USD" if self.job_speed else "throughput per USD"

    def of(self, config: Configuration) -> float:
        if self.job_speed and config.speed_epochs_per_hour is not None:
            return config.speed_epochs_per_hour
        return config.performance


def uses_job_speed(objective: Objective, *configs: Configuration | None) -> bool:
    """Whether the comparisons use the job's speed (not the paper's proxy): unless the objective
    is ``paper`` or a speed is unknown."""
    return objective != "paper" and all(
        c.speed_epochs_per_hour is not None for c in configs if c is not None)


def compared_value(config: Configuration, job_speed: bool) -> float:
    """What a comparison reads of ``config``: the job's epochs per hour, or performance."""
    return _Measure(job_speed).of(config)


def _measure(objective: Objective, *configs: Configuration | None) -> _Measure:
    """The job's speed unless the objective is ``paper`` or a speed is unknown."""
    return _Measure(uses_job_speed(objective, *configs))


def _clause(chosen: Configuration, labels: list[str], baseline: Configuration, *,
            first: bool, measure: _Measure) -> str | None:
    """``5.9 % more training speed than Cost-First (16 g4dn.xlarge)``, or ``None``."""
    diff = percent_more(measure.of(chosen), measure.of(baseline))
    if diff is None:
        return None
    what = f"{measure.name} " if first else ""
    named = f"{_names(labels)} ({short(baseline)})"
    if abs(diff) < SAME_PERCENT:
        return f"the same {what}as {named}"
    return f"{_percent(diff)} {'more' if diff > 0 else 'less'} {what}than {named}"


def _stronger(chosen: Configuration, labels: list[str], baseline: Configuration,
              diff: float, measure: _Measure) -> str:
    """A baseline is faster than the choice: say so, and what the choice wins."""
    verb = "has" if len(labels) == 1 else "have"
    extra = baseline.hourly_price_usd - chosen.hourly_price_usd
    costs = f", for {usd_per_hour(extra)} more" if extra >= 0.005 else ""
    text = (f"{_names(labels)} ({short(baseline)}) {verb} {_percent(diff)} more "
            f"{measure.name} than this choice ({short(chosen)}){costs}")
    per_usd = percent_more(measure.of(chosen) / chosen.hourly_price_usd,
                           measure.of(baseline) / baseline.hourly_price_usd) \
        if chosen.hourly_price_usd > 0 and baseline.hourly_price_usd > 0 else None
    if per_usd is not None and per_usd >= SAME_PERCENT:
        text += f"; this choice delivers {_percent(per_usd)} more {measure.per_usd}"
    return text + "."


def comparison(rec: Recommendation, chosen: Configuration) -> str | None:
    """The sentence comparing ``chosen`` with the baselines, strongest baseline first."""
    if not (math.isfinite(chosen.performance) and chosen.performance > 0):
        return None
    single = chosen.gpu_spot == 1 if chosen.architecture == "tiering" else chosen.total_vms == 1
    budget = usd_per_hour(rec.scenario.pw_usd_per_hour)
    measure = _measure(rec.scenario.objective, chosen,
                       *(rec.policy(name) for _, name in BASELINES))
    found = [(label, config) for label, name in BASELINES
             if (config := rec.policy(name)) is not None
             and math.isfinite(measure.of(config)) and measure.of(config) > 0]
    if not found:
        s = "s" if single else ""
        rate = (f"train{s} at {measure.of(chosen):,.2f} epochs of the job per hour"
                if measure.job_speed else
                f"deliver{s} a relative throughput of {chosen.performance:,.0f}")
        return (f"{subject(chosen)} {rate} for {usd_per_hour(chosen.hourly_price_usd)}; "
                f"neither Cost-First nor Performance-First finds a cluster within {budget}.")
    same = [label for label, config in found if config == chosen]
    groups: list[tuple[list[str], Configuration]] = []
    for label, config in sorted(found, key=lambda item: -measure.of(item[1])):
        if config == chosen:
            continue
        match = next((g for g in groups if g[1] == config), None)
        if match is None:
            groups.append(([label], config))
        else:
            match[0].append(label)
    pick = f"{_names(same)}'s pick" if len(same) == 1 else f"the pick of {_names(same)}"
    if not groups:
        return f"{subject(chosen)} {'is' if single else 'are'} also {pick} within {budget}."
    diff = percent_more(measure.of(chosen), measure.of(groups[0][1]))
    if diff is not None and diff <= -SAME_PERCENT:
        return _stronger(chosen, *groups[0], -diff, measure)
    clauses = [c for i, (labels, config) in enumerate(groups)
               if (c := _clause(chosen, labels, config, first=i == 0, measure=measure))
               is not None]
    if not clauses:
        return None
    also = f", also {pick}," if same else ""
    return (f"{subject(chosen)}{also} {'delivers' if single else 'deliver'} "
            f"{', and '.join(clauses)}, within the same budget of {budget}.")


def safety(chosen: Configuration, catalog: Catalog | None = None) -> str:
    """The sentence saying what keeps the checkpoints safe from spot reclaims."""
    if chosen.architecture == "tiering":
        nodes = chosen.memory_nodes
        head = _count(nodes, f"{chosen.cpu} on-demand memory node", capital=True)
        verb = "keeps" if nodes == 1 else "keep"
        price = next((cpu.on_demand_usd_per_hour for cpu in (catalog.cpu_types if catalog
                                                             else ()) if cpu.name == chosen.cpu),
                     None)
        cost = (f" for {usd_per_hour(nodes * price)}" if price is not None and math.isfinite(price)
                else "")
        return f"{head} {verb} the checkpoints safe from spot reclaims{cost}."
    if chosen.gpu_spot == 0:
        return (f"It runs on demand only, so no spot reclaim can interrupt it; cheaper spot "
                f"VMs do not fit this budget next to the on-demand {chosen.gpu}.")
    return (f"One on-demand {chosen.gpu} anchors the {_count(chosen.gpu_spot, 'spot VM')} and "
            "keeps the checkpoints, so a spot reclaim never loses the training state.")


def why(rec: Recommendation, chosen: Configuration | None = None,
        catalog: Catalog | None = None) -> tuple[str, ...]:
    """One or two sentences on why ``chosen`` (default: the best configuration) is a good buy.

    ``catalog`` (the one ``rec`` was computed on) adds the memory nodes' hourly price.
    Nothing feasible gives ``()``.
    """
    chosen = chosen if chosen is not None else rec.best
    if chosen is None:
        return ()
    first = comparison(rec, chosen)
    return tuple(s for s in (first, safety(chosen, catalog)) if s)
