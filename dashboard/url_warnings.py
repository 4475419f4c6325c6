"""What the dashboard says about a URL value it cannot use: :class:`UrlWarning`, the cut echo
of the value (:func:`echo`), and the readers of numbers and switches that say why a value is
refused (:func:`read_number`, :func:`read_switch`), for the sidebar's and the Plan page's
parameters alike. Pure (no Streamlit)."""

from __future__ import annotations

import math
from dataclasses import dataclass

#: A refused URL value is echoed in a warning up to this many characters.
ECHO_CHARS = 40


def echo(text: str) -> str:
    """``text`` quoted for a warning, cut to :data:`ECHO_CHARS` characters: ``'abc'``, or
    ``'aaaa…' (5,000 characters)``."""
    if len(text) <= ECHO_CHARS:
        return repr(text)
    return f"{text[:ECHO_CHARS]!r}… ({len(text):,} characters)"


#: What a switch parameter (``quotas``, ``presentation``, the Plan page's ``pw_off``) reads as
#: on, and as off (any case).
SWITCH_ON = frozenset({"1", "true", "on", "yes"})
SWITCH_OFF = frozenset({"0", "false", "off", "no"})


def read_number(text: str, whole: bool, low: float, high: float) -> tuple[float | None, str]:
    """The number ``text`` holds (``whole``: an integer) when it lies in ``[low, high]``, and
    ``""``; else ``None`` and why not, as a warning words it (``"is outside 1..100"``)."""
    try:
        number: float = int(text) if whole else float(text)
    except ValueError:
        return None, "is not a whole number" if whole else "is not a number"
    if not math.isfinite(number):
        return None, "is not a finite number"
    if not low <= number <= high:
        return None, (f"is outside {int(low)}..{int(high)}" if whole else
                      f"is outside {low:g}..{high:g}")
    return number, ""


def read_switch(text: str) -> bool | None:
    """``text`` as a switch (:data:`SWITCH_ON`, :data:`SWITCH_OFF`), ``None`` if neither."""
    word = text.lower()
    return True if word in SWITCH_ON else False if word in SWITCH_OFF else None


@dataclass(frozen=True)
class UrlWarning:
    """A URL value that could not be used: the parameter it is about (``None``: none in
    particular) and the text shown."""

    param: str | None
    text: str

    def __str__(self) -> str:
        return self.text
