"""What a card says about its prices, in the core's words: the zone behind the spot price
(:func:`deepvm_core.market.zones.zone_sentence`) and, next to the on-demand saving, that the
catalog's prices are stale (:func:`deepvm_core.catalog.age.stale_saving_note`) with the
refresh one click away (Live prices, :mod:`dashboard.skypilot_view`)."""

from __future__ import annotations

import json
from datetime import date

import streamlit as st

from dashboard import keys, url_pages
from dashboard.plain_view import words
from deepvm_core.catalog import Catalog
from deepvm_core.catalog.age import stale_saving_note
from deepvm_core.io.zone_record import with_spot_zone
from deepvm_core.market.zones import CAPACITY_WEIGHTED_NOTE, zone_sentence
from deepvm_core.model import Configuration


def zone_caption(catalog: Catalog, config: Configuration, pw_usd_per_hour: float | None,
                 key: str) -> None:
    """The zone sentence of ``config`` as a caption (AWS catalogs; nothing without spot
    VMs)."""
    if catalog.provider != "aws":
        return
    text = zone_sentence(catalog, config, pw_usd_per_hour=pw_usd_per_hour)
    if text:
        with st.container(key=key):
            st.caption(words(f":material/location_on: {text}"), help=CAPACITY_WEIGHTED_NOTE)


def stale_saving(catalog: Catalog, config: Configuration, today: date | None = None) -> None:
    """The stale-prices note and the "Refresh prices" button, when the catalog is an AWS one
    older than the core's limit."""
    if catalog.provider != "aws":
        return
    note = stale_saving_note(catalog.prices_date, config.gpu, today or date.today())
    if note is None:
        return
    with st.container(key="stale_prices"):
        left, right = st.columns([0.72, 0.28], vertical_alignment="center")
        left.caption(words(f":material/history: {note[:1].upper()}{note[1:]}."))
        if right.button("Refresh prices", key="stale_refresh", icon=":material/refresh:",
                        help=f"Rebuild the {catalog.region} catalog from SkyPilot's public "
                             "catalog on Live prices (no AWS credentials needed)."):
            keys.SKY_AUTOSTART.set(catalog.region)
            st.switch_page(url_pages.PAGE_BY_SLUG["live"].file,
                           query_params=st.query_params.to_dict())


def zoned_export(text: str, catalog: Catalog, chosen: Configuration | None,
                 pw_usd_per_hour: float | None) -> str:
    """The export ``text`` with ``chosen.spot_zone`` (the zone IDs the Fleet requests pin,
    :mod:`deepvm_core.io.zone_record`) when the chosen type has per-zone prices; the catalog's
    prices as they are (the rule they match is named)."""
    doc = json.loads(text)
    zoned = with_spot_zone(doc, catalog, chosen, None, pw_usd_per_hour)
    return text if zoned == doc else json.dumps(zoned, indent=2) + "\n"
