"""Live prices' refresh from SkyPilot's public AWS catalog: fresh prices without AWS
credentials (:func:`deepvm_core.cloud.skypilot_refresh.refresh_catalogs`, looked up at call
time so tests can patch it), with progress, and a clear message when the address cannot be
reached. The result is shown like a live fetch's (the diff with the active catalog, the notes,
"Use this catalog").

A card's "Refresh prices" (:mod:`dashboard.price_notes`) sets :data:`dashboard.keys.SKY_AUTOSTART`
to its catalog's region and opens Live prices, which then starts the refresh at once.
"""

from __future__ import annotations

import logging
import time

import streamlit as st

from dashboard import catalog_state, keys, widgets
from dashboard.widgets import escape_md as md
from deepvm_core.cloud import skypilot_refresh
from deepvm_core.errors import DeepVMError

logger = logging.getLogger(__name__)

#: What to do about a failed refresh, by ``FetchError.kind``.
SKY_HINTS = {
    "unreachable": "The server cannot reach SkyPilot's public catalog (offline, or a proxy or "
                   "firewall in the way). The bundled and earlier fetched catalogs still work.",
    "timeout": "SkyPilot's catalog did not answer in time: try again, or later.",
    "server_error": "SkyPilot's catalog server had an error: try again later.",
    "malformed": "The file at that address is not SkyPilot's AWS catalog.",
    "no_offers": "SkyPilot's catalog has no rows for that region.",
}
_REGIONS_KEY = "lp_sky_regions"


def _default_regions(active: catalog_state.ActiveCatalog) -> list[str]:
    region = active.catalog.region
    return [region] if active.catalog.provider == "aws" else ["us-east-1"]


def refresh_section(active: catalog_state.ActiveCatalog, regions_offered: tuple[str, ...]) -> None:
    """The refresh box; runs the refresh when its button is pressed or a card asked for it."""
    autostart = keys.SKY_AUTOSTART.get()
    keys.SKY_AUTOSTART.set(None)
    if autostart:
        st.session_state[_REGIONS_KEY] = [autostart]
    elif _REGIONS_KEY not in st.session_state:
        st.session_state[_REGIONS_KEY] = _default_regions(active)
    offered = sorted({*regions_offered, *st.session_state[_REGIONS_KEY]})
    with st.container(border=True, key="lp_sky"):
        st.markdown("**Refresh from SkyPilot's public catalog** · no AWS credentials needed")
        st.caption("SkyPilot rebuilds its AWS catalog (on-demand and per-zone spot prices) "
                   "from AWS every few hours. Each region becomes a catalog like the bundled "
                   "ones, saved in the fetched folder and listed in the sidebar.")
        left, right = st.columns([0.7, 0.3], vertical_alignment="bottom")
        regions = left.multiselect("Regions to refresh", offered, key=_REGIONS_KEY,
                                   placeholder="Choose AWS regions")
        pressed = right.button("Refresh from SkyPilot", key="lp_sky_refresh",
                               icon=":material/refresh:", width="stretch")
    if pressed or autostart:
        refresh(active, list(regions))
    failure(active)


def refresh(active: catalog_state.ActiveCatalog, regions: list[str]) -> None:
    """Run the refresh with a live status box; keep the result (or why it failed)."""
    keys.SKY_ERROR.set(None)
    keys.LIVE_NOTICE.set(None)
    started = time.monotonic()
    with st.status(f"Refreshing {', '.join(regions) or 'no region'} from SkyPilot's public "
                   "catalog…", expanded=True) as status:
        bar = st.progress(0.0, text="Starting")

        def progress(step: str, done: int, total: int) -> None:
            bar.progress(min(done / total, 1.0) if total else 0.0, text=md(step))

        try:
            result = skypilot_refresh.refresh_catalogs(
                skypilot_refresh.RefreshSettings(regions=tuple(regions)), progress=progress)
        except DeepVMError as exc:
            keys.SKY_ERROR.set((str(exc), getattr(exc, "kind", None)))
        except Exception as exc:  # noqa: BLE001 - the page's guard: a message, never a traceback
            logger.warning("SkyPilot refresh failed: %s", type(exc).__name__)
            keys.SKY_ERROR.set((f"the refresh failed unexpectedly ({type(exc).__name__})", None))
        if keys.SKY_ERROR.get() is not None:
            status.update(label="Refresh failed: nothing was written", state="error",
                          expanded=False)
            return
        status.update(label=f"Refreshed {len(result.regions)} region(s) from SkyPilot in "
                            f"{time.monotonic() - started:.1f} s", state="complete",
                      expanded=False)
    keys.LAST_FETCH.set(catalog_state.LastFetch(result, active.catalog, active.label, None))
    keys.LIVE_VIEW_REGION.set(result.regions[0].region)


def failure(active: catalog_state.ActiveCatalog) -> None:
    """The last refresh's failure, if any, and what to do."""
    widgets.fetch_failure("Refresh", keys.SKY_ERROR.get(), SKY_HINTS, active)
