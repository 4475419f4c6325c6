"""An estimate to keep (issue 27): the plan's expected cost as line items, a CSV and a
print-friendly HTML summary, from the same numbers as the card.

**The split** (``job-model.md``, "Total cost";
:mod:`deepvm_core.job.closed_form`): the expected cost is ``C = P (T - N W - S) + P_od (N W +
S)`` with ``P = P_spot + P_od`` the cluster's hourly price, ``P_od`` its on-demand part (the
anchor, or the memory nodes), ``T`` the expected makespan, ``N`` the expected events, ``W``
the capacity wait after each and ``S`` the expected wait before the first attempt. Rewritten,
``C = P_spot (T - N W - S) + P_od T``: the on-demand VMs are billed for the whole makespan,
the spot VMs while they are up. So the spot hours are ``(C - P_od T) / P_spot``, and the lines
add up to ``C`` (to the float). An estimate from spot traces (a backtest, whose on-demand
fallback hours are not split out) is one line: the cluster as the traces priced it.

**Storage** is not in the job model's cost: each VM's block volume (EBS gp3) for the whole
makespan, an upper bound (a reclaimed spot VM's volume goes with it),
``VMs x size GB x T / HOURS_PER_MONTH x price per GB-month``; its own line below the plan's
total, then the total with storage. The size per VM is an input (:data:`DEFAULT_STORAGE_GB_PER_VM`;
0 leaves storage out).
"""

from __future__ import annotations

import csv
import html
import io
import math
from dataclasses import dataclass
from typing import Final

from deepvm_core.catalog import Catalog
from deepvm_core.errors import InputError
from deepvm_core.job.estimate import PlanEstimate
from deepvm_core.text import duration, usd, usd_per_hour
from deepvm_core.units import HOURS_PER_DAY

#: Size of each VM's block volume in the estimate, GB (a root volume with room for a
#: framework image and a dataset cache); editable.
DEFAULT_STORAGE_GB_PER_VM: Final = 100.0
#: EBS gp3 storage price in us-east-1, USD per GB-month (AWS's EBS pricing page, 2025; other
#: regions differ by a few cents).
GP3_USD_PER_GB_MONTH: Final = 0.08
#: Hours in a billing month (AWS bills EBS per GB-month of 730 hours).
HOURS_PER_MONTH: Final = 730.0
#: The most storage per VM the estimate takes, GB (an EBS gp3 volume's largest size, 16 TiB).
MAX_STORAGE_GB_PER_VM: Final = 16384.0
#: The CSV's columns.
CSV_COLUMNS: Final = ("item", "count", "hours", "usd_per_hour", "cost_usd", "note")
#: The ``item`` of the row that equals the card's expected cost.
PLAN_TOTAL: Final = "Total: the plan's expected cost"


@dataclass(frozen=True)
class LineItem:
    """One line of the estimate.

    Attributes:
        item: what is bought (``Spot GPU VMs: g4dn.xlarge``).
        count: how many VMs (or GB for storage).
        hours: billed hours each (expected).
        usd_per_hour: the price of one, USD per hour (storage: of all its GB).
        cost_usd: the line's expected cost, USD.
        note: where the hours come from.
    """

    item: str
    count: float
    hours: float
    usd_per_hour: float
    cost_usd: float
    note: str = ""


@dataclass(frozen=True)
class LineItems:
    """The plan's lines, their total (the card's expected cost) and the storage beside it.

    Attributes:
        cluster: the cluster in one line.
        lines: the compute lines; they add up to ``plan_total_usd``.
        plan_total_usd: the plan's expected cost, USD (the card's).
        storage: the storage line, or ``None`` (size 0).
        makespan_hours: the expected makespan the hours come from.
    """

    cluster: str
    lines: tuple[LineItem, ...]
    plan_total_usd: float
    storage: LineItem | None
    makespan_hours: float

    @property
    def total_with_storage_usd(self) -> float:
        """The plan's cost plus the storage, USD."""
        return self.plan_total_usd + (self.storage.cost_usd if self.storage else 0.0)


def check_storage_gb(value: float) -> float:
    """``value`` as GB of storage per VM, or :class:`InputError` naming ``storage_gb_per_vm``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError("storage_gb_per_vm", value, "must be a finite number")
    if not 0 <= value <= MAX_STORAGE_GB_PER_VM:
        raise InputError("storage_gb_per_vm", value,
                         f"must be from 0 to {MAX_STORAGE_GB_PER_VM:g} GB")
    return float(value)


def plan_line_items(estimate: PlanEstimate, catalog: Catalog, *,
                    storage_gb_per_vm: float = DEFAULT_STORAGE_GB_PER_VM) -> LineItems:
    """The line items of ``estimate`` (a cluster that finishes) on ``catalog``'s prices.

    Raises:
        InputError: the cluster is not expected to finish (no cost to split), or a storage
            size out of range.
    """
    size = check_storage_gb(storage_gb_per_vm)
    if estimate.does_not_finish is not None or not math.isfinite(estimate.expected_cost_usd):
        raise InputError("estimate", estimate.describe(),
                         "is not expected to finish: it has no cost to split into lines")
    config = estimate.configuration
    gpu = next(g for g in catalog.gpu_types if g.name == config.gpu)
    cost, hours = estimate.expected_cost_usd, estimate.expected_makespan_hours
    spot_price = config.gpu_spot * gpu.spot_usd_per_hour
    od_price = config.hourly_price_usd - spot_price
    lines: list[LineItem] = []
    if estimate.evaluated_by != "closed_form":
        lines.append(LineItem(f"Cluster, replayed on spot traces: {config.describe()}",
                              config.total_vms, hours, config.hourly_price_usd, cost,
                              f"{estimate.evaluated_by} over {', '.join(estimate.pools)}; "
                              "spot, on-demand and fallback hours not split"))
    else:
        if config.gpu_on_demand:
            lines.append(LineItem(f"On-demand GPU VM (anchor): {gpu.name}", config.gpu_on_demand,
                                  hours, gpu.on_demand_usd_per_hour,
                                  config.gpu_on_demand * gpu.on_demand_usd_per_hour * hours,
                                  "billed for the whole expected makespan"))
        if config.memory_nodes and config.cpu is not None:
            per_node = od_price / config.memory_nodes
            lines.append(LineItem(f"On-demand memory nodes: {config.cpu}", config.memory_nodes,
                                  hours, per_node, od_price * hours,
                                  "billed for the whole expected makespan"))
        if config.gpu_spot:
            spot_hours = (cost - od_price * hours) / spot_price
            lines.append(LineItem(f"Spot GPU VMs: {gpu.name}", config.gpu_spot, spot_hours,
                                  gpu.spot_usd_per_hour, cost - od_price * hours,
                                  "billed while running: the makespan less the expected "
                                  "capacity waits"))
    storage = None
    if size > 0:
        per_hour = size * GP3_USD_PER_GB_MONTH / HOURS_PER_MONTH
        storage = LineItem(f"Storage: EBS gp3, {size:g} GB per VM", config.total_vms, hours,
                           per_hour, config.total_vms * per_hour * hours,
                           f"{GP3_USD_PER_GB_MONTH:g} USD per GB-month, every VM for the whole "
                           "makespan (an upper bound); not in the plan's cost")
    return LineItems(config.describe(), tuple(lines), cost, storage, hours)


def line_items_csv(items: LineItems) -> str:
    """The CSV: the compute lines, the plan's total (:data:`PLAN_TOTAL`, the card's expected
    cost), then the storage line and the total with storage when there is storage."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)

    def row(line: LineItem) -> None:
        writer.writerow((line.item, f"{line.count:g}", f"{line.hours:.4f}",
                         f"{line.usd_per_hour:.6f}", f"{line.cost_usd:.2f}", line.note))

    for line in items.lines:
        row(line)
    writer.writerow((PLAN_TOTAL, "", f"{items.makespan_hours:.4f}", "",
                     f"{items.plan_total_usd:.2f}", items.cluster))
    if items.storage is not None:
        row(items.storage)
        writer.writerow(("Total with storage", "", "", "",
                         f"{items.total_with_storage_usd:.2f}", ""))
    return out.getvalue()


def summary_html(title: str, sentences: tuple[str, ...], items: LineItems) -> str:
    """A self-contained page to print or save as PDF: ``title``, the card's ``sentences`` and
    the line items (no script, no request to any host)."""
    def cells(line: LineItem) -> str:
        return (f"<tr><td>{html.escape(line.item)}</td><td>{line.count:g}</td>"
                f"<td>{html.escape(duration(line.hours))}</td>"
                f"<td>{html.escape(usd_per_hour(line.usd_per_hour))}</td>"
                f"<td class=n>{html.escape(usd(line.cost_usd))}</td>"
                f"<td>{html.escape(line.note)}</td></tr>")

    rows = [cells(line) for line in items.lines]
    rows.append(f"<tr class=total><td>{html.escape(PLAN_TOTAL)}</td><td></td>"
                f"<td>{html.escape(duration(items.makespan_hours))}</td><td></td>"
                f"<td class=n>{html.escape(usd(items.plan_total_usd))}</td><td></td></tr>")
    if items.storage is not None:
        rows.append(cells(items.storage))
        rows.append(f"<tr class=total><td>Total with storage</td><td></td><td></td><td></td>"
                    f"<td class=n>{html.escape(usd(items.total_with_storage_usd))}</td>"
                    "<td></td></tr>")
    paragraphs = "".join(f"<p>{html.escape(s)}</p>" for s in sentences)
    days = items.makespan_hours / HOURS_PER_DAY
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            f"<title>{html.escape(title)}</title><style>"
            "body{font:14px/1.45 sans-serif;color:#1b2430;max-width:60em;margin:2em auto}"
            "table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ccd;"
            "padding:4px 6px;text-align:left;vertical-align:top}.n{text-align:right}"
            ".total td{font-weight:bold}@media print{body{margin:0}}"
            f"</style></head><body><h1>{html.escape(title)}</h1>{paragraphs}"
            f"<h2>Line items</h2><p>{html.escape(items.cluster)}; expected makespan "
            f"{html.escape(duration(items.makespan_hours))} ({days:.2f} days).</p>"
            "<table><tr><th>Item</th><th>Count</th><th>Hours each</th><th>Price each</th>"
            f"<th class=n>Cost</th><th>Note</th></tr>{''.join(rows)}</table></body></html>\n")
