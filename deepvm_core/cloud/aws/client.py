"""AWS sessions, retries and failures: what every call to AWS shares.

**boto3.** The standard credential chain (environment, shared files, ``profile``, SSO, ...),
explicit connect/read timeouts and adaptive retries (``total_max_attempts`` attempts in all),
and no ``endpoint_url``: boto3's own endpoint settings (``AWS_ENDPOINT_URL_EC2``,
``AWS_ENDPOINT_URL_PRICING``, the config file) keep working. boto3 is imported when a session
is created, never when this module is. Credentials never appear in a catalog, a note, a log
line or an error message: messages are passed through :func:`sanitize_message`.

Every call (:mod:`~deepvm_core.cloud.aws.instance_types`,
:mod:`~deepvm_core.cloud.aws.spot_prices`, :mod:`~deepvm_core.cloud.aws.pricing`) follows all
pages in :func:`chunks` of names and returns plain dicts; it raises botocore's exceptions, or
:class:`MalformedAnswer` for an answer of the wrong shape, which :class:`Caller` turns into a
:class:`~deepvm_core.errors.FetchError` naming the operation and the region.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, TypedDict, Unpack

from deepvm_core.cloud.aws.session import boto3_session
from deepvm_core.errors import FetchError

#: Attempts per request in all (the first one included), adaptive retry mode.
DEFAULT_MAX_ATTEMPTS = 5
DEFAULT_CONNECT_TIMEOUT_S = 5.0
DEFAULT_READ_TIMEOUT_S = 30.0
_CHUNK = 50  # instance types per DescribeInstanceTypes / DescribeSpotPriceHistory request


class MalformedAnswer(ValueError):
    """An AWS answer does not have the shape its reader expects (raised by the parsers)."""



def answer_field(mapping: object, *keys: str) -> Any:
    """The value at ``keys`` in the nested mappings of an answer, or ``None`` where a key is
    missing or a value on the way is not a mapping."""
    value = mapping
    for key in keys:
        if not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    return value


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
    """A boto3 session on the standard credential chain (``profile``: a named profile), as
    :func:`~deepvm_core.cloud.aws.session.boto3_session`.

    Raises:
        FetchError: the profile does not exist or the session cannot be created (kind
            ``credentials``).
    """
    from botocore import exceptions as bx

    try:
        return boto3_session(profile)
    except bx.ProfileNotFound:
        raise FetchError(f"the AWS profile {profile!r} is not in the shared config or "
                         "credentials file. Nothing was written.", kind="credentials") from None
    except bx.BotoCoreError as exc:
        raise FetchError(sanitize_message(f"the AWS session could not be created: {exc}. "
                                          "Nothing was written."),
                         kind="credentials") from None


# ----------------------------------------------------------------------------- calls


def chunks(items: Sequence[str], size: int = _CHUNK) -> Iterator[list[str]]:
    """``items`` in lists of at most ``size`` (the names one request asks for)."""
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


class AwsOptions(TypedDict, total=False):
    """How calls reach AWS, the keyword arguments every fetch takes (:func:`connect`).

    Keys:
        profile: a profile of the shared config (default ``None``: the standard chain).
        max_attempts: attempts per request in all, adaptive retries (default
            :data:`DEFAULT_MAX_ATTEMPTS`; 1: no retry).
        connect_timeout_s, read_timeout_s: socket timeouts, seconds (default
            :data:`DEFAULT_CONNECT_TIMEOUT_S`, :data:`DEFAULT_READ_TIMEOUT_S`).
    """

    profile: str | None
    max_attempts: int
    connect_timeout_s: float
    read_timeout_s: float


@dataclass(frozen=True)
class Connection:
    """What every call of one fetch goes through: the session, the :class:`Caller` that turns
    its failures into :class:`FetchError`, and the client config (timeouts, retries)."""

    session: Any
    caller: Caller
    config: Any

    def client(self, service: str, region: str) -> Any:
        """A boto3 client of ``service`` in ``region`` with this connection's config."""
        return self.session.client(service, region_name=region, config=self.config)


def connect(session: Any = None, **options: Unpack[AwsOptions]) -> Connection:
    """The :class:`Connection` of ``options`` (:class:`AwsOptions`), on ``session`` when given
    (else a new one of ``profile``: :func:`create_session`).

    Raises:
        FetchError: as :func:`create_session`.
    """
    max_attempts = options.get("max_attempts", DEFAULT_MAX_ATTEMPTS)
    session = session if session is not None else create_session(options.get("profile"))
    return Connection(session, Caller(session, max_attempts), client_config(
        max_attempts, options.get("connect_timeout_s", DEFAULT_CONNECT_TIMEOUT_S),
        options.get("read_timeout_s", DEFAULT_READ_TIMEOUT_S)))


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
    "GetObject": "s3:GetObject on the object",
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


def failure_reason(f: AwsFailure, operation: str, max_attempts: int) -> tuple[str, str]:
    """Why a call of ``operation`` failed, in words, and the kind of failure
    (:attr:`FetchError.kind`): the one wording of AWS's failures for the fetches and the
    progress file of ``deepvm watch``."""
    detail, said, attempts = f.detail, f.said, f.attempts
    return {
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


def _translate(exc: BaseException, operation: str, region: str, max_attempts: int,
               secrets: Sequence[str], *, label: str | None = None) -> FetchError:
    """A :class:`FetchError` (one line, credentials redacted) for a failed boto3 call.

    ``operation`` is the AWS operation name (``GetProducts``); ``label`` how the message names
    it (``Pricing GetProducts (pricing endpoint us-east-1)``), by default ``operation``.
    """
    kind, reason = failure_reason(read_aws_failure(exc, secrets), operation, max_attempts)
    message = sanitize_message(f"{label or operation} for region {region} failed: {reason}. "
                               "Nothing was written.", secrets)
    return FetchError(message, operation=operation, region=region, kind=kind)



def client_config(max_attempts: int, connect_timeout_s: float, read_timeout_s: float) -> Any:
    """The botocore client config: timeouts, seconds, and adaptive retries (``max_attempts``
    requests in all)."""
    from botocore.config import Config

    # "total_max_attempts" counts the first attempt; botocore's "max_attempts" key would count
    # retries only (max_attempts=2 means 3 requests).
    return Config(connect_timeout=connect_timeout_s, read_timeout=read_timeout_s,
                  retries={"mode": "adaptive", "total_max_attempts": max_attempts},
                  user_agent_extra="deepvm-studio")

