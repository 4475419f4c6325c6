"""DeepVM Studio: the Streamlit dashboard's script (``make run`` starts it through ``serve.py``;
``streamlit run dashboard/app.py`` works too).

Page config, navigation, the sidebar's catalog choice, the current page, then the rest of the
shared sidebar (the scenario's controls): the page's content reaches the browser first.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dashboard import glossary, state, url, widgets
from deepvm_core.errors import DeepVMError

st.set_page_config(page_title="DeepVM Studio", page_icon=":material/cloud:", layout="wide",
                   initial_sidebar_state="expanded")
state.init_state()


def root() -> None:
    """The root URL's page: Recommend's script, run in place (no redirect to /recommend, so a
    first visit takes one round trip, not two)."""
    runpy.run_path(str(Path(__file__).parent / url.PAGE_BY_SLUG[url.DEFAULT_PAGE].file),
                   run_name="__main__")


# Streamlit serves the default page at "/" and nowhere else, so no real page is the default:
# each is served at its own path (a link to /recommend opens it), and a hidden default page
# shows Recommend at "/" (or switches to the page a link's page parameter names).
ROOT = st.Page(root, title="DeepVM Studio", url_path="root", default=True, visibility="hidden")
PAGES = {p.slug: st.Page(p.file, title=p.title, icon=p.icon, url_path=p.slug)
         for p in url.PAGES}
page = st.navigation([ROOT, *PAGES.values()], position="top")
slug = next((s for s, p in PAGES.items() if p.url_path == page.url_path), url.DEFAULT_PAGE)
wanted = st.session_state.pop("url_page", None)  # a shared link names its page: open it once
if wanted and wanted != slug:
    st.switch_page(PAGES[wanted], query_params=st.query_params.to_dict())


def sidebar_catalog() -> DeltaGenerator:
    """The sidebar's first part, drawn before the page: the catalog choice. Returns the slot
    that shows the active catalog (filled last).

    A chosen catalog that is gone (deleted, or an upload this server no longer has) falls back
    to the default, with a warning. The sidebar exists from the first elements on, so the page
    does not shift sideways when the rest of it arrives."""
    ss = st.session_state
    choices = state.catalog_choices()
    if ss.sb_catalog not in choices:
        ss.url_warnings = [*ss.url_warnings, f"Catalog {ss.sb_catalog!r} is no longer "
                           f"available; using {url.DEFAULT_CATALOG}."]
        ss.sb_catalog = url.DEFAULT_CATALOG
    with st.sidebar:
        st.markdown("### Scenario")
        st.selectbox("Catalog", list(choices), key="sb_catalog",
                     format_func=lambda cid: choices[cid].label,
                     help="Bundled catalogs, your saved copies, fetched and uploaded ones.")
        return st.container()


def sidebar_controls() -> None:
    """The rest of the shared controls, drawn after the page: every control is keyed, so the
    page reads the same values from the session state, and the page's own elements (the
    recommendation card first) reach the browser before these ~40 do (first load, issue 9)."""
    ss = st.session_state
    with st.sidebar:
        for c in url.CONTROLS:
            low, high = c.slider_range(ss[c.key])
            st.markdown(f"**{c.label}**", help=c.help)
            left, right = st.columns([0.6, 0.4], vertical_alignment="center")
            left.slider(c.label, low, high, step=c.slider_step, key=f"{c.key}_slider",
                        on_change=state.on_slider, args=(c.name,), label_visibility="collapsed")
            right.number_input(f"{c.label} value", c.low, c.high, step=c.input_step,
                               format=c.fmt, key=f"{c.key}_input", on_change=state.on_input,
                               args=(c.name,), label_visibility="collapsed")
        st.radio("Objective", list(state.OBJECTIVE_LABELS), key="sb_objective", horizontal=True,
                 format_func=state.OBJECTIVE_LABELS.get,
                 help="Paper's Z: " + glossary.GLOSSARY["Paper's Z"] + " Performance: the "
                      "most relative training throughput (eFLOPS × n × K(n)) within PW.")
        st.toggle("Apply vCPU quotas", key="sb_quotas",
                  help="Off is the paper's simulation mode (no account limits).")
        st.number_input("Top-k recommendations", *url.TOP_K_RANGE, step=1, key="sb_top")
        st.toggle("Presentation", key="sb_presentation", help=glossary.GLOSSARY["Presentation"])
        with st.expander("Advanced"):
            st.number_input("Node cap per role", *url.NODE_CAP_RANGE, step=1, key="sb_nodes",
                            help=glossary.GLOSSARY["Node cap per role"]
                            + " The CLI's --max-nodes.")
            st.radio("Solver", list(state.SOLVER_LABELS), key="sb_solver",
                     format_func=state.SOLVER_LABELS.get,
                     help="Both give the same ranking (the tests check it). Enumeration is "
                          "instant; the integer program is the paper's 'linear programming' "
                          "stage, solved by CBC, and slows down as PW grows: about 0.15 s at "
                          "PW 3 on the AWS catalog, 0.6 s at PW 10 and 4 s at PW 50 on the "
                          "simulated one.")
        st.caption("The address bar holds this whole scenario: copy it to share it.")
        with st.expander("Glossary"):
            st.markdown(glossary.markdown())


catalog_slot = sidebar_catalog()
state.sync_query_params(slug)
widgets.url_warnings()
try:
    page.run()
except Exception:  # not st.rerun / st.stop (BaseException): the controls stay usable
    sidebar_controls()
    raise
sidebar_controls()
state.sync_query_params(slug)  # again: a page's own inputs (Plan a job) change during its run

try:
    active = state.active_catalog()
    catalog_slot.markdown(widgets.catalog_summary(active))
    if slug != "catalog":
        widgets.invalid_draft_notice(catalog_slot, active)
except DeepVMError as exc:
    catalog_slot.error(str(exc).splitlines()[0], icon=":material/error:")
