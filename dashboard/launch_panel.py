"""The "Launch on AWS" panel: the EC2 Fleet requests of an export, to download and run.

The panel only shows and packages (:func:`deepvm_core.cloud.fleet.build_bundle`, pure): the
dashboard never calls AWS for a launch. A page calls::

    from dashboard import launch_panel
    launch_panel.render_launch_panel(export_dict, export_text=text)

``export_text`` is the JSON the page's "Download configuration" button serves: the plan id
(tag ``deepvm:plan``) is derived from those bytes, so ``deepvm launch`` on the downloaded file
tags the same plan. Without it the panel hashes ``export_dict`` as the CLI writes it.
Widget keys start with ``launch_``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import streamlit as st

from dashboard.plain_view import words
from deepvm_core.cloud.fleet import (
    FleetBundle,
    FleetInputError,
    RequestOptions,
    build_bundle,
    parse_subnets,
    parse_template,
    plan_from_export,
)
from deepvm_core.cloud.fleet.bundle import LAUNCH_FILE, ON_DEMAND_FILE, SPOT_FILE, launch_command

NEVER_LAUNCHES = ("The dashboard never launches: a shared dashboard must not spend the server's "
                  "credentials.")


def _options(needs_cpu: bool) -> RequestOptions | None:
    """The inputs; ``None`` until a GPU launch template is given."""
    left, right = st.columns(2)
    gpu = left.text_input("GPU launch template", key="launch_gpu_template",
                          placeholder="name or lt-id, optional :version",
                          help="Spot workers and the anchor; version $Latest unless given "
                               "(my-template:3).")
    cpu = right.text_input("CPU launch template (memory nodes)", key="launch_cpu_template",
                           placeholder="name or lt-id" if needs_cpu else "not needed",
                           disabled=not needs_cpu,
                           help="Tiering's memory nodes; Single Anchor needs none.")
    subnets = st.text_input("Subnets (comma-separated, one or more per availability zone)",
                            key="launch_subnets", placeholder="subnet-0abc..., subnet-0def...",
                            help="The spot request is diversified over them; empty: the launch "
                                 "template's network settings.")
    left, right = st.columns(2)
    spot_cap = left.number_input("Spot MaxTotalPrice (USD/h, optional)", min_value=0.0,
                                 value=None, step=0.1, key="launch_spot_cap",
                                 help="Most the spot workers may cost together. Empty: PW "
                                      "minus the on-demand part, so that the cluster stays "
                                      "within PW (launch.txt says the cap).")
    od_cap = right.number_input("On-demand MaxTotalPrice (USD/h, optional)", min_value=0.0,
                                value=None, step=0.1, key="launch_od_cap")
    if not gpu.strip():
        st.info("Enter the GPU launch template to see the requests.",
                icon=":material/edit_note:")
        return None
    return RequestOptions(
        gpu_template=parse_template(gpu, "GPU launch template"),
        cpu_template=parse_template(cpu, "CPU launch template") if cpu.strip() else None,
        subnets=parse_subnets([subnets]),
        spot_max_total_price_usd_per_hour=spot_cap or None,
        on_demand_max_total_price_usd_per_hour=od_cap or None)


def render_launch_panel(export: Mapping[str, Any], *,
                        export_text: str | None = None) -> FleetBundle | None:
    """Draw the panel for an export document; returns the bundle it shows (or ``None``)."""
    st.markdown("#### Launch on AWS")
    st.caption(words(NEVER_LAUNCHES))
    data = export_text.encode("utf-8") if export_text is not None else None
    try:
        plan = plan_from_export(export, data)
    except FleetInputError as exc:
        st.warning(words(f"Nothing to launch: {exc}"), icon=":material/block:")
        return None
    st.markdown(words(f"Plan `{plan.plan_id}`: {plan.summary}, as two EC2 Fleet requests of type "
                      "*instant*: the spot workers first (all in one availability zone or none), "
                      "then the on-demand part in the workers' zone."))
    needs_cpu = plan.on_demand is not None and plan.on_demand.role == "memory-node"
    try:
        options = _options(needs_cpu)
        if options is None:
            return None
        bundle = build_bundle(export, options, data=data)
    except FleetInputError as exc:
        st.error(words(str(exc)), icon=":material/error:")
        return None
    command = " ".join(launch_command(plan, options, "export.json"))
    st.markdown("Run from the downloaded folder (a dry run; add `--yes` to launch):")
    st.code(command, language="bash")
    names = [n for n in (SPOT_FILE, ON_DEMAND_FILE, LAUNCH_FILE) if n in bundle.files]
    for tab, name in zip(st.tabs(names), names, strict=True):
        with tab:
            text = bundle.files[name].decode("utf-8")
            if name.endswith(".json"):
                st.code(json.dumps(json.loads(text), indent=2), language="json")
            else:
                st.code(text, language="bash")
    st.download_button("Download the fleet folder (zip)", bundle.zip_bytes(),
                       file_name=f"deepvm-fleet-{plan.plan_id}.zip", mime="application/zip",
                       key="launch_download", on_click="ignore", icon=":material/download:")
    return bundle
