"""The one answer in words (issue 18): what a budget holder reads on Recommend's and Plan a
job's cards. Pure: no Streamlit; the numbers come from the core (:mod:`deepvm_core.job.baseline`,
:mod:`deepvm_core.pipeline.recommend_job`), the formats from :mod:`deepvm_core.text`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from deepvm_core.job.baseline import (
    confidence_in_words,
    on_demand_offer,
    savings,
    slow_warning,
)
from deepvm_core.pipeline.plan import PlanEstimate
from deepvm_core.text import duration, usd
from deepvm_core.workload.workload import EXAMPLE_EPOCH_SECONDS, EXAMPLE_EPOCHS
from deepvm_core.workload.yardstick import YARDSTICK_NAME

#: How the page states the example job (the core's, :mod:`deepvm_core.workload.workload`, on
#: the yardstick of :mod:`deepvm_core.workload.yardstick`).
EXAMPLE_JOB = (f"a ResNet-50-sized job ({EXAMPLE_EPOCHS:g} epochs of {EXAMPLE_EPOCH_SECONDS:g} s "
               f"on one {YARDSTICK_NAME} GPU, the same job in every region): edit the epoch "
               "time to yours")


def finishes(estimate: PlanEstimate) -> bool:
    """The job is expected to finish on the estimate's cluster (finite cost and time)."""
    return (estimate.does_not_finish is None and math.isfinite(estimate.expected_cost_usd)
            and math.isfinite(estimate.expected_makespan_hours))


def job_line(estimate: PlanEstimate, epochs: float, whose: str = "Your job") -> str:
    """``Your job (90 epochs) on this cluster: about 18.08 USD and 6.3 h expected.``"""
    head = f"{whose} ({epochs:g} epochs) on this cluster"
    if not finishes(estimate):
        return f"{head} is not expected to finish: {estimate.does_not_finish or 'no finite time'}."
    return (f"{head}: about **{usd(estimate.expected_cost_usd)}** and "
            f"**{duration(estimate.expected_makespan_hours)}** expected.")


def on_demand_line(estimate: PlanEstimate) -> str | None:
    """``The same cluster on demand: 55.84 USD, 6.1 h, no interruption risk. The spot plan
    saves 37.76 USD (67.6 %).`` (``None`` without a baseline)."""
    od_cost, od_hours = estimate.on_demand_cost_usd, estimate.on_demand_makespan_hours
    if not (math.isfinite(od_cost) and math.isfinite(od_hours)):
        return None
    text = (f"The same cluster on demand: {usd(od_cost)}, {duration(od_hours)}, no "
            "interruption risk.")
    if not finishes(estimate):
        return text
    saved, percent = savings(estimate.expected_cost_usd, od_cost)
    share = "" if percent is None else f" ({abs(percent):.1f} %)"
    if saved >= 0:
        return text + f" The spot plan saves **{usd(saved)}**{share} against it."
    offer = on_demand_offer(estimate.expected_cost_usd, od_cost, od_hours)
    return f"{text} {offer}" if offer is not None else text


def confidence_line(estimate: PlanEstimate) -> str | None:
    """The Monte Carlo P90s in words (the core's sentence), or ``None`` without a simulation."""
    mc = estimate.monte_carlo
    if mc is None or not finishes(estimate):
        return None
    return confidence_in_words(mc.makespan_hours_p90, mc.cost_usd_p90, mc.mean_makespan_hours,
                               mc.mean_cost_usd)


def slow_line(estimate: PlanEstimate) -> str | None:
    """The core's warning when interruptions stretch the job past 1.5x its uninterrupted
    time, naming the on-demand alternative and its cost; ``None`` otherwise."""
    if not (finishes(estimate) and math.isfinite(estimate.on_demand_makespan_hours)):
        return None
    return slow_warning(estimate.expected_makespan_hours, estimate.on_demand_makespan_hours,
                        estimate.on_demand_cost_usd)


@dataclass(frozen=True)
class BrowserZone:
    """The browser's time zone as Streamlit reports it (``st.context``)."""

    name: str | None
    offset_minutes: int | None  # minutes to add to UTC (JavaScript's getTimezoneOffset negated)


def resolve_zone(zone: BrowserZone) -> tuple[tzinfo, str]:
    """The zone to show times in and its name: the browser's IANA zone, else its UTC offset,
    else UTC said as such."""
    if zone.name:
        try:
            return ZoneInfo(zone.name), zone.name
        except (ZoneInfoNotFoundError, ValueError):
            pass
    if zone.offset_minutes is not None:
        offset = timedelta(minutes=zone.offset_minutes)
        sign = "+" if zone.offset_minutes >= 0 else "-"
        minutes = abs(zone.offset_minutes)
        return timezone(offset), f"UTC{sign}{minutes // 60:02d}:{minutes % 60:02d}"
    return UTC, "UTC; your browser's time zone is unknown"


def done_by(hours: float, now: datetime, zone: BrowserZone) -> str | None:
    """``Done by Tuesday, 24 Nov 2026, 15:20 (Europe/Berlin) if started now`` (``now`` aware),
    or ``None`` when the job does not finish."""
    if not math.isfinite(hours) or hours > 24 * 365 * 100:
        return None
    tz, name = resolve_zone(zone)
    end = (now + timedelta(hours=hours)).astimezone(tz)
    return f"Done by **{end:%A, %d %b %Y, %H:%M}** ({name}) if started now."


#: In presentation mode, what each page other than Recommend and Plan a job is for, in plain
#: words (shown at its top, with the way to the answer).
PRESENTATION_LEADS = {
    "instances": "How each GPU type is ranked (computing per dollar) and how it speeds up on "
                 "more machines: the inputs of the answer.",
    "catalog": "The machines and prices every answer is computed from.",
    "simulate": "The research paper's study: every strategy's choice over a range of hourly "
                "spending caps.",
    "live": "Today's prices from AWS; every page then answers with them.",
    "regions": "The best cluster in each AWS region for your hourly spending cap.",
    "method": "How the answer is found, step by step, with the formulas.",
    "spot": "How often spot GPUs are taken back in each market, and what that does to a job's "
            "time and cost.",
    "jobs": "The jobs you launched: how far each has come and what it has cost so far.",
}

#: The sidebar's labels in plain words (presentation mode), by control name.
PLAIN_CONTROL_LABELS = {"pw": "Hourly spending cap (USD/hour)"}
