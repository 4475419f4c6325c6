"""Method: DeepVM's four stages with their formulas, and what the model finds about the paper."""

from __future__ import annotations

import streamlit as st

from dashboard import (
    catalog_state,
    compute,
    formatting,
    keys,
    method_compute,
    plain_view,
    url_pages,
    widgets,
)
from dashboard.plain_view import words
from deepvm_core.hardware.method_tables import MethodTable
from deepvm_core.job.odds import bucket_label
from deepvm_core.job.rolling import rolling_tables
from deepvm_core.market.mtbi import (
    ADVISOR_BUCKET_MTBI_HOURS,
    DEFAULT_MTBI_HOURS,
    DEFAULT_WAIT_HOURS,
)
from deepvm_core.model import Scenario
from deepvm_core.workload.workload import DEFAULT_PER_VM_SHARE


def link(page: str, label: str) -> None:
    st.page_link(url_pages.PAGE_BY_SLUG[page].file, label=words(label),
                 icon=":material/arrow_forward:")


def stages() -> None:
    st.markdown("### 1 · User pricing input")
    st.markdown(words("You give the **pricing willingness PW**: the most you pay per hour for the "
                      "whole cluster. The checkpoint size *f* (GB) and the buffer *s* (checkpoints "
                      "per memory node) describe the training job; the catalog lists the VM types, "
                      "their prices and your account's vCPU quotas."))
    link("catalog", "Edit the catalog")
    link("live", "Fetch today's AWS prices (Live prices), then compare regions")

    st.markdown(words("### 2 · Instance-level analysis: FLOPP"))
    st.markdown("Each GPU type is scored by eFLOP per USD (FLOP per price), spot and on-demand:")
    plain_view.formula(r"\mathrm{SPFP}(v) = \frac{\mathrm{eFLOPS}(v)}{SP(v)}\cdot 3600 \qquad "
             r"\mathrm{ODFP}(v) = \frac{\mathrm{eFLOPS}(v)}{OD(v)}\cdot 3600")
    st.markdown(words("Parallel training does not scale perfectly. A logistic fit of the measured "
                      "speedup gives the scaling factor K(n) (1 up to the inflection point *b*):"))
    plain_view.formula(r"S(n) = \frac{c}{1 + e^{-a(n-b)}} \qquad L(n) = \frac{c\,a\,(n-b)}{4} + "
             r"\frac{c}{2} \qquad K(n) = \begin{cases} 1 & n \le b \\ S(n)/L(n) & n > b "
             r"\end{cases}")
    link("instances", "FLOPP ranking and scaling curves")

    st.markdown("### 3 · Architecture-level analysis")
    st.markdown(words("**Single Anchor**: one on-demand GPU VM (the anchor keeps the checkpoints) "
                      "and *n* − 1 spot GPU VMs of one type *v*:"))
    plain_view.formula(r"OD(v) + (n-1)\,SP(v) \le PW")
    plain_view.formula(r"Z_{SA} = \big((n-1)\,\mathrm{SPFP}(v) + \mathrm{ODFP}(v)\big)\,K_v(n)")
    st.markdown(words("**Tiering**: *n* spot GPU VMs of type *v* train, *m* on-demand CPU VMs of "
                      "type *w* hold the checkpoints in RAM. A memory node must hold *f × s* and "
                      "serves fewer than n_sat GPU VMs (network saturation, bw = min(BW(v), "
                      "BW(w))):"))
    plain_view.formula(r"n\,SP(v) + m\,OD(w) \le PW \qquad \mathrm{MEM}(w)\cdot 1.073741824 "
                       r"\ge f\,s "
             r"\qquad \frac{n}{m} < n_{sat}(bw)")
    st.markdown("The constant converts units: providers list RAM in GiB (2^30 bytes) while the "
                "checkpoint size *f* is in GB (10^9 bytes), so MEM(w) GiB hold "
                "MEM(w) × 1.073741824 GB, with 1.073741824 = 2^30 / 10^9.")
    plain_view.formula(r"Z_{TR} = n\,\mathrm{SPFP}(v)\,K_v(n)")
    st.markdown(words("Both respect the vCPU quotas per family (on-demand and spot separately) "
                      "unless quotas are off, and at most the node cap per role (spot GPU VMs, "
                      f"on-demand GPU VMs, memory nodes; now {keys.NODE_CAP.get()}, under "
                      "*Advanced* in the sidebar)."))
    link("instances", "Network-saturation table")

    st.markdown("### 4 · Final decision")
    st.markdown("Every feasible configuration of both architectures is ranked by Z, highest "
                "first; ties go to the lower hourly price, then fewer VMs, then architecture "
                "and names. Two solvers rank the same way: an exact enumeration and an integer "
                "program (PuLP/CBC, the paper's 'linear programming'). The top-k are the "
                "recommendations. **Performance** is what the cluster delivers:")
    plain_view.formula(r"\mathrm{performance} = \mathrm{eFLOPS}(v)\cdot n \cdot K_v(n)")
    link("recommend", "The recommendation, best Single Anchor vs best Tiering")


def proxy_note() -> None:
    st.markdown("### Z is a proxy")
    st.markdown(
        words("Z weights every GPU VM by its FLOP per dollar, so it favours cheap instance types "
              "beyond their throughput, while the paper's final decision aims for *the best "
              "performance within the given pricing willingness*. The dashboard therefore offers "
              "two objectives over the same search space: **Paper's Z** (reproduces the paper) and "
              "**Performance** (the most eFLOPS × n × K(n) within PW). Cost-First and "
              "Performance-First pick Single Anchor clusters inside that space, so the performance "
              "objective is never below them."))


def findings() -> None:
    st.markdown("### The paper's Fig. 3, checked live")
    catalog = compute.load_catalog_file(*_bundled(catalog_state.SIMULATED_CATALOG))
    result = compute.run_sweep(catalog, Scenario(0.0, use_quotas=False), 0.0, 10.0, 0.1)
    found = result.findings()
    beats = formatting.format_intervals(found.pf_beats_deepvm, "USD/h")
    below = formatting.format_intervals(found.noscale_below_cost_first, "USD/h")
    st.markdown(
        words("On the simulated catalog with quotas off and PW from 0 to 10 USD/h in steps of 0.1 "
              "(the paper's setup), this model finds:\n"
              f"- Performance-First beats DeepVM (paper's Z) at PW **{beats}**, so the paper's "
              "claim that DeepVM is the highest at every PW does not hold for the model.\n"
              f"- DeepVM-NoScale falls below Cost-First at PW **{below}**; the paper says beyond "
              "about 2.5 USD/h.\n"
              f"- The performance objective beats the paper's Z by **{found.mean_gain:.1%}** on "
              f"average, and by up to **{found.max_ratio:.2f}×**."))
    link("simulate", "Run the sweep yourself")


def job_model() -> None:
    st.markdown("### From price per hour to the cost and time of a job")
    st.markdown(
        "The **Plan a job** page estimates what a whole training job costs and when it is done "
        "on each cluster, with spot interruptions, exactly as the job model states it "
        "(`job-model.md`).")
    link("plan", "Plan a job")
    st.markdown(words("**Epoch time.** *n* GPU VMs of type *g* take t_g(n) = t_g(1) / S_g(n) "
                      "per epoch. t_g(1) is your measured one-VM time, or your reference time "
                      "scaled by eFLOPS(g_ref) / eFLOPS(g). Three speedup models S_g(n), all "
                      "with S(1) = 1:"))
    st.markdown(words("- **fitted** (default): the logistic S(n) = c / (1 + e^(-a(n - b))) fitted "
                      "to measured speedups t(1)/t(n) (Calibrate fits it with scipy's curve_fit "
                      "and reports R²);\n"
                      "- **measured**: your own epoch times, interpolated linearly in n, flat past "
                      "the largest measured n;\n"
                      "- **paper**: S(n) = n · K(n), the proxy behind Z (17 g4dn.xlarge: 16.9× by "
                      "the proxy, 3.9× measured)."))
    st.markdown("**Checkpoints.** Compute time T_c = E · t_g(n), cut into segments of τ "
                "seconds, each followed by one stall δ (not the last):")
    plain_view.formula(r"\delta_{TR} = \delta_0 + \frac{8 f \lceil n/m \rceil}{n \, BW(w)}, \qquad"
             r"\delta_{SA} = \delta_0 + \frac{8 f (n-1)}{n \, BW(v)} + \frac{f}{D}")
    st.markdown(words("τ = k · t_g(n) (every k epochs) or **Daly's interval** (Daly, FGCS 2006; "
                      "its first term is Young 1974), with M the MTBI:"))
    plain_view.formula(r"\tau = \sqrt{2 \delta M}\left[1 + \tfrac{1}{3}\sqrt{\tfrac{\delta}{2M}} "
             r"+ \tfrac{1}{9}\tfrac{\delta}{2M}\right] - \delta \quad (\delta < 2M)")
    st.markdown(words("**Interruptions.** Reclaims take the whole market at once (one type, one "
                      "market: in public one-week traces of 16-VM p3.2xlarge clusters, "
                      "skypilot-org/spot-traces behind *Can't Be Late*, NSDI'24, 83-97 % of "
                      "ticks had all 16 or none) or one VM at a time: n spot VMs are interrupted "
                      "λ(n) = (1 + ρ(n − 1)) / MTBI, ρ the per-VM share, while they are up; "
                      "VMs are never interrupted. After an event the work since the last "
                      "checkpoint is lost, the cluster waits W (spot VMs not billed) and restarts "
                      "for R (billed). Exact expectations per segment of length s:"))
    plain_view.formula(r"E_1(s) = (e^{\lambda(R+s)} - 1)\,(1/\lambda + W), \quad "
             r"E_0(s) = \frac{1 - e^{-\lambda s}}{\lambda} + (1 - e^{-\lambda s})"
             r"(W + E_1(s)), \quad F_0(s) = (1 - e^{-\lambda s})\, e^{\lambda(R+s)}")
    st.markdown(words("A job started at a random time finds the market inside an outage with "
                      "probability π = λW / (1 + λW) and first waits W on average: makespan "
                      "T = πW + Σ E0, events N = Σ F0, cost C = P · (T − N·W − πW) + P_od · (N·W + "
                      "πW) (P the hourly price, P_od its on-demand part). A seeded Monte Carlo of "
                      "the same process (waits exponential) gives P10/P50/P90 and the chance to "
                      "meet a deadline, its MTBI and W drawn from the bucket's spread; the tests "
                      "check that it agrees with the closed form."))
    hours = ", ".join(f"{bucket_label(r)} → {h:g} h" for r, h in
                      enumerate(ADVISOR_BUCKET_MTBI_HOURS))
    st.markdown(words("**Assumptions, shown as such and editable:** the MTBI of one spot VM per "
                      f"GPU type (by default from the AWS Spot Instance Advisor's bucket: {hours}; "
                      f"no bucket → {DEFAULT_MTBI_HOURS:g} h, flagged; >20 % is the median of the "
                      "development traces' weeks, doubling per bucket below), the MTBI scale "
                      f"(× 0.25 … × 4), W ({DEFAULT_WAIT_HOURS:g} h, the same traces' median), the "
                      f"per-VM share ρ ({DEFAULT_PER_VM_SHARE:g}, from public count traces of 4 "
                      "and 16 VMs), R (6 min), D (0.25 GB/s, the EBS gp2 ceiling) and δ0 (0 s). "
                      "docs/method.md shows the derivations."))
    st.markdown(words("**Objectives.** Cheapest (least expected cost, optional deadline), fastest "
                      "(least expected makespan, optional job budget) and the Pareto frontier, "
                      "over every feasible cluster. The PuLP integer program is not used here: "
                      "these objectives are nonlinear in n (the speedup, the stalls and the "
                      "exponentials the interruption model), so they are evaluated exactly, "
                      "vectorised with numpy, on the enumeration's candidate table of every "
                      "feasible configuration."))


def todays_gpus() -> None:
    st.markdown(words("### Today's GPUs: estimated eFLOPS and scaling, and their error"))
    st.markdown(
        words("The paper measured three GPU types. A catalog of today lists dozens, so a type "
              "without a measurement gets an **estimated** eFLOPS (per GPU k·C^0.34·B^0.66, C the "
              "chip's dense FP16 tensor TFLOPS and B its memory bandwidth from its datasheet, the "
              "exponent from a V100/A10 benchmark pair and k fitted on the measured types; a VM of "
              "m GPUs gets m times that, less an intra-node all-reduce) and a **prior** scaling "
              "curve (a data-parallel step model: compute, then a ring all-reduce of the gradients "
              "over the VM's network). The Instances, "
              "Recommend and Plan pages say which numbers are measured, estimated or edited. How "
              "far off the estimates are, computed now from the bundled measurements:"))
    for table in method_compute.method_tables():
        _method_table(table)
    import plotly.express as px  # with the first chart of this page

    curves = method_compute.prior_curves()
    figure = px.line(curves, x="n", y="speedup", color="series", facet_col="curve",
                     markers=True, labels={"n": "nodes n", "speedup": "speedup t(1)/t(n)"},
                     title="Measured speedup vs the prior fitted without that curve")
    figure.update_layout(height=340, legend_title_text="")
    plain_view.chart(figure, key="method_prior_curves")
    st.caption("Each panel: one of the artifact's measured curves, the prior's S(n) with tau "
               "and alpha fitted on the other two curves, and perfect scaling S(n) = n.")
    link("instances", "Which types of the catalog are estimated")


def spot_reality() -> None:
    st.markdown("### Spot markets: the model against reality")
    st.markdown(
        words("A reference job of 10 compute hours checkpointed every hour (36 s stall, 6 min "
              "restart) on one spot VM. Each model sees only the **first half** of a public spot "
              "trace (skypilot-org/spot-traces: MTBI and the capacity wait W, or its own up and "
              "periods) and predicts the mean makespan of the `wait` backtest on the **second "
              "half**. *Renewal* resamples the first half's up and down periods (and waits for "
              "capacity at the start). Nothing was tuned to these traces."))
    frame = method_compute.trace_model_check()
    plain_view.dataframe(frame, hide_index=True, key="method_trace_models", column_config={
        "trace": "trace",
        "availability": st.column_config.NumberColumn("avail.", format="%.2f"),
        "mtbi_hours": st.column_config.NumberColumn("MTBI (h)", format="%.2f"),
        "wait_hours": st.column_config.NumberColumn("W (h)", format="%.2f"),
        "backtest_hours": st.column_config.NumberColumn("backtest (h)", format="%.1f"),
        "closed_form_hours": st.column_config.NumberColumn("closed form (h)", format="%.1f"),
        "closed_form_error": st.column_config.NumberColumn("error (%)", format="%+.0f"),
        "renewal_hours": st.column_config.NumberColumn("renewal (h)", format="%.1f"),
        "renewal_error": st.column_config.NumberColumn("error (%)", format="%+.0f")})
    st.caption(
        words("Neither model holds on a held-out half (markets change between the halves; an empty "
              "backtest means the pool never came up in its second half). So `deepvm plan --pool` "
              "forecasts from the **recent** days of the traces a type has (below), and a type "
              "**without a trace** keeps the closed form with MTBI and W from its Spot Advisor "
              "bucket, as the plan's `evaluated_by` and `odds` say per cluster."))
    st.markdown(words("**Forecasts from a recent window.** Markets change from week to week, so "
                      "the plan reads the last 7 days of a trace and forecasts the next week with "
                      "one of three models; its P10-P90 adds how the trace's MTBI and W moved from "
                      "day to day. Every development trace, origins every 2 days:"))
    for table in rolling_tables():
        _method_table(table)
    link("spot", "Replay your job on spot traces")


def _method_table(table: MethodTable) -> None:
    """One :class:`MethodTable`: its title, the table (numbers in its formats) and its
    reading."""
    st.markdown(words(f"**{table.title}**"))
    plain_view.dataframe(table.records(), hide_index=True, key=f"method_{table.key}",
                         column_config={c: st.column_config.NumberColumn(format=_printf(f))
                                        for c, f in zip(table.columns, table.formats, strict=True)
                                        if f})
    st.caption(words(table.reading))


def _printf(spec: str) -> str:
    """A format spec of :class:`MethodTable` (``.1f``, ``+.1f``) as a printf format."""
    return f"%{spec}"


def _bundled(name: str) -> tuple[str, int]:
    choice = catalog_state.catalog_choices()[name]
    assert choice.path is not None  # bundled catalogs are files
    return str(choice.path), choice.path.stat().st_mtime_ns


def main() -> None:
    st.title("Method")
    st.caption(words("DeepVM (CCGrid paper) in four stages, as this tool implements it. Each stage "
                     "links to where the app shows it."))
    stages()
    with st.container(border=True):
        proxy_note()
    with st.container(border=True):
        findings()
    with st.container(border=True):
        todays_gpus()
    with st.container(border=True):
        job_model()
    with st.container(border=True):
        spot_reality()


widgets.run_page(main)
