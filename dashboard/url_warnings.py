"""What the dashboard says about a URL value it cannot use: :class:`UrlWarning` and the cut
echo of the value (:func:`echo`). Pure (no Streamlit)."""

from __future__ import annotations

from dataclasses import dataclass

#: A refused URL value is echoed in a warning up to this many characters.
ECHO_CHARS = 40


def echo(text: str) -> str:
    """``text`` quoted for a warning, cut to :data:`ECHO_CHARS` characters: ``'abc'``, or
    ``'aaaa…' (5,000 characters)``."""
    if len(text) <= ECHO_CHARS:
        return repr(text)
    return f"{text[:ECHO_CHARS]!r}… ({len(text):,} characters)"


@dataclass(frozen=True)
class UrlWarning:
    """A URL value that could not be used: the parameter it is about (``None``: none in
    particular) and the text shown."""

    param: str | None
    text: str

    def __str__(self) -> str:
        return self.text
