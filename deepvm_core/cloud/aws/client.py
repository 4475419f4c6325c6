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
from typing import Any, NoReturn

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


_THROTTLING = {"Throttling", "ThrottlingException", "ThrottledException", "RequestLimitExceeded",
               "TooManyRequestsException", "RequestThrottled", "RequestThrottledException",
               "SlowDown", "PriorRequestNotComplete", "EC2ThrottledException",
               "BandwidthLimitExceeded", "ProvisionedThroughputExceededException",
               "LimitExceededException"}
_DENIED = {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "Blocked",
           "UnauthorizedException", "NotAuthorized", "Forbidden"}
_REJECTED_CREDENTIALS = {"AuthFailure", "InvalidClientTokenId", "UnrecognizedClientException",
                         "SignatureDoesNotMatch", "IncompleteSignature", "ExpiredToken",
                         "ExpiredTokenException", "RequestExpired", "InvalidAccessKeyId",
                         "MissingAuthenticationToken", "InvalidSignatureException"}
_REGION_NOT_ENABLED = {"OptInRequired", "InvalidRegion", "UnsupportedOperation"}
_DETAIL_CHARS = 300  # longest piece of an AWS message quoted in an error

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


def _translate(exc: BaseException, operation: str, region: str, max_attempts: int,
               secrets: Sequence[str], *, label: str | None = None) -> FetchError:
    """A :class:`FetchError` (one line, credentials redacted) for a failed boto3 call.

    ``operation`` is the AWS operation name (``GetProducts``); ``label`` how the message names
    it (``Pricing GetProducts (pricing endpoint us-east-1)``), by default ``operation``.
    """
    from botocore import exceptions as bx
    from botocore.parsers import ResponseParserError

    where = f"{label or operation} for region {region}"
    # Redact before shortening, so that no part of a secret survives a cut.
    detail = sanitize_message(" ".join(str(exc).split()), secrets)
    if len(detail) > _DETAIL_CHARS:
        detail = detail[:_DETAIL_CHARS] + "..."
    kind = "other"
    if isinstance(exc, bx.NoCredentialsError):
        kind = "credentials"
        reason = ("no AWS credentials found (looked in the environment, the shared config and "
                  "credentials files, SSO and instance metadata): set AWS_ACCESS_KEY_ID and "
                  "AWS_SECRET_ACCESS_KEY, pass a profile, or run 'aws sso login'")
    elif isinstance(exc, (bx.PartialCredentialsError, bx.ProfileNotFound, bx.SSOError,
                          bx.TokenRetrievalError, bx.CredentialRetrievalError,
                          bx.InvalidConfigError)):
        kind = "credentials"
        reason = f"AWS credentials could not be loaded: {detail}"
    elif isinstance(exc, (bx.ConnectTimeoutError, bx.EndpointConnectionError,
                          bx.ProxyConnectionError, bx.SSLError)):
        kind = "unreachable"
        reason = f"the endpoint could not be reached after {max_attempts} attempt(s): {detail}"
    elif isinstance(exc, bx.ReadTimeoutError):
        kind = "timeout"
        reason = f"no answer in time after {max_attempts} attempt(s): {detail}"
    elif isinstance(exc, bx.ClientError):
        error = exc.response.get("Error", {}) if isinstance(exc.response, Mapping) else {}
        code = str(error.get("Code") or "Unknown")
        message = sanitize_message(" ".join(str(error.get("Message") or "").split()), secrets)
        meta = exc.response.get("ResponseMetadata", {}) if isinstance(exc.response,
                                                                      Mapping) else {}
        status = meta.get("HTTPStatusCode")
        attempts = int(meta.get("RetryAttempts") or 0) + 1
        if len(message) > _DETAIL_CHARS:
            message = message[:_DETAIL_CHARS] + "..."
        said = f" ({code}: {message})" if message else f" ({code})"
        if code in _THROTTLING or status == 429:
            kind = "throttled"
            reason = (f"throttled by AWS after {attempts} attempt(s){said}; try again later "
                      "or with fewer instance types")
        elif code in _REJECTED_CREDENTIALS:
            kind = "credentials"
            reason = (f"AWS rejected the credentials{said}; check them, or refresh them "
                      "('aws sso login' for SSO)")
        elif code in _REGION_NOT_ENABLED:
            kind = "access_denied"
            reason = f"the region is not enabled or not supported for this account{said}"
        elif code in _DENIED or status == 403:
            kind = "access_denied"
            action = _IAM_ACTIONS.get(operation, operation)
            reason = f"access denied{said}; the credentials need the IAM permission {action}"
        elif isinstance(status, int) and status >= 500:
            kind = "server_error"
            reason = f"AWS answered HTTP {status} after {attempts} attempt(s){said}"
        else:
            reason = f"AWS refused the request (HTTP {status}){said}"
    elif isinstance(exc, (ResponseParserError, MalformedAnswer)):
        kind = "malformed"
        reason = f"malformed answer: {detail}"
    elif isinstance(exc, bx.BotoCoreError):
        reason = detail
    else:
        reason = f"{type(exc).__name__}: {detail}"
    message = sanitize_message(f"{where} failed: {reason}. Nothing was written.", secrets)
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

