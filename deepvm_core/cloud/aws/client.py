"""AWS sessions, retries and the raw paginated calls (one boto3 operation each).

**boto3.** The standard credential chain (environment, shared files, ``profile``, SSO, ...),
explicit connect/read timeouts and adaptive retries (``total_max_attempts`` attempts in all),
and no ``endpoint_url``: boto3's own endpoint settings (``AWS_ENDPOINT_URL_EC2``,
``AWS_ENDPOINT_URL_PRICING``, the config file) keep working. boto3 is imported when a session
is created, never when this module is. Credentials never appear in a catalog, a note, a log
line or an error message: messages are passed through :func:`sanitize_message`.

Every call follows all pages and returns plain dicts; it raises botocore's exceptions, which
:class:`Caller` turns into a :class:`~deepvm_core.errors.FetchError` naming the operation and
the region.

The Spot Instance Advisor's file is not behind any AWS API: :func:`get_spot_advisor` reads it
over plain HTTP(S) with ``urllib`` (a timeout, retries), from :func:`spot_advisor_url`.
"""

from __future__ import annotations

import fnmatch
import http.client
import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NoReturn

from deepvm_core.cloud.aws.parse import PRICING_FILTERS, SPOT_PRODUCT_DESCRIPTION, MalformedAnswer
from deepvm_core.errors import FetchError

#: Region of the Pricing API client (the API is served from a few regions only).
DEFAULT_PRICING_REGION = "us-east-1"
#: Regions that serve the Price List API.
PRICING_REGIONS = ("us-east-1", "eu-central-1", "ap-south-1")
#: How far back spot price history is read, hours.
DEFAULT_SPOT_WINDOW_HOURS = 6.0
#: Attempts per request in all (the first one included), adaptive retry mode.
DEFAULT_MAX_ATTEMPTS = 5
DEFAULT_CONNECT_TIMEOUT_S = 5.0
DEFAULT_READ_TIMEOUT_S = 30.0
_CHUNK = 50  # instance types per DescribeInstanceTypes / DescribeSpotPriceHistory request

#: The environment variable that overrides :data:`DEFAULT_SPOT_ADVISOR_URL`.
SPOT_ADVISOR_URL_VARIABLE = "DEEPVM_SPOT_ADVISOR_URL"
#: AWS's public Spot Instance Advisor data (all regions, one JSON file).
DEFAULT_SPOT_ADVISOR_URL = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json"
#: The operation name a failed Spot Instance Advisor read reports.
SPOT_ADVISOR_OPERATION = "SpotInstanceAdvisor"
_SPOT_ADVISOR_MAX_BYTES = 64 * 1024 * 1024  # the real file is a few MB
_RETRY_BASE_DELAY_S = 0.25  # first wait between attempts; doubles each time


# ----------------------------------------------------------------------------- sanitizing

_SECRET_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:AKIA|ASIA|AROA|AIDA|ANPA|ABIA|ACCA)[A-Z0-9]{12,}\b"), "[REDACTED]"),
    (re.compile(r"(Credential=)[^\s,\"']+", re.IGNORECASE), r"\1[REDACTED]"),
    (re.compile(r"(Signature=)[0-9a-fA-F]+", re.IGNORECASE), r"\1[REDACTED]"),
    (re.compile(r"((?:X-Amz-)?Security-?Token[=:]\s*)[^\s,\"'&]+", re.IGNORECASE),
     r"\1[REDACTED]"),
    (re.compile(r"((?:aws_)?secret_access_key[\"']?\s*[=:]\s*[\"']?)[^\s,\"'&]+", re.IGNORECASE),
     r"\1[REDACTED]"),
    (re.compile(r"(://)[^/@\s]+@"), r"\1[REDACTED]@"),
)


def sanitize_message(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` without credentials: the given secret values, AWS access key ids, SigV4
    credential scopes and signatures, session tokens and passwords in URLs are redacted."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[REDACTED]")
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def _session_secrets(session: Any) -> tuple[str, ...]:
    """The credential values of ``session`` (to redact them), or nothing when unresolvable."""
    try:
        creds = session.get_credentials()
        if creds is None:
            return ()
        frozen = creds.get_frozen_credentials()
    # Blind on purpose: this runs while translating another failure, and a credential
    # provider (process, SSO, metadata) may raise anything; that must not replace the error.
    except Exception:  # noqa: BLE001 - redact what we can, never mask the original failure
        return ()
    return tuple(s for s in (frozen.access_key, frozen.secret_key, frozen.token) if s)


# ----------------------------------------------------------------------------- sessions


def create_session(profile: str | None = None) -> Any:
    """A boto3 session on the standard credential chain (``profile``: a named profile).

    Raises:
        FetchError: the profile does not exist or the session cannot be created (kind
            ``credentials``).
    """
    import boto3
    from botocore import exceptions as bx

    try:
        return boto3.session.Session(profile_name=profile)
    except bx.ProfileNotFound:
        raise FetchError(f"the AWS profile {profile!r} is not in the shared config or "
                         "credentials file. Nothing was written.", kind="credentials") from None
    except bx.BotoCoreError as exc:
        raise FetchError(sanitize_message(f"the AWS session could not be created: {exc}. "
                                          "Nothing was written."),
                         kind="credentials") from None


# ----------------------------------------------------------------------------- calls


def _chunks(items: Sequence[str], size: int = _CHUNK) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield list(items[start:start + size])


@dataclass
class Caller:
    """Turns every failure of a boto3 call made with ``session`` into a :class:`FetchError`
    (credentials of the session redacted)."""

    session: Any
    max_attempts: int
    _secrets: tuple[str, ...] | None = field(default=None, repr=False)

    def secrets(self) -> tuple[str, ...]:
        """The session's credential values (resolved once)."""
        if self._secrets is None:
            self._secrets = _session_secrets(self.session)
        return self._secrets

    def fail(self, exc: BaseException, operation: str, region: str,
             label: str | None = None) -> NoReturn:
        """Raise the :class:`FetchError` of ``exc`` from ``operation`` for ``region``."""
        raise _translate(exc, operation, region, self.max_attempts, self.secrets(),
                         label=label) from None


#: AWS error codes that mean "slow down" (the catalog fetch and the fleet launcher's own
#: retry rounds both read them here).
THROTTLING_CODES = frozenset({
    "Throttling", "ThrottlingException", "ThrottledException", "RequestLimitExceeded",
    "TooManyRequestsException", "RequestThrottled", "RequestThrottledException", "SlowDown",
    "PriorRequestNotComplete", "EC2ThrottledException", "BandwidthLimitExceeded",
    "ProvisionedThroughputExceededException", "LimitExceededException"})
_DENIED = {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "Blocked",
           "UnauthorizedException", "NotAuthorized", "Forbidden"}
_REJECTED_CREDENTIALS = {"AuthFailure", "InvalidClientTokenId", "UnrecognizedClientException",
                         "SignatureDoesNotMatch", "IncompleteSignature", "ExpiredToken",
                         "ExpiredTokenException", "RequestExpired", "InvalidAccessKeyId",
                         "MissingAuthenticationToken", "InvalidSignatureException"}
_REGION_NOT_ENABLED = {"OptInRequired", "InvalidRegion", "UnsupportedOperation"}
#: The longest piece of an AWS message quoted in an error, characters.
DETAIL_CHARS = 300

_IAM_ACTIONS = {
    "DescribeInstanceTypes": "ec2:DescribeInstanceTypes",
    "DescribeSpotPriceHistory": "ec2:DescribeSpotPriceHistory",
    "GetProducts": "pricing:GetProducts",
}


def aws_errors() -> tuple[type[BaseException], ...]:
    """The exceptions a boto3 call or a parser of this module raises for a failed fetch
    (anything else is a bug and propagates)."""
    from botocore.exceptions import BotoCoreError, ClientError
    from botocore.parsers import ResponseParserError

    return (BotoCoreError, ClientError, ResponseParserError, MalformedAnswer)


def _one_line(text: object, secrets: Sequence[str]) -> str:
    """``text`` on one line, credentials redacted (before shortening, so that no part of a
    secret survives a cut), at most :data:`DETAIL_CHARS` characters."""
    line = sanitize_message(" ".join(str(text).split()), secrets)
    return line[:DETAIL_CHARS] + "..." if len(line) > DETAIL_CHARS else line


@dataclass(frozen=True)
class AwsFailure:
    """What a failed boto3 call was: the one reading of botocore's exceptions, which the catalog
    fetch (:class:`~deepvm_core.errors.FetchError`) and the fleet launcher
    (:class:`~deepvm_core.cloud.fleet.errors.AwsCallError`) each put in their words.

    Attributes:
        cause: ``no_credentials``, ``credentials_unloadable``, ``unreachable``, ``timeout``,
            ``throttled``, ``credentials_rejected``, ``region_not_enabled``,
            ``access_denied``, ``server_error``, ``refused`` (another AWS error answer),
            ``malformed``, ``botocore`` (another botocore error) or ``other``.
        code: the AWS error code of an error answer, else ``NoCredentials``,
            ``EndpointUnreachable``, ``Timeout`` or the exception's class name.
        message: AWS's message of an error answer (one line, redacted, shortened), else ``""``.
        detail: the exception as text (one line, redacted, shortened).
        status: the HTTP status of an error answer, or ``None``.
        attempts: the attempts botocore made (its retries plus the first).
        answered: AWS answered with an error (botocore's ``ClientError``), as opposed to a
            call that got no answer or a client-side failure.
    """

    cause: str
    code: str
    message: str
    detail: str
    status: int | None = None
    attempts: int = 1
    answered: bool = False

    @property
    def said(self) -> str:
        """`` (Code: message)`` or `` (Code)``: what AWS answered, for a sentence."""
        return f" ({self.code}: {self.message})" if self.message else f" ({self.code})"


def read_aws_failure(exc: BaseException, secrets: Sequence[str] = ()) -> AwsFailure:
    """The :class:`AwsFailure` of ``exc``, raised by a boto3 call (``secrets`` redacted)."""
    from botocore import exceptions as bx
    from botocore.parsers import ResponseParserError

    detail = _one_line(exc, secrets)
    if isinstance(exc, bx.ClientError):
        response = exc.response if isinstance(exc.response, Mapping) else {}
        error = response.get("Error") or {}
        meta = response.get("ResponseMetadata") or {}
        code = str(error.get("Code") or "Unknown")
        status = meta.get("HTTPStatusCode")
        status = status if isinstance(status, int) else None
        if code in THROTTLING_CODES or status == 429:
            cause = "throttled"
        elif code in _REJECTED_CREDENTIALS:
            cause = "credentials_rejected"
        elif code in _REGION_NOT_ENABLED:
            cause = "region_not_enabled"
        elif code in _DENIED or status == 403:
            cause = "access_denied"
        elif status is not None and status >= 500:
            cause = "server_error"
        else:
            cause = "refused"
        return AwsFailure(cause, code, _one_line(error.get("Message") or "", secrets), detail,
                          status, int(meta.get("RetryAttempts") or 0) + 1, answered=True)
    causes: tuple[tuple[str, str, tuple[type[BaseException], ...]], ...] = (
        ("no_credentials", "NoCredentials", (bx.NoCredentialsError,)),
        ("credentials_unloadable", "", (bx.PartialCredentialsError, bx.ProfileNotFound,
                                        bx.SSOError, bx.TokenRetrievalError,
                                        bx.CredentialRetrievalError, bx.InvalidConfigError)),
        ("unreachable", "EndpointUnreachable", (bx.ConnectTimeoutError,
                                                bx.EndpointConnectionError,
                                                bx.ProxyConnectionError, bx.SSLError)),
        ("timeout", "Timeout", (bx.ReadTimeoutError,)),
        ("malformed", "", (ResponseParserError, MalformedAnswer)),
        ("botocore", "", (bx.BotoCoreError,)),
    )
    for cause, code, kinds in causes:
        if isinstance(exc, kinds):
            return AwsFailure(cause, code or type(exc).__name__, "", detail)
    return AwsFailure("other", type(exc).__name__, "", detail)


def _translate(exc: BaseException, operation: str, region: str, max_attempts: int,
               secrets: Sequence[str], *, label: str | None = None) -> FetchError:
    """A :class:`FetchError` (one line, credentials redacted) for a failed boto3 call.

    ``operation`` is the AWS operation name (``GetProducts``); ``label`` how the message names
    it (``Pricing GetProducts (pricing endpoint us-east-1)``), by default ``operation``.
    """
    f = read_aws_failure(exc, secrets)
    detail, said, attempts = f.detail, f.said, f.attempts
    kind, reason = {
        "no_credentials": (
            "credentials", "no AWS credentials found (looked in the environment, the shared "
            "config and credentials files, SSO and instance metadata): set AWS_ACCESS_KEY_ID "
            "and AWS_SECRET_ACCESS_KEY, pass a profile, or run 'aws sso login'"),
        "credentials_unloadable": (
            "credentials", f"AWS credentials could not be loaded: {detail}"),
        "unreachable": (
            "unreachable", f"the endpoint could not be reached after {max_attempts} "
            f"attempt(s): {detail}"),
        "timeout": ("timeout", f"no answer in time after {max_attempts} attempt(s): {detail}"),
        "throttled": (
            "throttled", f"throttled by AWS after {attempts} attempt(s){said}; try again later "
            "or with fewer instance types"),
        "credentials_rejected": (
            "credentials", f"AWS rejected the credentials{said}; check them, or refresh them "
            "('aws sso login' for SSO)"),
        "region_not_enabled": (
            "access_denied", f"the region is not enabled or not supported for this "
            f"account{said}"),
        "access_denied": (
            "access_denied", f"access denied{said}; the credentials need the IAM permission "
            f"{_IAM_ACTIONS.get(operation, operation)}"),
        "server_error": (
            "server_error", f"AWS answered HTTP {f.status} after {attempts} attempt(s){said}"),
        "refused": ("other", f"AWS refused the request (HTTP {f.status}){said}"),
        "malformed": ("malformed", f"malformed answer: {detail}"),
        "botocore": ("other", detail),
    }.get(f.cause, ("other", f"{f.code}: {detail}"))
    message = sanitize_message(f"{label or operation} for region {region} failed: {reason}. "
                               "Nothing was written.", secrets)
    return FetchError(message, operation=operation, region=region, kind=kind)


def describe_instance_types(
    ec2: Any, names_or_patterns: Sequence[str], *, page_size: int = 100
) -> list[dict[str, Any]]:
    """Every ``DescribeInstanceTypes`` item whose type matches a name or glob of
    ``names_or_patterns`` (filter ``instance-type``; all pages). A type the region does not
    offer is simply absent. Raises botocore's exceptions (see :class:`Caller`)."""
    items: dict[str, dict[str, Any]] = {}
    paginator = ec2.get_paginator("describe_instance_types")
    for chunk in _chunks(list(names_or_patterns)):
        pages = paginator.paginate(Filters=[{"Name": "instance-type", "Values": chunk}],
                                   PaginationConfig={"PageSize": page_size})
        for page in pages:
            found = page.get("InstanceTypes")
            if not isinstance(found, list):
                if found is None and "NextToken" not in page:
                    continue  # an empty answer carries no list
                raise MalformedAnswer("DescribeInstanceTypes answer without InstanceTypes list")
            for item in found:
                if isinstance(item, Mapping) and isinstance(item.get("InstanceType"), str):
                    items[item["InstanceType"]] = dict(item)
                else:
                    raise MalformedAnswer("an InstanceTypes item without InstanceType")
    wanted = list(names_or_patterns)
    return [items[n] for n in sorted(items)
            if any(fnmatch.fnmatchcase(n, p) for p in wanted)]


def describe_spot_price_history(
    ec2: Any, instance_types: Sequence[str], start_time: datetime,
    *, product_description: str = SPOT_PRODUCT_DESCRIPTION, page_size: int = 1000,
) -> list[dict[str, Any]]:
    """Every ``DescribeSpotPriceHistory`` entry of ``instance_types`` since ``start_time``
    (all pages). Raises botocore's exceptions."""
    entries: list[dict[str, Any]] = []
    paginator = ec2.get_paginator("describe_spot_price_history")
    for chunk in _chunks(list(instance_types)):
        pages = paginator.paginate(
            InstanceTypes=chunk, ProductDescriptions=[product_description],
            StartTime=start_time, PaginationConfig={"PageSize": page_size})
        for page in pages:
            found = page.get("SpotPriceHistory", [])
            if not isinstance(found, list):
                raise MalformedAnswer("SpotPriceHistory is not a list")
            entries.extend(dict(e) if isinstance(e, Mapping) else e for e in found)
    return entries


def get_products(
    pricing: Any, instance_type: str, region: str, *, page_size: int = 100
) -> list[str]:
    """The ``PriceList`` JSON strings of Linux, shared-tenancy, on-demand ``instance_type`` in
    ``region`` from ``GetProducts`` (all pages). Raises botocore's exceptions, and
    :class:`MalformedAnswer` when a page has no ``PriceList`` list."""
    filters = [{"Type": "TERM_MATCH", "Field": "instanceType", "Value": instance_type},
               {"Type": "TERM_MATCH", "Field": "regionCode", "Value": region}]
    filters += [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in PRICING_FILTERS.items()]
    paginator = pricing.get_paginator("get_products")
    out: list[str] = []
    for page in paginator.paginate(ServiceCode="AmazonEC2", Filters=filters,
                                   FormatVersion="aws_v1",
                                   PaginationConfig={"PageSize": page_size}):
        found = page.get("PriceList")
        if not isinstance(found, list):
            raise MalformedAnswer("GetProducts answer without a PriceList list")
        out.extend(found)
    return out


def client_config(max_attempts: int, connect_timeout_s: float, read_timeout_s: float) -> Any:
    """The botocore client config: timeouts, seconds, and adaptive retries (``max_attempts``
    requests in all)."""
    from botocore.config import Config

    # "total_max_attempts" counts the first attempt; botocore's "max_attempts" key would count
    # retries only (max_attempts=2 means 3 requests).
    return Config(connect_timeout=connect_timeout_s, read_timeout=read_timeout_s,
                  retries={"mode": "adaptive", "total_max_attempts": max_attempts},
                  user_agent_extra="deepvm-studio")


# ----------------------------------------------------------------------------- Spot Advisor


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
