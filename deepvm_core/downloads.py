"""Downloading one file: the one home of "GET with a timeout, bounded in size, and every
failure a :class:`~deepvm_core.errors.FetchError` that names the address and says nothing was
written".

Used by the spot traces' download (:mod:`deepvm_core.market.trace_fetch`) and the SkyPilot
catalog refresh (:mod:`deepvm_core.cloud.skypilot_refresh`). No retries: a caller that wants
them (the Spot Instance Advisor's read) has its own loop.
"""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence

from deepvm_core.errors import FetchError

#: Bytes read per chunk (``progress`` hears of each).
CHUNK_BYTES = 256 * 2**10


def download(url: str, *, timeout_s: float, max_bytes: int, too_large: str,
             schemes: Sequence[str] = ("http", "https"),
             progress: Callable[[int, int], None] | None = None) -> bytes:
    """The bytes at ``url``, read in chunks of :data:`CHUNK_BYTES`.

    Args:
        timeout_s: seconds to wait for the server (connect and each read).
        max_bytes: the largest answer read; ``too_large`` says it in the message
            (``"64 MiB"``).
        schemes: the schemes the address may have (``http``, ``https``, ``file``).
        progress: called as ``progress(bytes read, bytes expected)`` when the answer starts
            (0 and its ``Content-Length``, 0 when unknown) and after each chunk.

    Raises:
        FetchError: a scheme not in ``schemes`` (kind ``other``), an HTTP error
            (``server_error`` for 5xx, else ``other``), no answer in time (``timeout``), no
            connection (``unreachable``), an answer over ``max_bytes`` (``malformed``).
    """
    scheme = url.split(":", 1)[0].lower()
    if scheme not in schemes:
        starts = [f"{s}://" for s in schemes]
        either = (f"{', '.join(starts[:-1])} or {starts[-1]}" if len(starts) > 1
                  else starts[0])
        raise FetchError(f"{url}: the address must start with {either}. Nothing was written.",
                         kind="other")
    request = urllib.request.Request(url, headers={"User-Agent": "deepvm-studio"})
    chunks: list[bytes] = []
    size = 0
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            total = int(response.headers.get("Content-Length") or 0)
            if progress is not None:
                progress(0, total)
            while chunk := response.read(CHUNK_BYTES):
                chunks.append(chunk)
                size += len(chunk)
                if size > max_bytes:
                    raise FetchError(f"downloading {url} failed: larger than {too_large}. "
                                     "Nothing was written.", kind="malformed")
                if progress is not None:
                    progress(size, max(total, size))
    except urllib.error.HTTPError as exc:
        raise FetchError(f"downloading {url} failed: the server answered HTTP {exc.code}. "
                         "Nothing was written.",
                         kind="server_error" if exc.code >= 500 else "other") from None
    except TimeoutError:
        raise FetchError(f"downloading {url} failed: no answer within {timeout_s:g} s. Nothing "
                         "was written.", kind="timeout") from None
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise FetchError(f"downloading {url} failed: could not be reached ({reason}). Nothing "
                         "was written.", kind="unreachable") from None
    return b"".join(chunks)
