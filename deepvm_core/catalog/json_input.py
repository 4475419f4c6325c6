"""Reading JSON from outside (uploads, files, exports) within bounds, so that any input ends in
a :class:`JsonInputError` naming what is wrong instead of a ``RecursionError``, a
``MemoryError`` or a parser's ``ValueError``.

Before the parser runs, the text's size is checked against a byte limit and its nesting depth
against :data:`MAX_JSON_DEPTH` (a cheap scan of the brackets outside strings: the standard
parser recurses once per level and overflows the stack near 1,000). The parser's own errors
(malformed JSON, text that is not UTF-8/16/32) become a :class:`JsonInputError` with the line and
column where known. Integers longer than :data:`MAX_INTEGER_DIGITS` digits are read as floats
(as JavaScript reads them; a huge one becomes infinity, which every numeric field refuses)
instead of hitting Python's limit on integer string conversion. ``NaN`` and ``Infinity`` are
read as floats too; the callers' field checks refuse non-finite numbers.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np

from deepvm_core.errors import DeepVMError

#: The deepest nesting of arrays and objects read. Our files nest at most 5 levels (an export's
#: embedded catalog row's scaling fit); Python's parser overflows its stack near 1,000.
MAX_JSON_DEPTH = 32
#: Integer literals with more digits than this are read as floats.
MAX_INTEGER_DIGITS = 30

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_OPENERS = np.frombuffer(b"[{", dtype=np.uint8)


class JsonInputError(DeepVMError):
    """JSON text that was not read: too large, too deep, not text, or malformed.

    Attributes:
        where: ``(file)``, or ``line L, column C`` for a syntax error.
        value: the measured size or depth, or ``None``.
        reason: what is wrong, in a sentence.
    """

    def __init__(self, where: str, value: object, reason: str) -> None:
        self.where = where
        self.value = value
        self.reason = reason
        super().__init__(f"{where}: {reason}")


def json_nesting_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in ``text``, brackets inside strings not counted.

    Linear in the text and done by regular expressions and numpy, so an 8 MB file is scanned in
    tens of milliseconds. Unbalanced or malformed text gives some depth; the parser then
    reports the syntax error.
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if not brackets:
        return 0
    codes = np.frombuffer(brackets.encode("ascii"), dtype=np.uint8)
    steps = np.where(np.isin(codes, _OPENERS), 1, -1)
    return max(int(np.cumsum(steps).max()), 0)


def _parse_int(digits: str) -> int | float:
    if len(digits) > MAX_INTEGER_DIGITS + 1:  # + 1 for a sign
        return float(digits)
    return int(digits)


def _size_text(count: int) -> str:
    return f"{count:,} bytes" + (f" ({count / 2**20:.3g} MiB)" if count >= 2**20 else "")


def _too_large(size: int, max_bytes: int) -> JsonInputError:
    return JsonInputError("(file)", size, f"the file is {_size_text(size)}; at most "
                          f"{_size_text(max_bytes)} are read")


def decode_json_text(data: str | bytes, *, max_bytes: int) -> str:
    """``data`` as text (bytes in UTF-8, -16 or -32, as :func:`json.loads` detects them),
    at most ``max_bytes`` long.

    Raises:
        JsonInputError: too large, or bytes that are not text in those encodings.
    """
    size = len(data) if isinstance(data, bytes) or len(data) > max_bytes else len(
        data.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise _too_large(size, max_bytes)
    if isinstance(data, str):
        return data
    encoding = json.detect_encoding(data)
    try:
        return data.decode(encoding, "surrogatepass")
    except UnicodeDecodeError as exc:
        raise JsonInputError("(file)", None, f"not text in {encoding.upper()} (JSON must be "
                             f"UTF-8): byte {exc.start}: {exc.reason}") from None


def parse_json_bounded(data: str | bytes, *, max_bytes: int,
                       max_depth: int = MAX_JSON_DEPTH) -> object:
    """Parse JSON text after checking its size and nesting depth (module doc).

    Raises:
        JsonInputError: too large, too deeply nested, not text, or malformed JSON.
    """
    text = decode_json_text(data, max_bytes=max_bytes)
    depth = json_nesting_depth(text)
    if depth > max_depth:
        raise JsonInputError("(file)", depth, f"the JSON nests {depth:,} levels deep; at most "
                             f"{max_depth} are read")
    try:
        return json.loads(text, parse_int=_parse_int)
    except json.JSONDecodeError as exc:
        raise JsonInputError(f"line {exc.lineno}, column {exc.colno}", None,
                             f"malformed JSON: {exc}") from None
    except (ValueError, RecursionError, OverflowError) as exc:  # guarded above; kept as a net
        raise JsonInputError("(file)", None, f"malformed JSON: {exc}") from None


def read_bytes_bounded(path: str | os.PathLike[str], *, max_bytes: int) -> bytes:
    """The bytes of ``path``; a file larger than ``max_bytes`` is refused before it is read.

    Raises:
        JsonInputError: the file is larger than ``max_bytes``.
        OSError: the file cannot be read.
    """
    with Path(path).open("rb") as handle:
        data = handle.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise _too_large(max(os.fstat(handle.fileno()).st_size, len(data)), max_bytes)
        return data


def read_json_file(path: str | os.PathLike[str], *, max_bytes: int,
                   max_depth: int = MAX_JSON_DEPTH) -> object:
    """The JSON document in the file at ``path``, read within bounds: a file larger than
    ``max_bytes`` is refused before it is read (:func:`read_bytes_bounded`), then the text is
    parsed by :func:`parse_json_bounded`. The one reader of the JSON documents a user gives
    back (a plan, an export).

    Raises:
        JsonInputError: too large, too deeply nested, not text or malformed JSON, or a file
            that cannot be read (``reason`` ``cannot be read: ...``).
    """
    try:
        data = read_bytes_bounded(path, max_bytes=max_bytes)
    except OSError as exc:
        raise JsonInputError("(file)", None, f"cannot be read: {exc.strerror or exc}") from None
    return parse_json_bounded(data, max_bytes=max_bytes, max_depth=max_depth)
