"""Live prices: fetch spot and on-demand prices from AWS, see what changed, use the result.

The fetch is :func:`deepvm_core.cloud.aws.fetch_catalogs` (looked up at call time, so tests patch
that boundary). It writes one catalog per region to the fetched folder; the diff compares it
with the catalog that was active when fetching. A failed fetch writes nothing and leaves the
active catalog alone: the page says why and keeps working.
"""

from __future__ import annotations

import logging
import time

import streamlit as st
from streamlit.elements.lib.column_types import ColumnConfig

from dashboard import catalog_state, charts, keys, plain_view, result_frames, skypilot_view, widgets
from dashboard.columns import Col
from dashboard.plain_view import words
from dashboard.widgets import escape_md as md
from deepvm_core.catalog.diff import PriceDiffSummary, price_diff, summarize_price_diff
from deepvm_core.cloud import aws
from deepvm_core.errors import DeepVMError

logger = logging.getLogger(__name__)

#: Offered in the region picker; any other region name goes in "Other regions".
COMMON_REGIONS = (
    "us-east-1", "us-east-2", "us-west-1", "us-west-2", "ca-central-1", "sa-east-1",
    "eu-west-1", "eu-west-2", "eu-west-3", "eu-central-1", "eu-north-1",
    "ap-south-1", "ap-northeast-1", "ap-northeast-2", "ap-southeast-1", "ap-southeast-2",
)
SPOT_LABELS = {"min": "Cheapest zone", "median": "Median over zones"}
#: What to do about a failed fetch, by ``FetchError.kind``.
FETCH_HINTS = {
    "credentials": "Give AWS credentials the usual way (environment variables, "
                   "~/.aws/credentials, SSO, or a profile in the field above). The app never "
                   "shows them.",
    "unreachable": "Check the network connection (and any AWS_ENDPOINT_URL_* setting).",
    "timeout": "AWS did not answer in time: check the connection, or try again.",
    "throttled": "AWS throttled the requests: wait a little, or allow more attempts under "
                 "Advanced.",
    "access_denied": "The credentials lack the permission named above "
                     "(ec2:DescribeInstanceTypes, ec2:DescribeSpotPriceHistory, "
                     "pricing:GetProducts).",
    "no_offers": "Choose other regions or instance types.",
}


# ----------------------------------------------------------------------------- fetching


def form(active: catalog_state.ActiveCatalog) -> bool:
    """The fetch settings; True when "Fetch live prices" was pressed."""
    names = [t.name for t in (*active.catalog.gpu_types, *active.catalog.cpu_types)]
    with st.form("lp_form", border=True):
        left, right = st.columns([0.62, 0.38], gap="medium")
        regions, more = left.columns([0.62, 0.38])
        regions.multiselect("Regions", COMMON_REGIONS, key=keys.LIVE_REGIONS.name,
                            persist_state=keys.PERSIST,
                            placeholder="Choose AWS regions",
                            help="One catalog per region (fetched one after the other).")
        more.text_input("Other regions", key=keys.LIVE_MORE_REGIONS.name,
                        persist_state=keys.PERSIST,
                        placeholder="like ap-south-2",
                        help="Any other AWS region names, comma- or space-separated.")
        right.radio("Spot price per type", list(SPOT_LABELS), key=keys.LIVE_SPOT.name,
                    persist_state=keys.PERSIST, horizontal=True,
                    format_func=SPOT_LABELS.__getitem__,
                    help="AWS gives a spot price per availability zone: keep the cheapest "
                         "zone's, or the median over zones.")
        left.text_input(
            "Instance types (names or globs)", key=keys.LIVE_TYPES.name,
            persist_state=keys.PERSIST,
            placeholder=f"empty: the active catalog's {len(names)} types",
            help="Comma- or space-separated, like 'g5.*, c5.xlarge'. Empty: the types of the "
                 f"active catalog ({', '.join(names)}). eFLOPS, scaling fits and quotas come "
                 "from the active catalog.")
        right.text_input("AWS profile (optional)", key=keys.LIVE_PROFILE.name,
                         persist_state=keys.PERSIST,
                         placeholder="default chain",
                         help="A profile of your AWS config files. Empty: the standard "
                              "credential chain (environment, ~/.aws, SSO, instance role).")
        with st.expander("Advanced"):
            st.number_input("Attempts per request", 1, 20, step=1, key=keys.LIVE_ATTEMPTS.name,
                            persist_state=keys.PERSIST,
                            help="All attempts of one request, retries included "
                                 "(adaptive backoff); 1 = no retry.")
        pressed = st.form_submit_button("Fetch live prices", key="lp_fetch", type="primary",
                                        icon=":material/cloud_download:")
    return pressed


def fetch(active: catalog_state.ActiveCatalog) -> None:
    """Run the fetch with a live status box; keep the result (or why it failed)."""
    keys.LIVE_ERROR.set(None)
    keys.LIVE_NOTICE.set(None)
    regions = [*keys.LIVE_REGIONS.get(), *keys.LIVE_MORE_REGIONS.get().replace(",", " ").split()]
    types = keys.LIVE_TYPES.get().strip()
    started = time.monotonic()
    with st.status(f"Fetching live prices for {', '.join(regions) or 'no region'}…",
                   expanded=True) as status:
        bar = st.progress(0.0, text="Starting")

        def progress(step: str, done: int, total: int) -> None:
            bar.progress(min(done / total, 1.0) if total else 1.0, text=md(step))
            status.update(label=f"Fetching live prices · step {min(done + 1, total)} of {total}",
                          expanded=True)

        try:
            patterns = aws.validate_instance_types([types]) if types else None
            result = aws.fetch_catalogs(
                regions, base=active.catalog, instance_types=patterns,
                profile=keys.LIVE_PROFILE.get().strip() or None,
                spot_aggregate=keys.LIVE_SPOT.get(),
                max_attempts=int(keys.LIVE_ATTEMPTS.get()), progress=progress)
        except DeepVMError as exc:  # FetchError names the operation and the region
            keys.LIVE_ERROR.set((str(exc), getattr(exc, "kind", None)))
        except Exception as exc:  # noqa: BLE001 - the page's guard: a message, never a traceback
            logger.warning("live price fetch failed: %s", type(exc).__name__)
            keys.LIVE_ERROR.set((aws.sanitize_message(f"the fetch failed unexpectedly "
                                                      f"({type(exc).__name__}: {exc})"), None))
        if keys.LIVE_ERROR.get() is not None:
            status.update(label="Fetch failed: nothing was written", state="error",
                          expanded=False)
            return
        seconds = time.monotonic() - started
        status.update(label=f"Fetched {len(result.regions)} region(s) in {seconds:.1f} s",
                      state="complete", expanded=False)
    keys.LAST_FETCH.set(catalog_state.LastFetch(result, active.catalog, active.label, patterns))
    keys.LIVE_VIEW_REGION.set(result.regions[0].region)


def failure(active: catalog_state.ActiveCatalog) -> None:
    """The last fetch's failure, if any, and what to do."""
    widgets.fetch_failure("Fetch", keys.LIVE_ERROR.get(), FETCH_HINTS, active,
                          " and every page keeps working on the catalogs at hand")


# ----------------------------------------------------------------------------- results


def use_catalog(cid: str, name: str) -> None:
    """Callback of "Use this catalog": the fetched catalog becomes the sidebar's."""
    catalog_state.select_catalog(cid)
    keys.LIVE_NOTICE.set(name)


def diff_columns() -> dict[str, ColumnConfig]:
    """Short headers (the frame keeps the full names) so that the table fits unscrolled."""
    n, t = st.column_config.NumberColumn, st.column_config.TextColumn
    usd = {Col.OD_OLD: "OD old", Col.OD_NEW: "OD new", Col.SPOT_OLD: "Spot old",
           Col.SPOT_NEW: "Spot new"}
    change = {Col.OD_CHANGE: "OD Δ %", Col.SPOT_CHANGE: "Spot Δ %"}
    return {
        **{c: n(label, format="%.4f", help=f"{c}, USD per hour") for c, label in usd.items()},
        **{c: n(label, format="%+.1f%%", help=f"{c}: (new - old) / old")
           for c, label in change.items()},
        Col.KIND: t(Col.KIND, width="small"), Col.STATUS: t(Col.STATUS, width="small"),
        Col.NOTE: t(Col.NOTE, width="medium"),
    }


def summary(counts: PriceDiffSummary) -> None:
    spot = counts.median_spot_change_pct
    cols = st.columns(5)
    cols[0].metric("Types fetched", counts.fetched)
    cols[1].metric("Prices changed", counts.changed,
                   delta=f"median spot {spot:+.1f} %" if spot is not None else None,
                   delta_color="off", delta_arrow="off")
    cols[2].metric("Added", counts.added,
                   help="In the fetched catalog, not in the one compared with")
    cols[3].metric("Missing", counts.missing,
                   help="In the catalog compared with, not fetched (see the notes for why)")
    cols[4].metric(words("Needs eFLOPS"), counts.needs_eflops,
                   help="GPU types without eFLOPS are left out of solving")


def region_result(last: catalog_state.LastFetch, fetched: aws.RegionFetch,
                  active: catalog_state.ActiveCatalog) -> None:
    catalog = fetched.catalog
    changes = price_diff(last.baseline, catalog, last.instance_types)
    frame = result_frames.diff_frame(changes)
    summary(summarize_price_diff(changes))
    needs = [c.name for c in changes if c.needs_eflops]
    if needs:
        with st.container(border=True):
            st.warning(words(f"**Needs eFLOPS**: {', '.join(needs)}. These GPU types are left out "
                             "of solving until their eFLOPS is supplied: use this catalog, then "
                             "give eFLOPS in the Catalog editor (and save it under a name)."),
                       icon=":material/warning:")
            st.page_link("views/catalog_editor.py", label="Open the Catalog editor",
                         icon=":material/edit_note:")
    plain_view.dataframe(frame, hide_index=True, column_config=diff_columns(), key="lp_diff",
                         placeholder="–", height=widgets.table_height(len(frame)))
    if (frame[[Col.SPOT_CHANGE, Col.OD_CHANGE]].abs() > 0.005).any().any():
        plain_view.chart(charts.price_change_bars(frame), key="lp_change_chart")
    else:
        st.caption("No price of a type in both catalogs changed.")

    with st.container(border=True, key="lp_notes"):
        st.markdown(words(f"**Fetch notes** · {md(fetched.region)}"))
        st.markdown(words("\n".join(f"- {md(note)}" for note in fetched.notes) or "No notes."))

    cid = catalog_state.fetched_catalog_id(fetched.path) if fetched.path is not None else None
    available = cid is not None and cid in catalog_state.catalog_choices()
    in_use = available and active.id == cid
    left, right = st.columns([0.3, 0.7], vertical_alignment="center")
    left.button("Use this catalog", key="lp_use", type="primary", icon=":material/check:",
                on_click=use_catalog, args=(cid, catalog.name), disabled=not available or in_use,
                width="stretch",
                help=None if available else "The file is no longer in the fetched folder")
    where = fetched.path.name if fetched.path is not None else "not written"
    right.caption(words(f"**{md(catalog.name)}** ({catalog.region}, prices {catalog.prices_date}) "
                        f"· saved as `{where}` in the fetched folder"
                        + (" · **in use in the sidebar**" if in_use else "")))


def results(last: catalog_state.LastFetch, active: catalog_state.ActiveCatalog) -> None:
    result = last.result
    st.subheader("Fetched prices")
    st.caption(words(f"Fetched at {result.fetched_at} · spot price: "
                     f"{SPOT_LABELS[result.spot_aggregate].lower()} · compared with "
                     f"**{md(last.baseline_label)}** (the active catalog when you fetched) · "
                     "types: "
                     + (md(", ".join(last.instance_types)) if last.instance_types
                  else "those of the compared catalog")))
    name = keys.LIVE_NOTICE.get()
    keys.LIVE_NOTICE.set(None)
    if name:
        st.success(words(f"**{md(name)}** is now the active catalog of every page (see the "
                         "sidebar)."),
                   icon=":material/check_circle:")
        a, b, _ = st.columns([0.25, 0.25, 0.5])
        with a:
            st.page_link("views/recommend.py", label="Recommend from it",
                         icon=":material/recommend:")
        with b:
            st.page_link("views/regions.py", label="Compare the regions",
                         icon=":material/public:")
    regions = [r.region for r in result.regions]
    view = keys.LIVE_VIEW_REGION
    if view.get() not in regions:
        view.set(regions[0])
    if len(regions) > 1:
        st.radio("Region", regions, key=view.name, horizontal=True)
    region_result(last, result.regions[regions.index(str(view.get()))], active)
    if len(regions) > 1:
        st.page_link("views/regions.py", label="Compare these regions for your scenario",
                     icon=":material/public:")


def main() -> None:
    active = catalog_state.active_catalog()
    st.title("Live prices")
    st.caption(words("Fetch today's spot and on-demand prices from AWS (EC2 and the Price List "
                     "API) and compare them with the active catalog, "
                     f"{widgets.catalog_named(active)}. Each region's catalog is saved in the "
                     "fetched folder and listed in the sidebar."))
    skypilot_view.refresh_section(active, COMMON_REGIONS)
    if form(active):
        fetch(active)
    failure(active)
    last = keys.LAST_FETCH.get()
    if last is None:
        if not keys.LIVE_ERROR.get() and not keys.SKY_ERROR.get():
            st.info("Nothing fetched yet in this session. Earlier fetches are in the sidebar's "
                    "catalog list, and the Regions page compares them.",
                    icon=":material/info:")
        return
    results(last, active)


widgets.run_page(main)
