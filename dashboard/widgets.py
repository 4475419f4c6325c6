"""Small UI pieces shared by the pages (cards, captions, error display)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.elements.lib.column_types import ColumnConfig

from dashboard import catalog_state, glossary, keys, state, url_pages
from dashboard.formatting import TIMES, si
from dashboard.glossary import GLOSSARY
from dashboard.provenance import prices_age
from dashboard.url_warnings import echo
from deepvm_core.catalog.gpu_filter import ANY_GPU, GpuFilter
from deepvm_core.errors import CatalogError, DeepVMError
from deepvm_core.model import ARCHITECTURE_LABELS, Configuration, Objective, Scenario

if TYPE_CHECKING:  # pandas loads with the first table, after the Recommend card
    import pandas as pd
from dashboard import plain_view
from dashboard.columns import RESEARCH_COLUMNS, Col
from dashboard.plain_view import words
from dashboard.server_paths import hide_paths


def run_page(body: Callable[[], None]) -> None:
    """Run a page's body; a :class:`DeepVMError` shows as an error, never as a traceback."""
    try:
        body()
    except CatalogError as exc:
        st.error(words(f"{hide_paths(exc.source)} is invalid: {len(exc.problems)} problem(s)."),
                 icon=":material/error:")
        from dashboard import editor_frames  # pandas: only when a catalog is invalid

        plain_view.dataframe(editor_frames.problems_frame(exc.problems).drop(columns="table_key"),
                             hide_index=True)
    except DeepVMError as exc:
        st.error(words(hide_paths(str(exc))), icon=":material/error:")


def escape_md(text: str) -> str:
    """``text`` shown as typed inside markdown (globs such as ``g5.*``, names with ``_``)."""
    for char in "\\*_`[]<>#|~$":
        text = text.replace(char, "\\" + char)
    return text


def url_warnings() -> None:
    """Warnings about URL parameters that could not be used, until dismissed or until the
    value they are about changes."""
    warnings = state.current_url_warnings()
    box = st.container()  # always there, so the page below keeps its place when dismissed
    if not warnings:
        return
    with box.container(border=True):
        for text in warnings:
            st.warning(words(text), icon=":material/link_off:")
        st.button("Dismiss", key="sb_dismiss_url_warnings",
                  on_click=keys.URL_WARNINGS.set, args=([],))


def presentation_lead(slug: str) -> None:
    """In presentation mode, on the pages other than the answer's: what the page is for, in
    plain words, and the way to the answer."""
    from dashboard.answer import PRESENTATION_LEADS

    lead = PRESENTATION_LEADS.get(slug)
    if not state.presentation() or lead is None:
        return
    with st.container(key="presentation_lead"):
        st.info(words(f"{lead} The answer for your job is on **Recommend** and **Plan a job**."),
                icon=":material/lightbulb:")


def unknown_path_note(path: str | None) -> None:
    """That the URL's ``path`` names no page, and which page is shown instead."""
    if path is None:
        return
    names = ", ".join(f"/{p.slug}" for p in url_pages.PAGES)
    shown = url_pages.PAGE_BY_SLUG[url_pages.DEFAULT_PAGE].title
    st.warning(words(f"No such page: {echo(path)}. Showing {shown} instead; the pages are "
                     f"{names}."),
               icon=":material/link_off:")


def catalog_named(active: catalog_state.ActiveCatalog) -> str:
    """Markdown naming the active catalog as the pages' captions do: its name in bold (as
    typed: a user's catalog name may hold markdown), its region and how old its prices are."""
    return (f"**{escape_md(active.label)}** ({active.catalog.region}, "
            f"{prices_age(active.catalog)})")


def catalog_summary(active: catalog_state.ActiveCatalog) -> str:
    """Markdown naming the active catalog: name (edited), kind, region, price date."""
    c = active.catalog
    kind = catalog_state.KIND_NOTES[active.choice.kind]
    return (f"**{escape_md(active.label)}**  \n"
            f":gray[{kind} · {c.provider} · region **{c.region}** · {prices_age(c)} · "
            f"{len(c.gpu_types)} GPU / {len(c.cpu_types)} CPU types]")


def invalid_draft_notice(slot: DeltaGenerator, active: catalog_state.ActiveCatalog) -> None:
    """In ``slot``: that the editor's draft of the active catalog is invalid, if it is (the
    pages then use the last valid catalog)."""
    count = keys.INVALID_DRAFTS.get().get(active.id)
    if not count:
        return
    slot.warning(words(f"The catalog editor has unsaved, invalid changes to {active.choice.name} "
                       f"({count} problem{'s' if count != 1 else ''}); the last valid catalog is "
                       "in use."), icon=":material/edit_off:")
    slot.page_link(url_pages.PAGE_BY_SLUG["catalog"].file, label="Fix them in the catalog editor",
                   icon=":material/edit_note:")


def scenario_caption(active: catalog_state.ActiveCatalog, scenario: Scenario) -> None:
    """One line with the scenario every number on the page depends on."""
    s = scenario
    objective = ("" if state.presentation() else
                 f" · objective {state.OBJECTIVE_LABELS[s.objective]}")
    st.caption(
        words(f"Catalog {catalog_named(active)} · "
              f"{'hourly spending cap' if state.presentation() else 'PW'} "
              f"**{s.pw_usd_per_hour:g} USD/h** · checkpoint "
              f"{s.checkpoint_gb:g} GB × buffer {s.buffer_checkpoints:g}{objective} · quotas "
              f"{'on' if s.use_quotas else 'off'}"
              + (f" · {s.gpu_filter.clause()}" if s.gpu_filter.active else "")))


def cluster_lines(config: Configuration) -> str:
    """The machines of ``config`` as a markdown list."""
    if config.architecture == "single_anchor":
        return (f"- **{config.gpu_vms} × {config.gpu}**: 1 on-demand (the anchor, keeps the "
                f"checkpoints) + {config.gpu_spot} spot\n- no memory node")
    return (f"- **{config.gpu_spot} × {config.gpu}** spot (all training), 0 on-demand\n"
            f"- **{config.memory_nodes} × {config.cpu}** on-demand memory "
            f"node{'s' if config.memory_nodes != 1 else ''} (checkpoints in RAM)")


def headline(config: Configuration) -> str:
    """``Tiering · 17 × g4dn.xlarge spot + 1 × c5.xlarge memory node``."""
    label = ARCHITECTURE_LABELS[config.architecture]
    if config.architecture == "single_anchor":
        return (f"{label} · {config.gpu_vms} × {config.gpu} (1 on-demand anchor + "
                f"{config.gpu_spot} spot)")
    plural = "s" if config.memory_nodes != 1 else ""
    return (f"{label} · {config.gpu_spot} × {config.gpu} spot + {config.memory_nodes} × "
            f"{config.cpu} memory node{plural}")


def gpu_filter_line(gpu_filter: GpuFilter) -> None:
    """The scenario's GPU filter in the core's sentence (``Only A100 or H100 GPUs with at least
    80 GB each.``), on a card; nothing when no filter is set."""
    if gpu_filter.active:
        st.markdown(words(f":material/filter_alt: {gpu_filter.describe()}"))


def configuration_card(config: Configuration, pw: float, objective: Objective,
                       heading: str, presentation: bool = False,
                       below: Callable[[], None] | None = None,
                       gpu_filter: GpuFilter = ANY_GPU) -> None:
    """The recommended configuration as a bordered card: what to launch, within which GPU
    filter, what it costs per hour, how fast it trains the job (epochs per hour, and as a
    multiple of one A10G or of the named reference type), and (unless ``presentation``, which
    keeps the card short enough for the answer to stay above the fold) the job's epochs per
    hour and per USD and K(n); the paper's proxy (performance, Z, cluster FLOPP) only under the
    paper's objective (issue 24); ``below`` draws the job's answer (its cost and time), before
    the figures."""
    with st.container(border=True, key="rec_card"):
        st.caption(words(heading))
        st.markdown(words(f"### {headline(config)}"))
        gpu_filter_line(gpu_filter)
        left, right = st.columns([0.5, 0.5], gap="large")
        left.markdown(words(cluster_lines(config)))
        share = config.hourly_price_usd / pw if pw > 0 else 1.0
        cap = "hourly spending cap" if presentation else "PW"
        right.progress(min(share, 1.0), text=f"**{config.hourly_price_usd:.2f}** of "
                       f"{'the ' if presentation else ''}**{pw:g}** USD/h {cap} ({share:.0%})")
        speed = config.speed_text(TIMES)
        if speed is not None and config.speed_epochs_per_hour is not None:
            right.markdown(words(f"Training speed: **{speed}** ({config.speed_epochs_per_hour:.2f} "
                                 "epochs of the job per hour)"), help=GLOSSARY["Training speed"])
        if below is not None:  # the job's answer before the figures (above the fold, issue 27)
            below()
        if presentation:  # the price is in the line above; no research figures
            return
        z = objective == "paper"
        per_hour = config.speed_epochs_per_hour
        a, b, c, d = st.columns(4)
        a.metric("Hourly price (USD/h)", f"{config.hourly_price_usd:,.2f}",
                 delta=f"{pw - config.hourly_price_usd:,.2f} under PW", delta_color="off",
                 delta_arrow="off")
        if z or per_hour is None:  # the paper's proxy: only under its objective (issue 24)
            b.metric("Performance", f"{config.performance:,.0f}",
                     help=GLOSSARY["Performance"]
                     + (" Paper's Z, below it: " + GLOSSARY["Paper's Z"] if z else ""),
                     delta=f"Paper's Z = {si(config.z_paper)}" if z else None,
                     delta_color="off", delta_arrow="off")
            c.metric(words("Cluster FLOPP"), si(config.cluster_flopp),
                     help=GLOSSARY["Cluster FLOPP"])
        else:
            b.metric("Epochs per hour", f"{per_hour:,.2f}", help=GLOSSARY["Training speed"])
            c.metric("Epochs per USD", f"{per_hour / config.hourly_price_usd:,.3g}",
                     help="The job's epochs per USD of cluster time, without interruptions")
        d.metric(words("Scaling factor K(n)"), f"{config.scaling_factor:.3f}",
                 help=GLOSSARY["Scaling factor K(n)"])


def table_height(rows: int, limit: int = 25) -> int:
    """Pixels of an ``st.dataframe`` that shows ``rows`` rows (at most ``limit``) unscrolled."""
    return 38 + 35 * max(min(rows, limit), 1)


def number_columns() -> dict[str, ColumnConfig]:
    """Display formats and help (the glossary's) of the columns of :mod:`result_frames`
    frames."""
    n, t = st.column_config.NumberColumn, st.column_config.TextColumn
    g = GLOSSARY
    return {
        Col.RANK: n(Col.RANK, format="%d", width="small"),
        Col.POLICY: t(Col.POLICY, help="DeepVM under each objective and the paper's baselines. "
                      "NoScale: " + g["DeepVM-NoScale"]),
        Col.CONFIG: t(Col.CONFIG, help=glossary.CONFIGURATION_HELP),
        Col.ARCH: t(Col.ARCH, help="Single Anchor: " + g["Single Anchor (SA)"] + " Tiering: "
                    + g["Tiering (TR)"]),
        Col.MEM_NODES: t(Col.MEM_NODES, help=g["Memory node"]),
        Col.PRICE: n(Col.PRICE, format="%.4f", help="Hourly price of the whole cluster"),
        Col.PW_SHARE: n(Col.PW_SHARE, format="%.1f%%", help="Hourly price as a share of PW"),
        Col.PERF: n(Col.PERF, format="%,.0f", help=g["Performance"]),
        Col.OBJECTIVE: n(Col.OBJECTIVE, format="compact",
                         help="Value of the sidebar's objective (Paper's Z, or performance). "
                              "Paper's Z: " + g["Paper's Z"]),
        Col.K: n(Col.K, format="%.3f", help=g["Scaling factor K(n)"]),
        Col.FLOPP: n(Col.FLOPP, format="compact", help=g["Cluster FLOPP"]),
        Col.SPOT: n(Col.SPOT, format="%d", help="Spot GPU VMs. " + g["GPU spot, GPU on-demand"]),
        Col.JOB_HOURS: n(Col.JOB_HOURS, format="%,.2f",
                         help="The job's expected makespan on the cluster, interruptions "
                              "included, hours (the same job in every region)"),
        Col.JOB_COST: n(Col.JOB_COST, format="%,.2f",
                        help="The job's expected cost on the cluster, USD"),
        Col.JOB_RATE: n(Col.JOB_RATE, format="%,.3g",
                        help="The job's epochs per expected hour, interruptions included"),
        Col.ON_DEMAND: n(Col.ON_DEMAND, format="%d",
                         help="On-demand GPU VMs (the anchor). " + g["GPU spot, GPU on-demand"]),
    }


def presented(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as shown: without the research details in presentation mode."""
    if not state.presentation():
        return frame
    return frame.drop(columns=[c for c in RESEARCH_COLUMNS if c in frame.columns])


def fetch_failure(what: str, error: tuple[str, str | None] | None, hints: Mapping[str, str],
                  active: catalog_state.ActiveCatalog, also: str = "") -> None:
    """A failed fetch of catalogs, if ``error`` (its message and kind) says one: what failed
    (``what``: "Fetch", "Refresh"), the hint of its kind, and that the active catalog is
    unchanged (``also``: what follows, from " and ...")."""
    if not error:
        return
    message, kind = error
    st.error(words(f"{what} failed: {escape_md(message)}"), icon=":material/cloud_off:")
    st.caption(words(f"{hints.get(kind or '', '')} The active catalog is unchanged "
                     f"(**{escape_md(active.label)}**){also}.".strip()))
