"""Plan a job's calibration panel: which measurements the plan uses per GPU type, a one-click
offer to take the job's epoch time from an uploaded table, and the scaling fits (and relative
eFLOPS) of a measurements CSV, used in the working catalog on request.
"""

from __future__ import annotations

import hashlib

import streamlit as st

from dashboard import (
    catalog_state,
    job_frames,
    job_view,
    keys,
    plain_view,
    plan_compute,
    uploads,
)
from dashboard.plain_view import words
from deepvm_core.catalog import Catalog
from deepvm_core.errors import DeepVMError


def offer_epoch_time(catalog: Catalog, name: str, text: str) -> None:
    """For an uploaded table of the user's own epoch times: one click takes g_ref's one-node
    time from it as the job's epoch time (nothing happens without the click)."""
    if keys.PLAN["workload"].get() == "transformer":
        st.caption(words(f"A transformer job's time comes from its tokens per second, not an "
                         f"epoch time: {name}'s one-node times are offered as the epoch time of "
                         "a CNN job."))
        return
    offer = job_view.epoch_time_offer(catalog, name, text)
    if offer is None:
        return
    if offer.seconds is None:
        st.caption(words(f"{name} has no one-node time of {offer.reference_gpu} (the reference "
                         "type): your epoch time stays as typed."))
    elif offer.problem is not None:
        st.error(words(offer.problem), icon=":material/error:")
    elif offer.in_use:
        st.success(words(f"Your epoch time is {offer.reference_gpu}'s one-node time from {name}: "
                         f"{offer.seconds:g} s."), icon=":material/check:")
    else:
        st.button(f"Use {offer.reference_gpu}'s one-node time from this file as my epoch time "
                  f"({offer.seconds:g} s on 1 VM)", key="plan_use_epoch_time",
                  icon=":material/timer:", on_click=job_view.use_epoch_time,
                  args=(offer.reference_gpu, offer.seconds))


def measurements_in_use(catalog: Catalog) -> None:
    """Which measurements the plan uses for each GPU type of ``catalog``: one table, the
    upload's rows of the types it measures well (and why the others are not used) once it
    measures any type well, else the bundled file; a type without rows in it gets an eFLOPS
    ratio."""
    _, tables = job_view.measurements_in_use()
    st.markdown(words("**Measurements in use**, per GPU type (one table: a type it does not "
                      "measure runs at its eFLOPS relative to the reference type):"))
    plain_view.dataframe(job_frames.measurements_in_use_frame(catalog, tables), hide_index=True,
                         key="plan_measurements_in_use")


def confirm_upload(confirmed: bool) -> None:
    """Record whether the user confirmed the uploaded file's untrusted fits; the plan above
    reads it (:func:`dashboard.job_view.measurements_in_use`), so plan again on a change."""
    upload = keys.PLAN_MEASUREMENTS.get()
    if upload is None:
        return
    wanted = upload if confirmed else None
    if keys.PLAN_MEASUREMENTS_CONFIRMED.get() != wanted:
        keys.PLAN_MEASUREMENTS_CONFIRMED.set(wanted)
        st.rerun()


def calibrate(active: catalog_state.ActiveCatalog) -> None:
    """Fit (a, b, c) per GPU type to a measurements CSV and use the fits in the catalog."""
    with st.expander("Calibrate: fit the scaling curves to your measurements"):
        st.caption("A CSV with the columns instance,nodes,epoch_seconds (seconds per epoch of "
                   "one job on 1..N VMs of each GPU type). The bundled file is the paper's "
                   "ResNet-50 measurements.")
        upload = st.file_uploader("Measurements CSV", type=["csv"], key="plan_csv",
                                  max_upload_size=uploads.TRANSPORT_MB)
        if upload is not None:
            text = upload.getvalue().decode("utf-8", errors="replace")
            try:
                plan_compute.measurements_table(upload.name, text)
            except DeepVMError as exc:
                st.error(words(f"{upload.name} was not loaded: {exc}"), icon=":material/error:")
            else:
                if keys.PLAN_MEASUREMENTS.get() != (upload.name, text):  # the plan above reads
                    keys.PLAN_MEASUREMENTS.set((upload.name, text))  # them: plan again
                    st.rerun()
        name, text = keys.PLAN_MEASUREMENTS.get() or plan_compute.bundled_measurements()
        measurements_in_use(active.catalog)
        ref = job_view.reference_type(active.catalog)  # the plan's reference type
        if keys.PLAN_MEASUREMENTS.get() is not None:
            offer_epoch_time(active.catalog, name, text)
        eflops = st.toggle(words("Also calibrate relative eFLOPS from the one-node times"),
                           key=keys.PLAN_CALIBRATE_EFLOPS.name,
                           help=f"Relative to the plan's reference type ({ref})." if ref else
                           None)
        try:
            cal = plan_compute.calibration(active.catalog, name, text, ref if eflops else None)
        except DeepVMError as exc:
            st.error(words(f"Cannot calibrate from {name}: {exc}"), icon=":material/error:")
            return
        for warning in plan_compute.unused_measurements(active.catalog, name, text):
            st.warning(words(warning), icon=":material/warning:")
        if not cal.fits:
            st.info("Nothing to calibrate: no measured type is a GPU type of this catalog.",
                    icon=":material/info:")
            st.button("Use these fits in the working catalog", key="plan_use_fits",
                      icon=":material/check:", disabled=True, help="There are no fits.")
            return
        plain_view.dataframe(job_frames.fits_frame(cal), hide_index=True, key="plan_fits")
        confirmed = True
        if cal.warnings:
            st.warning(words("These fits are not trusted; check the measurements before using them:"
                             "\n\n" + "\n".join(f"- {w}" for w in cal.warnings)),
                       icon=":material/warning:")
            # keyed by the file only: the fits once in the catalog stay confirmed
            digest = hashlib.sha256(f"{name}{text}".encode()).hexdigest()
            confirmed = st.checkbox("Use them anyway: I have checked the measurements",
                                    key=f"plan_cal_confirm_{digest[:12]}",
                                    help="The plan above uses these measurements only then.")
            confirm_upload(confirmed)
        if st.button("Use these fits in the working catalog", key="plan_use_fits",
                     icon=":material/check:", disabled=not confirmed):
            catalog_state.use_edited_catalog(active, cal.catalog)
            st.success("The working catalog now carries these fits (see the catalog editor).")

