"""Number inputs that say in words when a typed value is refused (issue 20, item 5).

Streamlit's own bounds (``min_value``/``max_value``) refuse a value in the browser only: the
input keeps showing it in red, the reason is in a tooltip, and the session goes on with the
old value. These inputs have no browser bounds; their ``on_change`` callback checks the typed
value against the bounds (the core's), and a refused value is put back to the value in use,
with a line next to the input naming the value typed, the bound and the value in use. The
line stays until the input is changed again.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dashboard import keys
from dashboard.keys import TYPED_ACCEPTED as ACCEPTED
from dashboard.keys import TYPED_REFUSED as REFUSED
from dashboard.keys import Key


def refusal(label: str, typed: Any, low: float, high: float, unit: str,
            in_use: float) -> str | None:
    """Why ``typed`` is refused for ``[low, high]`` (``None``: it is taken)."""
    try:
        value = float(typed)
    except (TypeError, ValueError):
        why = "it is not a number"
    else:
        if not math.isfinite(value):
            why = "it is not a finite number"
        elif value < low:
            why = f"the least is {low:g}{unit}"
        elif value > high:
            why = f"the most is {high:g}{unit}"
        else:
            return None
    shown = f"{value:g}{unit}" if why.startswith("the") else str(typed)
    return f"{label}: {shown} was refused ({why}); {in_use:g}{unit} is in use."


def check(name: str, label: str, low: float, high: float, unit: str,
          then: Callable[[], None] | None = None) -> None:
    """``on_change`` of the input ``name``: refuse a value outside ``[low, high]``; then call
    ``then``."""
    ss = st.session_state
    accepted = ACCEPTED.get()
    refused = REFUSED.get()
    previous = accepted.get(name, ss[name])
    why = refusal(label, ss[name], low, high, unit, previous)
    if why is None:
        accepted[name] = ss[name]
        refused.pop(name, None)
    else:
        ss[name] = previous
        refused[name] = why
    if then is not None:
        then()


def number(container: DeltaGenerator, label: str, key: Key[Any], low: float, high: float, *,
           unit: str = "", whole: bool = False, then: Callable[[], None] | None = None,
           note_to: DeltaGenerator | None = None, called: str | None = None,
           **options: Any) -> None:
    """A number input of ``key`` bounded to ``[low, high]`` by :func:`check`, and the reason
    for its last refusal under it. ``options`` go to ``st.number_input`` (``step``,
    ``format``, ``help``, ``label_visibility``...); ``whole``: an int input; ``then``: called
    after each change (once checked); ``note_to``: where the refusal goes (default: under
    the input); ``called``: the input's name in that line (default: ``label``)."""
    ss = st.session_state
    accepted, refused = ACCEPTED.get(), REFUSED.get()
    if key.name in refused and ss[key.name] != accepted.get(key.name):
        refused.pop(key.name)  # changed since (a slider, a link): the refusal is old news
    accepted[key.name] = ss[key.name]
    if whole:
        options["step"] = int(options.get("step", 1))
    container.number_input(label, key=key.name, persist_state=keys.PERSIST, on_change=check,
                           args=(key.name, called or label, low, high, unit, then), **options)
    why = REFUSED.get().get(key.name)
    if why is not None:
        (note_to or container).markdown(f":red[{why}]")
