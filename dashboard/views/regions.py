"""Regions: the best configuration in each region for the sidebar's scenario, and the same job's
expected time and cost on it (ranked by that time under the speed objective).

Works on the AWS catalogs at hand without any fetch: the bundled regional ones (2025-H1) and the
fetched ones on disk. By default those of this session's last fetch, else the newest catalog of
each region (by the last day its prices may be from); any set can be chosen.
"""

from __future__ import annotations

from datetime import date

import streamlit as st

from dashboard import (
    catalog_state,
    charts,
    compute,
    job_view,
    keys,
    plain_view,
    provenance,
    result_frames,
    state,
    widgets,
)
from dashboard.columns import Col
from dashboard.plain_view import words
from dashboard.server_paths import hide_paths
from deepvm_core.catalog import Catalog
from deepvm_core.catalog.age import prices_period
from deepvm_core.errors import CatalogError, DeepVMError
from deepvm_core.model import Scenario
from deepvm_core.recommend.regions import RegionComparison
from deepvm_core.text import duration, usd
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import Workload

#: The provider whose catalogs name a real region.
AWS = "aws"


def regional_choices() -> dict[str, catalog_state.CatalogChoice]:
    """The bundled and fetched catalogs (:func:`main` keeps the AWS ones: a region's)."""
    return {cid: c for cid, c in catalog_state.catalog_choices().items()
            if c.kind in ("bundled", "fetched")}


def load(choices: dict[str, catalog_state.CatalogChoice]
         ) -> tuple[dict[str, Catalog], dict[str, str]]:
    """Each fetched catalog, and why the ones that cannot be used cannot (by id)."""
    catalogs: dict[str, Catalog] = {}
    broken: dict[str, str] = {}
    for cid, choice in choices.items():
        try:
            catalogs[cid] = catalog_state.source_catalog(choice)
        except CatalogError as exc:
            broken[cid] = f"invalid ({len(exc.problems)} problem(s))"
        except (DeepVMError, OSError) as exc:
            broken[cid] = hide_paths(str(exc).splitlines()[0])
    return catalogs, broken


def default_selection(catalogs: dict[str, Catalog]) -> list[str]:
    """The last fetch's catalogs, else the newest catalog of each region."""
    last = keys.LAST_FETCH.get()
    if last is not None:
        ids = [cid for cid in last.catalog_ids if cid in catalogs]
        if ids:
            return ids
    newest: dict[str, tuple[date, str]] = {}
    for cid, c in catalogs.items():
        period = prices_period(c.prices_date)
        last = date.min if period is None else period.last
        if c.region not in newest or last > newest[c.region][0]:
            newest[c.region] = (last, cid)
    return [newest[region][1] for region in sorted(newest)]


def selection(catalogs: dict[str, Catalog]) -> list[str]:
    """The catalogs to compare (multiselect ``rg_catalogs``), seeded again after a new fetch."""
    last = keys.LAST_FETCH.get()
    stamp = last.result.fetched_at if last is not None else None
    if keys.REGION_SEEDED_FOR.get() != stamp:
        keys.REGION_CATALOGS.set(default_selection(catalogs))
        keys.REGION_SEEDED_FOR.set(stamp)
    keys.REGION_CATALOGS.set([cid for cid in keys.REGION_CATALOGS.get() if cid in catalogs])
    chosen = st.multiselect(
        "Catalogs to compare", list(catalogs), key=keys.REGION_CATALOGS.name,
        persist_state=keys.PERSIST,
        format_func=lambda cid: f"{catalogs[cid].region} · {catalogs[cid].name}",
        placeholder="Choose catalogs",
        help="The bundled AWS catalogs of each region and those fetched on the Live prices page "
             "(or with `deepvm fetch`). Default: the last fetch of this session, else the "
             "newest catalog of each region.")
    return chosen


def labels(chosen: list[str], catalogs: dict[str, Catalog]) -> dict[str, Catalog]:
    """``{region: catalog}``; a region chosen twice is told apart by its catalog's name."""
    regions = [catalogs[cid].region for cid in chosen]
    return {(c.region if regions.count(c.region) == 1 else f"{c.region} · {c.name}"): c
            for c in (catalogs[cid] for cid in chosen)}


def best_card(feasible: list[RegionComparison], by_name: dict[str, Catalog], whose: str) -> None:
    """The first region's configuration, the job's expected time and cost there, and its lead
    over the runner-up (``whose``: "Your job" or "The example job")."""
    best = feasible[0]
    if best.best is None or best.performance is None:  # feasible: never
        return
    runner = feasible[1] if len(feasible) > 1 else None
    if best.job_hours is not None and best.job_cost_usd is not None:
        with st.container(border=True, key="rg_best"):
            _best_heading(best, by_name, "BEST REGION FOR THIS SCENARIO AND JOB")
            a, b, c, d = st.columns(4)
            a.metric(words(f"{whose}: expected time"), duration(best.job_hours))
            b.metric(words(f"{whose}: expected cost"), usd(best.job_cost_usd))
            c.metric("Hourly price (USD/h)", f"{best.best.hourly_price_usd:,.2f}")
            if runner is not None and runner.best is not None and runner.job_hours:
                d.metric(words(f"Time vs {runner.region}"), duration(runner.job_hours),
                         f"{best.job_hours / runner.job_hours - 1:+.1%}", delta_color="inverse",
                         help=f"{runner.region}: {runner.best.describe()}")
        return
    with st.container(border=True, key="rg_best"):
        _best_heading(best, by_name, "BEST REGION FOR THIS SCENARIO")
        a, b, c = st.columns(3)
        a.metric("Hourly price (USD/h)", f"{best.best.hourly_price_usd:,.2f}")
        b.metric("Performance", f"{best.performance:,.0f}",
                 help="eFLOPS × n × K(n), relative units")
        if runner is not None and runner.best is not None and runner.performance:
            c.metric(words(f"Performance vs {runner.region}"),
                     f"{best.performance / runner.performance - 1:+.1%}",
                     help=f"{runner.region}: {runner.best.describe()}")


def _best_heading(best: RegionComparison, by_name: dict[str, Catalog], title: str) -> None:
    """The best card's title, region and configuration, and its catalog with its prices'
    age."""
    assert best.best is not None  # best_card returned before when it is None
    st.caption(words(title))
    st.markdown(words(f"### {best.region} · {widgets.headline(best.best)}"))
    st.caption(words(f"catalog {best.catalog_name} · "
                     f"{provenance.prices_age(by_name[best.catalog_name])}"
                     if best.catalog_name in by_name else f"catalog {best.catalog_name}"))


def region_job(catalog: Catalog, scenario: Scenario
               ) -> tuple[Workload | None, SpeedupModel | None, str]:
    """The job the regions are compared for: the one set on Plan a job, else the example job
    (``None``; its epoch time is on one A10G, the same job in every region), and whose it is."""
    if keys.PLAN_ACTIVE.get():
        try:
            inputs = job_view.job_inputs(catalog, scenario, 1)
        except DeepVMError as exc:
            st.warning(words(f"Your job cannot be used here: {exc}. The example job is used "
                             "instead."),
                       icon=":material/warning:")
        else:
            return inputs.workload, inputs.speedup, "Your job"
    return None, None, "The example job"


def comparison(by_region: dict[str, Catalog]) -> None:
    scenario = state.scenario()
    s = scenario
    cap = "Hourly spending cap" if state.presentation() else "PW"
    st.caption(words(f"{cap} **{s.pw_usd_per_hour:g} USD/h** · checkpoint {s.checkpoint_gb:g} GB × "
                     f"buffer {s.buffer_checkpoints:g} · objective "
                     f"{state.OBJECTIVE_LABELS[s.objective]} · quotas "
                     f"{'on' if s.use_quotas else 'off'} (the sidebar's scenario)"))
    workload, speedup, whose = region_job(next(iter(by_region.values())), scenario)
    rows = compute.compare_regions(by_region, scenario, workload, speedup)
    frame = result_frames.region_frame(rows, s.pw_usd_per_hour, s.objective)
    feasible = [r for r in rows if r.best is not None]
    if feasible:
        best_card(feasible, {c.name: c for c in by_region.values()}, whose)
    columns = {**widgets.number_columns(),
               Col.NOTE: st.column_config.TextColumn(Col.NOTE, help="Why nothing is feasible")}
    table = widgets.presented(frame)
    shown = [c for c in table.columns
             if c != Col.CATALOG and (c != Col.NOTE or len(feasible) < len(rows))]
    plain_view.dataframe(table, hide_index=True, column_config=columns, column_order=shown,
                         key="rg_table", placeholder="–", height=widgets.table_height(len(frame)))
    if feasible:
        plain_view.chart(charts.region_bars(frame, s.objective), key="rg_chart")
    for r in rows:
        if r.best is None:
            st.warning(words(f"**{widgets.escape_md(r.region)}**: nothing is feasible. "
                             f"{widgets.escape_md(r.explanation or '')}"),
                       icon=":material/block:")


def main() -> None:
    st.title("Regions")
    st.caption(words("The best DeepVM configuration in each region, from the bundled regional "
                     "catalogs and the fetched ones, for the scenario in the sidebar, with the "
                     "job's expected time and cost on it (the job set on Plan a job, else the "
                     "example job, whose epoch time is on one A10G in every region). Under the "
                     "speed objective the regions are ranked by that time. Compare catalogs of the "
                     "same age: prices change over time."))
    choices = regional_choices()
    catalogs, broken = load(choices)
    catalogs = {cid: c for cid, c in catalogs.items() if c.provider == AWS}
    if broken:
        st.warning(words("Left out of the list: " + "; ".join(
            f"{choices[cid].name}: {why}" for cid, why in broken.items())),
            icon=":material/warning:")
    if not catalogs:
        st.info("No regional AWS catalog here. Fetch live prices for one or more regions "
                "first.", icon=":material/info:")
        st.page_link("views/live_prices.py", label="Fetch live prices",
                     icon=":material/cloud_download:")
        return
    chosen = selection(catalogs)
    if not chosen:
        st.info("Choose at least one fetched catalog above.", icon=":material/info:")
        return
    comparison(labels(chosen, catalogs))
    st.page_link("views/live_prices.py", label="Fetch more regions",
                 icon=":material/cloud_download:")


widgets.run_page(main)
