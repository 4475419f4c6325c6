"""The AWS Spot Instance Advisor: each GPU type's interruption bucket (``deepvm fetch
--spot-advisor``), read and parsed: :func:`read_spot_advisor`.

The advisor's data is one public JSON file, ``spot_advisor`` -> region -> ``Linux`` -> type ->
``{"s": savings %, "r": bucket index}``; :func:`parse_spot_advisor` keeps ``r``, an index into
:data:`~deepvm_core.catalog.types.INTERRUPTION_BUCKET_LABELS`. The file is not behind any AWS
API: :func:`get_spot_advisor` reads it over plain HTTP(S) with ``urllib`` (a timeout,
retries), from :func:`spot_advisor_url`.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

from deepvm_core.catalog.types import INTERRUPTION_BUCKET_LABELS
from deepvm_core.cloud.aws.client import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_READ_TIMEOUT_S,
    MalformedAnswer,
    sanitize_message,
)
from deepvm_core.errors import FetchError

#: The environment variable that overrides :data:`DEFAULT_SPOT_ADVISOR_URL`.
SPOT_ADVISOR_URL_VARIABLE = "DEEPVM_SPOT_ADVISOR_URL"
#: AWS's public Spot Instance Advisor data (all regions, one JSON file).
DEFAULT_SPOT_ADVISOR_URL = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json"
#: The operation name a failed Spot Instance Advisor read reports.
SPOT_ADVISOR_OPERATION = "SpotInstanceAdvisor"
_SPOT_ADVISOR_MAX_BYTES = 64 * 1024 * 1024  # the real file is a few MB
_RETRY_BASE_DELAY_S = 0.25  # first wait between attempts; doubles each time
#: The operating system whose Spot Instance Advisor buckets are read.
SPOT_ADVISOR_OS = "Linux"


def spot_advisor_url() -> str:
    """Where the Spot Instance Advisor data is read: ``$DEEPVM_SPOT_ADVISOR_URL``, else
    :data:`DEFAULT_SPOT_ADVISOR_URL`."""
    return os.environ.get(SPOT_ADVISOR_URL_VARIABLE) or DEFAULT_SPOT_ADVISOR_URL


def url_secrets(url: str) -> tuple[str, ...]:
    """The user name and password written in ``url``, if any (to redact them)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return ()
    return tuple(s for s in (parts.username, parts.password) if s)


def _advisor_error(url: str, reason: str, kind: str) -> FetchError:
    return FetchError(sanitize_message(f"reading the AWS Spot Instance Advisor data from {url} "
                                       f"failed: {reason}. Nothing was written.",
                                       url_secrets(url)),
                      operation=SPOT_ADVISOR_OPERATION, kind=kind)


def get_spot_advisor(
    url: str,
    *,
    timeout_s: float = DEFAULT_READ_TIMEOUT_S,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """The parsed JSON of the Spot Instance Advisor file at ``url`` (``http``, ``https`` or
    ``file``).

    A connection failure, a timeout, HTTP 429 or a 5xx answer is retried (``max_attempts``
    requests in all, waiting 0.25 s, 0.5 s, ... in between); any other HTTP error is not.

    Raises:
        FetchError: kind ``unreachable``, ``timeout``, ``server_error``, ``throttled``,
            ``access_denied``, ``malformed`` or ``other``; operation
            :data:`SPOT_ADVISOR_OPERATION`; the URL named, credentials in it redacted.
    """
    scheme = url.split(":", 1)[0].lower()
    if scheme not in ("http", "https", "file"):
        raise _advisor_error(url, "the URL must start with http://, https:// or file://",
                             "other")
    request = urllib.request.Request(url, headers={"User-Agent": "deepvm-studio",
                                                   "Accept": "application/json"})
    body = b""
    for attempt in range(1, max_attempts + 1):
        retry: tuple[str, str] | None = None
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                body = response.read(_SPOT_ADVISOR_MAX_BYTES + 1)
            break
        except urllib.error.HTTPError as exc:
            if exc.code == 429:
                retry = (f"throttled (HTTP 429) after {attempt} attempt(s)", "throttled")
            elif exc.code >= 500:
                retry = (f"the server answered HTTP {exc.code} after {attempt} attempt(s)",
                         "server_error")
            else:
                kind = "access_denied" if exc.code in (401, 403) else "other"
                raise _advisor_error(url, f"the server answered HTTP {exc.code} ({exc.reason})",
                                     kind) from None
        except TimeoutError:
            retry = (f"no answer within {timeout_s:g} s after {attempt} attempt(s)", "timeout")
        except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            if isinstance(reason, TimeoutError):
                retry = (f"no answer within {timeout_s:g} s after {attempt} attempt(s)",
                         "timeout")
            else:
                retry = (f"could not be reached after {attempt} attempt(s): {reason}",
                         "unreachable")
        if attempt == max_attempts:
            raise _advisor_error(url, *retry)
        sleep(_RETRY_BASE_DELAY_S * 2 ** (attempt - 1))
    if len(body) > _SPOT_ADVISOR_MAX_BYTES:
        raise _advisor_error(url, f"the answer is larger than {_SPOT_ADVISOR_MAX_BYTES} bytes",
                             "malformed")
    try:
        return json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else exc.reason
        raise _advisor_error(url, f"malformed answer, not JSON ({reason})", "malformed") from None


def parse_spot_advisor(data: object) -> dict[str, dict[str, int]]:
    """``{region: {instance type: interruption bucket}}`` from the Spot Instance Advisor's JSON
    (:data:`SPOT_ADVISOR_OS` only; a region without it maps to ``{}``).

    The bucket is the advisor's ``r``, an index 0..4 whose meaning the file's ``ranges`` list
    states; when that list is present its labels must be :data:`INTERRUPTION_BUCKET_LABELS`
    (so that an index still means what the catalog says it means).

    Raises:
        MalformedAnswer: not the advisor's shape, a bucket that is not a whole number 0..4, or
            ranges that changed meaning.
    """
    if not isinstance(data, Mapping) or not isinstance(data.get("spot_advisor"), Mapping):
        raise MalformedAnswer("the Spot Instance Advisor data has no 'spot_advisor' object")
    ranges = data.get("ranges")
    if ranges is not None:
        labels = {r.get("index"): r.get("label") for r in ranges if isinstance(r, Mapping)} if (
            isinstance(ranges, list)) else {}
        expected = dict(enumerate(INTERRUPTION_BUCKET_LABELS))
        if labels != expected:
            raise MalformedAnswer(f"the Spot Instance Advisor's interruption ranges {labels!r} "
                                  f"are not the expected {expected!r}")
    out: dict[str, dict[str, int]] = {}
    for region, systems in data["spot_advisor"].items():
        if not isinstance(systems, Mapping):
            raise MalformedAnswer(f"Spot Instance Advisor region {region!r} is not an object")
        types = systems.get(SPOT_ADVISOR_OS, {})
        if not isinstance(types, Mapping):
            raise MalformedAnswer(f"Spot Instance Advisor {region}/{SPOT_ADVISOR_OS} is not an "
                                  "object")
        buckets: dict[str, int] = {}
        for name, entry in types.items():
            bucket = entry.get("r") if isinstance(entry, Mapping) else None
            if isinstance(bucket, bool) or not isinstance(bucket, int) or not (
                    0 <= bucket < len(INTERRUPTION_BUCKET_LABELS)):
                raise MalformedAnswer(f"Spot Instance Advisor {region}/{SPOT_ADVISOR_OS}/{name}: "
                                      f"bucket {bucket!r} is not a whole number from 0 to 4")
            buckets[str(name)] = bucket
        out[str(region)] = dict(sorted(buckets.items()))
    return out


def read_spot_advisor(
    url: str | None = None, *, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    timeout_s: float = DEFAULT_READ_TIMEOUT_S,
) -> dict[str, dict[str, int]]:
    """``{region: {instance type: interruption bucket}}`` (Linux) from the AWS Spot Instance
    Advisor at ``url`` (default: ``$DEEPVM_SPOT_ADVISOR_URL`` or AWS's public file).

    Raises:
        FetchError: the file cannot be read (retried ``max_attempts`` times in all) or is not
            the advisor's format (kind ``malformed``).
    """
    url = url or spot_advisor_url()
    data = get_spot_advisor(url, timeout_s=timeout_s, max_attempts=max_attempts)
    try:
        return parse_spot_advisor(data)
    except MalformedAnswer as exc:
        raise FetchError(sanitize_message(f"the AWS Spot Instance Advisor data from {url} is "
                                          f"malformed: {exc}. Nothing was written.",
                                          url_secrets(url)),
                         operation=SPOT_ADVISOR_OPERATION, kind="malformed") from None

