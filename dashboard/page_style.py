"""The dashboard's few layout rules that Streamlit has no option for (issue 20 item 17).

Streamlit pads the main column by 6rem above the first element, on top of its 60 px page
links: at 1280x720 about 120 px of empty screen sat above every page title. Only the top
padding is changed. The rule goes into the page as a markdown ``<style>`` block (an empty
element whose 1rem gap the padding allows for): ``st.html`` applied it a second later, after
the page had been drawn with the old padding.
"""

from __future__ import annotations

import streamlit as st

#: Space between the top of the window and the main column's first element (the page links
#: take about 3.75rem of it; the style block's own 1rem gap follows).
MAIN_TOP_PADDING = "3rem"
CSS = (f'[data-testid="stMainBlockContainer"] {{ padding-top: {MAIN_TOP_PADDING}; }}')


def apply() -> None:
    """Add the layout rules to the page (once per run)."""
    st.markdown(f"<style>{CSS}</style>", unsafe_allow_html=True)
