"""Where a plan's odds come from, in one sentence (issue 25): the one home of the sentences a
plan, its JSON, the command line and the dashboard's card show beside an estimate.

* From a Spot Advisor bucket: ``a >20 % interruption market: assumed, not measured`` (with
  ``(your MTBI)``, ``(your W)`` when the user set them; a type without a bucket says so).
* From spot traces: ``measured: p3.2xlarge@us-west-2a, the last 7 days, replayed`` (or
  ``renewal model``, ``closed form``).
* Without spot VMs: nothing is interrupted.
"""

from __future__ import annotations

from typing import Final

from deepvm_core.catalog.types import INTERRUPTION_BUCKET_LABELS

#: The end of every sentence about odds that come from assumptions.
ASSUMED: Final = "assumed, not measured"
#: The sentence of a cluster without spot VMs.
NO_SPOT: Final = "no spot VMs: nothing is interrupted"
#: How each trace model is named in the sentence (``--model``'s values).
MODEL_WORDS: Final = {"replay": "replayed", "renewal": "renewal model",
                      "closed-form": "closed form on its statistics"}


def bucket_label(bucket: int) -> str:
    """A bucket as prose writes it: ``>20 %``, ``10-15 %``."""
    return INTERRUPTION_BUCKET_LABELS[bucket].replace("%", " %")


def bucket_odds(bucket: int | None, *, user_mtbi: bool = False, user_wait: bool = False) -> str:
    """The odds of a type planned from its bucket: ``a >20 % interruption market: assumed, not
    measured``; a type without a bucket: ``a market without a Spot Advisor bucket (the 10-15 %
    defaults): ...``; the user's MTBI or W is named."""
    if bucket is None:
        what = f"a market without a Spot Advisor bucket (the {bucket_label(2)} defaults)"
    else:
        what = f"a {bucket_label(bucket)} interruption market"
    given = [name for name, flag in (("MTBI", user_mtbi), ("W", user_wait)) if flag]
    if given:
        what += f" (your {' and '.join(given)})"
    return f"{what}: {ASSUMED}"


def window_words(window_days: float | None) -> str:
    """``the last 7 days`` or ``the whole trace`` (``None``)."""
    if window_days is None:
        return "the whole trace"
    return f"the last {window_days:g} day{'s' if window_days != 1 else ''}"


def trace_odds(model: str, pools: tuple[str, ...], window_days: float | None) -> str:
    """The odds of a candidate evaluated on spot traces: ``measured: POOL, POOL2, the last 7
    days, replayed``."""
    return (f"measured: {', '.join(pools)}, {window_words(window_days)}, "
            f"{MODEL_WORDS.get(model, model)}")
