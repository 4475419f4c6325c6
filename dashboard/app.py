"""DeepVM Studio: the Streamlit dashboard's script (``make run`` starts it through ``serve.py``;
``streamlit run dashboard/app.py`` works too).

Page config, navigation, the sidebar's catalog choice, the current page, then the rest of the
shared sidebar (the scenario's controls): the page's content reaches the browser first.
"""

from __future__ import annotations

import runpy
from functools import partial
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dashboard import (
    answer,
    catalog_state,
    glossary,
    keys,
    state,
    typed_inputs,
    url,
    url_pages,
    widgets,
)
from deepvm_core.errors import DeepVMError

st.set_page_config(page_title="DeepVM Studio", page_icon=":material/cloud:", layout="wide",
                   initial_sidebar_state="expanded")
state.init_state()


def root() -> None:
    """The root URL's page: Recommend's script, run in place (no redirect to /recommend, so a
    first visit takes one round trip, not two)."""
    runpy.run_path(str(Path(__file__).parent / url_pages.PAGE_BY_SLUG[url_pages.DEFAULT_PAGE].file),
                   run_name="__main__")


# Streamlit serves the default page at "/" and nowhere else, so no real page is the default:
# each is served at its own path (a link to /recommend opens it), and a hidden default page
# shows Recommend at "/" (or switches to the page a link's page parameter names).
ROOT = st.Page(root, title="DeepVM Studio", url_path="root", default=True, visibility="hidden")
PAGES = {p.slug: st.Page(p.file, title=p.title, icon=p.icon, url_path=p.slug)
         for p in url_pages.PAGES}
page = st.navigation([ROOT, *PAGES.values()], position="top")
slug = next((s for s, p in PAGES.items() if p.url_path == page.url_path), url_pages.DEFAULT_PAGE)
wanted = keys.URL_PAGE.get()  # a shared link names its page: open it once
keys.URL_PAGE.set(None)
# The path wins over the page parameter: only the root URL opens the page a link names.
if wanted and wanted != slug and page is ROOT:
    st.switch_page(PAGES[wanted], query_params=st.query_params.to_dict())
if page is ROOT:
    widgets.unknown_path_note(url_pages.unknown_path(st.context.url,
                                                     st.get_option("server.baseUrlPath")))


def sidebar_catalog() -> DeltaGenerator:
    """The sidebar's first part, drawn before the page: the catalog choice. Returns the slot
    that shows the active catalog (filled last).

    A chosen catalog that is gone (deleted, or an upload this server no longer has) falls back
    to the default, with a warning. The sidebar exists from the first elements on, so the page
    does not shift sideways when the rest of it arrives."""
    choices = catalog_state.catalog_choices()
    if keys.CATALOG.get() not in choices:
        keys.URL_WARNINGS.set([*keys.URL_WARNINGS.get(), f"Catalog {keys.CATALOG.get()!r} is "
                               f"no longer available; using {url.DEFAULT_CATALOG}."])
        keys.CATALOG.set(url.DEFAULT_CATALOG)
    labels = {cid: catalog_state.choice_label(choice) for cid, choice in choices.items()}
    with st.sidebar:
        st.markdown("### Scenario")
        st.selectbox("Catalog", list(choices), key=keys.CATALOG.name, persist_state=keys.PERSIST,
                     format_func=labels.__getitem__,
                     help="Bundled catalogs, your saved copies, fetched and uploaded ones; "
                          "the age of each one's prices counts from today.")
        st.button("Paper's scenario (Table IV)", key="sb_paper_scenario",
                  on_click=state.paper_scenario, icon=":material/history_edu:",
                  help=f"The paper's catalog {url.PAPER_SCENARIO['catalog']} (prices of "
                       f"October 2023), PW {url.PAPER_SCENARIO['pw']:g} USD/h and its "
                       "objective Z; the other controls keep their values.")
        return st.container()


def sidebar_controls() -> None:
    """The rest of the shared controls, drawn after the page: every control is keyed, so the
    page reads the same values from the session state, and the page's own elements (the
    recommendation card first) reach the browser before these ~40 do (first load, issue 9)."""
    with st.sidebar:
        for c in url.CONTROLS:
            low, high = c.slider_range(keys.NUMBERS[c.name].get())
            label = (answer.PLAIN_CONTROL_LABELS.get(c.name, c.label) if state.presentation()
                     else c.label)
            st.markdown(f"**{label}**", help=c.help)
            left, right = st.columns([0.6, 0.4], vertical_alignment="center")
            left.slider(c.label, low, high, step=c.slider_step, key=c.slider_key,
                        persist_state=keys.PERSIST, on_change=state.on_slider, args=(c.name,),
                        label_visibility="collapsed")
            typed_inputs.number(right, f"{c.label} value", keys.NUMBERS[c.name], c.low,
                                c.high, step=c.input_step, format=c.fmt,
                                then=partial(state.on_input, c.name), note_to=st.container(),
                                called=c.label, label_visibility="collapsed")
        st.radio("Objective", list(state.OBJECTIVE_LABELS), key=keys.OBJECTIVE.name,
                 persist_state=keys.PERSIST, horizontal=True,
                 format_func=state.OBJECTIVE_LABELS.__getitem__,
                 help="Training speed (default): the most epochs of your job per hour within "
                      "PW. " + glossary.GLOSSARY["Training speed"] + " Paper's Z: "
                      + glossary.GLOSSARY["Paper's Z"] + " Performance: the "
                      "most relative training throughput (eFLOPS × n × K(n)) within PW.")
        st.toggle("Apply vCPU quotas", key=keys.QUOTAS.name, persist_state=keys.PERSIST,
                  help="Off is the paper's simulation mode (no account limits).")
        typed_inputs.number(st.sidebar, "Top-k recommendations", keys.TOP_K, *url.TOP_K_RANGE,
                            whole=True, step=1)
        st.toggle("Presentation", key=keys.PRESENTATION.name, persist_state=keys.PERSIST,
                  help=glossary.GLOSSARY["Presentation"])
        with st.expander("Advanced"):
            typed_inputs.number(st.container(), "Node cap per role", keys.NODE_CAP,
                                *url.NODE_CAP_RANGE, whole=True, step=1,
                                help=glossary.GLOSSARY["Node cap per role"]
                            + " The CLI's --max-nodes.")
            st.radio("Solver", list(state.SOLVER_LABELS), key=keys.SOLVER.name,
                     persist_state=keys.PERSIST, format_func=state.SOLVER_LABELS.__getitem__,
                     help="Both give the same ranking (the tests check it). Enumeration is "
                          "instant; the integer program is the paper's 'linear programming' "
                          "stage, solved by CBC, and slows down as PW grows: about 0.15 s at "
                          "PW 3 on the AWS catalog, 0.6 s at PW 10 and 4 s at PW 50 on the "
                          "simulated one.")
        st.caption("The address bar holds this whole scenario: copy it to share it.")
        with st.expander("Glossary"):
            st.markdown(glossary.markdown())


catalog_slot = sidebar_catalog()
widgets.url_warnings()
widgets.presentation_lead(slug)
try:
    page.run()
except Exception:  # not st.rerun / st.stop (BaseException): the controls stay usable
    sidebar_controls()
    state.sync_query_params(slug)
    raise
sidebar_controls()
state.sync_query_params(slug)  # once, after the page: it may set the job (Plan a job)

try:
    active = catalog_state.active_catalog()
    catalog_slot.markdown(widgets.catalog_summary(active))
    if slug != "catalog":
        widgets.invalid_draft_notice(catalog_slot, active)
except DeepVMError as exc:
    catalog_slot.error(str(exc).splitlines()[0], icon=":material/error:")
