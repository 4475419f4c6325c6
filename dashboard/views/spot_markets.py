"""Spot markets: plan against real spot availability (``traces.md``).

Traces (uploaded, or fetched into the per-user folder by the page's "Fetch the public traces"
button or ``deepvm traces fetch``) -> a pool ``TYPE@ZONE`` per file -> the availability strip
and statistics; the job of *Plan a job*, planned with those pools
(:func:`dashboard.job_view.plan`), and its configuration replayed under each recovery policy:
the makespan CDF with the deadline, cost, deadline met and fallbacks, the pools in failover
order, and the backtest JSON. Logic in :mod:`dashboard.spot_compute`.

First run (issue 25, part 5): until a pool is mapped, the page shows a seeded synthetic market
(:mod:`deepvm_core.market.synthetic`) labelled as such on every chart and table, planned on this
page only (Plan a job and Recommend never see it). The server's folders are never named.
"""

from __future__ import annotations

import time
from pathlib import Path

import streamlit as st

from dashboard import (
    catalog_state,
    job_view,
    keys,
    plain_view,
    plan_compute,
    spot_charts,
    spot_compute,
    state,
    url_spot,
    widgets,
)
from dashboard.plain_view import words
from dashboard.widgets import escape_md as md
from deepvm_core.catalog import Catalog
from deepvm_core.errors import DeepVMError
from deepvm_core.io.plan_json import plan_configuration_to_dict
from deepvm_core.job.backtest import RECOVERY_POLICIES
from deepvm_core.market.synthetic import SYNTHETIC_LABEL
from deepvm_core.market.trace import TraceError
from deepvm_core.market.trace_fetch import spot_traces_url
from deepvm_core.pipeline.backtest_plan import PlannedCluster
from deepvm_core.pipeline.plan import JobPlanResult, PlanEstimate
from deepvm_core.text import duration, usd

RECOVERY_HELP = ("How the planner replays configurations of the mapped types: wait (stay in the "
                 "best pool), failover (move to the next pool that is up) or deadline (failover, "
                 "then on demand when the deadline of Plan a job gets close).")


def _pool_key(rel: str) -> str:
    return f"spot_pool::{rel}"


def _on_pool(rel: str) -> None:
    pools = dict(keys.SPOT_POOLS.get())
    pools[rel] = str(st.session_state[_pool_key(rel)]).strip()
    keys.SPOT_POOLS.set(pools)


def uploads(root: Path) -> None:
    """The upload box: each good file is kept and mapped to its guessed pool; each bad one is
    a message naming it (the others are kept)."""
    version = keys.SPOT_UPLOAD_VERSION.get()
    files = st.file_uploader("Upload traces (JSON, the spot-traces format)", type=["json"],
                             accept_multiple_files=True, key=f"spot_upload_{version}")
    if not files:
        return
    errors: list[str] = []
    pools = dict(keys.SPOT_POOLS.get())
    for f in files:
        try:
            rel = spot_compute.save_upload(root, f.name, f.getvalue())
        except TraceError as exc:
            errors.append(f"Upload {exc}")
            continue
        pools[rel] = pools.get(rel) or spot_compute.guess_pool(f.name)
        st.session_state.pop(_pool_key(rel), None)
    keys.SPOT_POOLS.set(pools)
    keys.SPOT_ERRORS.set(errors)
    keys.SPOT_UPLOAD_VERSION.set(version + 1)
    st.rerun()


def mapping(root: Path) -> None:
    """One field per trace file: its pool ``TYPE@ZONE`` (empty: not used)."""
    files = spot_compute.trace_files(root)
    known = keys.SPOT_POOLS.get()
    missing = [rel for rel, name in known.items() if name and rel not in files]
    for rel in missing:
        st.warning(words(f"{rel} (pool {known[rel]}) is not in {spot_compute.TRACES_FOLDER}: "
                         "upload it again or fetch the traces."), icon=":material/warning:")
    if not files:
        st.info("No traces yet: fetch the public ones above, or upload your own.",
                icon=":material/info:")
        return
    with st.expander(words(f"Pools: map each trace to TYPE@ZONE ({len(files)} file(s))"),
                     expanded=not any(known.values())):
        if st.button("Fill the empty ones from the file names", key="spot_guess",
                     help="us-west-2a_v100_1.json -> p3.2xlarge@us-west-2a (V100: p3, K80: p2)"):
            pools = dict(known)
            for rel in files:
                if not pools.get(rel):
                    pools[rel] = spot_compute.guess_pool(rel)
                    st.session_state.pop(_pool_key(rel), None)
            keys.SPOT_POOLS.set(pools)
            known = pools
        for rel in files:
            if _pool_key(rel) not in st.session_state:
                st.session_state[_pool_key(rel)] = known.get(rel, "")
            st.text_input(rel, key=_pool_key(rel), on_change=_on_pool, args=(rel,),
                          placeholder=spot_compute.guess_pool(rel) or "TYPE@ZONE")


def fetch_box(root: Path) -> None:
    """One button that fetches the public spot traces into the per-user folder (what
    ``deepvm traces fetch`` does), with progress; a failure says why and writes nothing."""
    have = spot_compute.trace_files(root)
    with st.container(border=True, key="spot_fetch_box"):
        left, right = st.columns([0.68, 0.32], vertical_alignment="center")
        left.markdown("**The public spot traces** (skypilot-org/spot-traces: availability of "
                      "p3 and p2 VMs in AWS zones, 2022-2023). They carry no licence, so they "
                      "are not shipped: fetch them once.")
        pressed = right.button("Fetch the public traces" if not have else "Fetch them again",
                               key="spot_fetch", type="primary" if not have else "secondary",
                               icon=":material/cloud_download:", width="stretch")
    if pressed:
        fetch(root)
    notice = keys.SPOT_FETCH_NOTICE.get()
    keys.SPOT_FETCH_NOTICE.set(None)
    if notice:
        st.success(words(notice), icon=":material/check_circle:")
    error = keys.SPOT_FETCH_ERROR.get()
    if error:
        st.error(words(f"Fetch failed: {md(error)}"), icon=":material/cloud_off:")
        st.caption("The server could not download the traces (offline, or a proxy or firewall "
                   "in the way). The synthetic market below still shows how the page works; "
                   "you can also upload trace files.")


def fetch(root: Path) -> None:
    """Run the fetch with a live status box, then map the fetched files to pools."""
    keys.SPOT_FETCH_ERROR.set(None)
    started = time.monotonic()
    with st.status(f"Fetching the public spot traces from {spot_traces_url()}…",
                   expanded=True) as status:
        bar = st.progress(0.0, text="Starting")

        def progress(step: str, done: int, total: int) -> None:
            bar.progress(min(done / total, 1.0) if total else 1.0,
                         text=md(f"{done} of {total} files · {step}"))

        try:
            written = spot_compute.fetch_public_traces(root, progress)
        except DeepVMError as exc:
            keys.SPOT_FETCH_ERROR.set(str(exc))
            status.update(label="Fetch failed: nothing was written", state="error",
                          expanded=False)
            return
        status.update(label=f"Fetched {len(written)} trace files", state="complete",
                      expanded=False)
    files = spot_compute.trace_files(root)
    pools = dict(keys.SPOT_POOLS.get())
    mapped = spot_compute.auto_pools(files, catalog_state.active_catalog().catalog)
    for rel, name in mapped.items():
        if not pools.get(rel):
            pools[rel] = name
            st.session_state.pop(_pool_key(rel), None)
    keys.SPOT_POOLS.set(pools)
    keys.SPOT_FETCH_NOTICE.set(
        f"Fetched {len(written)} trace files in {time.monotonic() - started:.1f} s; "
        f"{len(mapped)} of them mapped to pools ({', '.join(sorted(set(mapped.values())))}). "
        "Map others under Pools below.")
    st.rerun()


def synthetic_plan(catalog: Catalog) -> tuple[spot_compute.PoolSet, JobPlanResult] | None:
    """The synthetic market of the plan's GPU type and the plan on it (this page only)."""
    scenario = state.scenario()
    inputs = job_view.job_inputs(catalog, scenario, keys.TOP_K.get())
    gpu = spot_compute.synthetic_gpu(catalog, job_view.plan(catalog, scenario, inputs))
    if gpu is None:
        return None
    pools = spot_compute.synthetic_pools(catalog, gpu)
    result = plan_compute.job_plan(catalog, scenario, inputs.workload, pw=inputs.pw,
                                   speedup=inputs.speedup, goal=inputs.goal,
                                   deadline=inputs.deadline, budget=inputs.budget,
                                   trials=inputs.trials, seed=inputs.seed, top_k=inputs.top_k,
                                   pools=pools, recovery=keys.SPOT_RECOVERY.get())
    return pools, result


def main() -> None:
    active = catalog_state.active_catalog()
    catalog = active.catalog
    st.title("Spot markets")
    st.caption("Plan against real spot availability: map traces to pools (a GPU type in one "
               "availability zone), see when each market was up, and replay the job of *Plan "
               "a job* on them from many start times. The Plan and Recommend pages then use "
               "the replay for the mapped types.")
    root = spot_compute.trace_root()
    fetch_box(root)
    uploads(root)
    for message in keys.SPOT_ERRORS.get():
        st.error(words(message), icon=":material/error:")
    mapping(root)
    pools, errors = spot_compute.build_pools(catalog, root, keys.SPOT_POOLS.get())
    for message in errors:
        if spot_compute.MISSING not in message:  # missing files: warned above
            st.error(words(message), icon=":material/error:")
    label: str | None = None
    synthetic = None
    if not pools.pools:
        synthetic = synthetic_plan(catalog)
        if synthetic is None:
            st.info(words(f"No pool yet, and catalog {catalog.name} has no GPU type for a "
                          "synthetic market."), icon=":material/info:")
            return
        label = SYNTHETIC_LABEL
        st.warning(words(f"**{SYNTHETIC_LABEL}.** No pool is mapped yet, so this page shows a "
                         "seeded synthetic market of three made-up zones (synthetic-1a, b, c) to "
                         "show how it works. Fetch the public traces above, or upload your own and "
                         "give each a pool TYPE@ZONE. Plan a job and Recommend never use the "
                         "synthetic market."),
                   icon=":material/science:")
    st.radio("Recovery policy of the plan", RECOVERY_POLICIES, key=keys.SPOT_RECOVERY.name,
             persist_state=keys.PERSIST, horizontal=True, help=RECOVERY_HELP)
    if synthetic is None:
        inputs = job_view.job_inputs(catalog, state.scenario(), keys.TOP_K.get())
        result = job_view.plan(catalog, state.scenario(), inputs)
    else:
        pools, result = synthetic
    for warning in result.warnings:  # as Plan a job's card says them (a deadline policy
        st.warning(warning, icon=":material/warning:")  # without a deadline, a cut replay)
    est = spot_compute.backtested(result)
    spot_vms = est.configuration.gpu_spot if est is not None else 1
    st.subheader(words("When the markets were up" + (" (synthetic)" if label else "")))
    x, names, z = spot_compute.availability_strip(pools.pools, spot_vms)
    plain_view.chart(spot_charts.availability_strip(x, names, z, label), key="spot_strip")
    frame, stat_errors = spot_compute.stats_frame(pools.pools, spot_vms)
    st.markdown(words(("**Synthetic:** " if label else "")
                      + f"Statistics for a cluster of {spot_vms} spot "
                        f"VM{'s' if spot_vms > 1 else ''} "
                      "(a count trace needs that many VMs up):"))
    plain_view.dataframe(frame, hide_index=True, key="spot_stats", column_config={
        "Days": st.column_config.NumberColumn(format="%.1f"),
        "Availability": st.column_config.NumberColumn(format="percent"),
        "MTBI (h)": st.column_config.NumberColumn(format="%.2f"),
        "Mean wait (h)": st.column_config.NumberColumn(format="%.2f"),
        "Spot USD/h": st.column_config.NumberColumn(format="%.4f")})
    for message in stat_errors:
        st.error(words(message), icon=":material/error:")
    backtest_section(result, est, pools, label)


def backtest_section(result: JobPlanResult, est: PlanEstimate | None,
                     pools: spot_compute.PoolSet, label: str | None = None) -> None:
    """The planned configuration under each policy (``label``: the synthetic market's)."""
    st.subheader(words("Your job on these markets" + (" (synthetic)" if label else "")))
    if est is None and result.replay is None and pools.pools:
        st.warning(words("Nothing to replay: the plan's backtest on these pools did not run "
                         "(the warning above says why)."), icon=":material/warning:")
        return
    if est is None:
        st.warning(words("No configuration of the mapped types fits the job of Plan a job (PW, "
                         "quotas, node cap): nothing to replay."), icon=":material/warning:")
        return
    catalog = catalog_state.active_catalog().catalog
    ordered = [p for name in est.pools for p in pools.pools if p.name == name]
    left, right = st.columns(2)
    left.number_input("Deadline (hours; 0: 1.5 × compute hours)", 0.0, 1e6, step=1.0,
                      key=keys.SPOT_DEADLINE.name, persist_state=keys.PERSIST)
    right.number_input("Start times", *url_spot.SPOT_STARTS_RANGE, step=50,
                       key=keys.SPOT_STARTS.name, persist_state=keys.PERSIST)
    deadline = keys.SPOT_DEADLINE.get() or spot_compute.default_deadline(est)
    doc = plan_configuration_to_dict(est, result.scenario.objective)
    assert doc is not None
    restart = result.assumptions.restart_hours
    try:
        cluster = PlannedCluster.of_estimate(est)
    except DeepVMError as exc:
        st.error(words(f"Cannot replay {est.configuration.describe()}: {exc}"),
                 icon=":material/error:")
        return
    replayed = spot_compute.policy_runs(catalog, cluster, pools, ordered, restart, deadline,
                                        int(keys.SPOT_STARTS.get()))
    if isinstance(replayed, str) or not replayed.runs:  # a bad input, the budget spent, or
        why = (replayed if isinstance(replayed, str)  # no policy could replay: said (cached)
               else "; ".join(replayed.cannot.values()))
        st.error(words(f"Cannot replay {est.configuration.describe()}: {why}."),
                 icon=":material/error:")
        return
    runs = replayed.runs
    frame = spot_compute.policy_frame(runs)
    with st.container(border=True, key="spot_card"):
        if label:
            st.markdown(words(f"**{label}.**"))
        which = ("the plan's choice" if result.chosen is not None
                 and est.index == result.chosen.index else "the best cluster of the mapped "
                 "types (the plan's choice has no pool)")
        st.markdown(words(f"**{est.configuration.describe()}**, {which}: "
                          f"{est.compute_hours:,.2f} compute hours, {est.checkpoints:,} "
                          f"checkpoints, restart {duration(restart)}."))
        st.markdown(words("Pools the planner chose, in failover order: "
                          + " → ".join(f"`{p.name}`" for p in ordered)))
        dl = frame.set_index("Policy")
        st.markdown(words(f"Deadline **{duration(deadline)}**: " + "; ".join(
            f"{policy} met it in **{dl.loc[policy, 'Deadline met']}** starts, mean "
            f"{duration(dl.loc[policy, 'Mean makespan (h)'])} and "
            f"{usd(dl.loc[policy, 'Mean cost (USD)'])}"
            + (f", fell back in {dl.loc[policy, 'Fell back']:.0%}" if policy == "deadline"
               else "") for policy in dl.index) + "."))
        capped = spot_compute.starts_note(int(keys.SPOT_STARTS.get()), runs)
        if capped is not None:  # the start times asked, capped by the traces: said
            st.caption(words(capped))
        for policy, why in replayed.cannot.items():  # said for that policy alone
            st.caption(words(f"Not in the table, {policy}: {why}."))
    plain_view.chart(spot_charts.makespan_cdf(runs, deadline, label), key="spot_cdf")
    plain_view.dataframe(frame, hide_index=True, key="spot_policies", column_config={
        **{c: st.column_config.NumberColumn(format="%.2f") for c in frame.columns
           if c.endswith("(h)") or c.endswith("(USD)") or c == "Interruptions"},
        "Fell back": st.column_config.NumberColumn(format="percent")})
    st.download_button("Download the backtest (JSON)",
                       spot_compute.backtest_json(cluster, doc, ordered, restart, deadline, runs),
                       file_name="deepvm-backtest.json", mime="application/json",
                       icon=":material/download:", key="spot_download")


widgets.run_page(main)
