"""EC2 access of the fleet launcher: one boto3 client, retries, errors in one line.

* **Session.** boto3's standard credential chain (environment, shared files, ``--profile``,
  SSO, ...). The region is ``--region``, else the export's catalog region (for ``launch``),
  else the profile's. No ``endpoint_url`` is passed, so boto3's own endpoint settings
  (``AWS_ENDPOINT_URL_EC2``, ``AWS_ENDPOINT_URL``, the config file) keep working.
* **Retries.** botocore retries every call (mode ``standard`` by default, or ``adaptive``;
  ``max_attempts`` attempts in all). When botocore still ends on a throttling error, this
  module waits and tries again itself (``throttle_rounds`` more times, doubling the wait).
  ``CreateFleet`` carries a ``ClientToken``, so repeating it cannot launch twice.
* **Errors.** Every failure becomes an :class:`~deepvm_core.cloud.fleet.errors.AwsCallError` naming
  the operation, the region and the AWS error code. Credentials never appear in a message:
  the session's secrets, access key ids, signatures and session tokens are redacted.

boto3 is imported when a session is opened, never at import time (it is an optional extra).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from deepvm_core.cloud.aws.client import (
    THROTTLING_CODES,
    aws_errors,
    read_aws_failure,
    sanitize_message,
)
from deepvm_core.cloud.aws.session import boto3_session
from deepvm_core.cloud.fleet.errors import AwsCallError, FleetInputError

RETRY_MODES = ("standard", "adaptive")
DEFAULT_MAX_ATTEMPTS = 5
DEFAULT_THROTTLE_ROUNDS = 3
DEFAULT_THROTTLE_BACKOFF_S = 2.0

def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` on one line without credentials
    (:func:`deepvm_core.cloud.aws.client.sanitize_message`:
    the given secrets, access key ids, SigV4 credential scopes and signatures, session tokens,
    passwords in URLs)."""
    return sanitize_message(" ".join(str(text).split()), secrets)


@dataclass(frozen=True)
class AwsSettings:
    """How to reach EC2.

    Attributes:
        region: the region; ``None``: ``default_region`` of :meth:`Ec2.open`, else the
            profile's.
        profile: a profile of the shared config; ``None``: the standard chain.
        max_attempts: botocore attempts per call, the first included.
        retry_mode: botocore's retry mode, ``standard`` or ``adaptive``.
        throttle_rounds: extra rounds of our own after botocore gave up on throttling.
        throttle_backoff_s: first wait of those rounds, seconds (doubled each round).
        connect_timeout_s: connect timeout per attempt, seconds.
        read_timeout_s: read timeout per attempt, seconds.
    """

    region: str | None = None
    profile: str | None = None
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    retry_mode: str = "standard"
    throttle_rounds: int = DEFAULT_THROTTLE_ROUNDS
    throttle_backoff_s: float = DEFAULT_THROTTLE_BACKOFF_S
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 60.0


_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d+$")


def check_region(region: str) -> str:
    """``region`` if it looks like an AWS region (``us-east-1``); else an error."""
    if not _REGION.match(region):
        raise FleetInputError(f"{region!r} is not an AWS region (such as us-east-1)")
    return region


def _snake(operation: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", operation).lower()


def back_off_wait(seconds: float) -> None:
    """Wait ``seconds`` between two throttled calls (``time.sleep``)."""
    time.sleep(seconds)


class Ec2:
    """An EC2 client of one region with retries and one-line, redacted errors.

    Build one with :meth:`open`.
    """

    def __init__(self, client: Any, region: str, *, settings: AwsSettings = AwsSettings(),
                 secrets: Sequence[str] = (),
                 sleep: Callable[[float], None] | None = None) -> None:
        self.client = client
        self.region = region
        self.settings = settings
        self._secrets = tuple(secrets)
        #: How a back-off waits (seconds): :func:`back_off_wait` unless given, looked up when
        #: the client is made (the tests replace it).
        self.sleep = sleep if sleep is not None else back_off_wait

    @classmethod
    def open(cls, settings: AwsSettings, *, default_region: str | None = None,
             sleep: Callable[[float], None] | None = None) -> Ec2:
        """A client for ``settings.region`` (else ``default_region``, else the profile's).

        Raises :class:`FleetInputError` when boto3 is missing, the profile is unknown, no
        region is set or no credentials are found. Nothing is sent to AWS.
        """
        try:
            import boto3  # noqa: F401 - only to say "not installed" before anything else
            from botocore import exceptions as bx
            from botocore.config import Config
        except ImportError:
            raise FleetInputError("boto3 is not installed: pip install 'deepvm-studio[aws]'"
                                  ) from None
        if settings.retry_mode not in RETRY_MODES:
            raise FleetInputError(f"retry mode {settings.retry_mode!r} is not one of "
                                  f"{', '.join(RETRY_MODES)}")
        if settings.max_attempts < 1:
            raise FleetInputError(f"max attempts = {settings.max_attempts} must be >= 1")
        region = settings.region or default_region
        try:
            session = boto3_session(settings.profile, region)
        except bx.ProfileNotFound:
            raise FleetInputError(f"the AWS profile {settings.profile!r} is not in the shared "
                                  "config or credentials file") from None
        except bx.BotoCoreError as exc:
            raise FleetInputError(redact(f"the AWS session could not be created: {exc}")
                                  ) from None
        region = region or session.region_name
        if not region:
            raise FleetInputError("no AWS region: give --region (or set one in the profile or "
                                  "AWS_DEFAULT_REGION)")
        check_region(region)
        try:
            credentials = session.get_credentials()
            frozen = credentials.get_frozen_credentials() if credentials is not None else None
        except bx.BotoCoreError as exc:
            raise FleetInputError(redact(f"AWS credentials could not be loaded: {exc}")
                                  ) from None
        if frozen is None or not frozen.access_key:
            raise FleetInputError(
                "no AWS credentials found (looked in the environment, the shared config and "
                "credentials files, SSO and instance metadata): set AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY, pass --profile, or run 'aws sso login'")
        secrets = tuple(s for s in (frozen.access_key, frozen.secret_key, frozen.token) if s)
        config = Config(
            region_name=region,
            connect_timeout=settings.connect_timeout_s,
            read_timeout=settings.read_timeout_s,
            retries={"mode": settings.retry_mode, "total_max_attempts": settings.max_attempts},
            user_agent_extra="deepvm-studio")
        try:
            client = session.client("ec2", region_name=region, config=config)
        except bx.BotoCoreError as exc:
            raise FleetInputError(redact(f"the EC2 client could not be created: {exc}",
                                         secrets)) from None
        return cls(client, region, settings=settings, secrets=secrets, sleep=sleep)

    # ------------------------------------------------------------------------ calls

    def call(self, operation: str, **params: Any) -> dict[str, Any]:
        """Run one EC2 operation (``CreateFleet``) and return its answer.

        Throttling that outlasts botocore's retries is retried here
        (``settings.throttle_rounds`` times); every failure becomes an
        :class:`AwsCallError`.
        """
        method = getattr(self.client, _snake(operation))
        wait = self.settings.throttle_backoff_s
        errors = aws_errors()
        round_ = 0
        while True:
            try:
                return dict(method(**params))
            except errors as exc:
                error = self.translate(exc, operation)
                if error.code not in THROTTLING_CODES or round_ >= self.settings.throttle_rounds:
                    raise error from None
            round_ += 1
            self.sleep(wait)
            wait *= 2

    def dry_run(self, operation: str, **params: Any) -> None:
        """Run ``operation`` with ``DryRun=True``: returns when AWS answers
        ``DryRunOperation`` (the call would succeed); raises :class:`AwsCallError` otherwise."""
        try:
            self.call(operation, DryRun=True, **params)
        except AwsCallError as exc:
            if exc.code == "DryRunOperation":
                return
            raise
        raise AwsCallError(f"{operation} in {self.region} with DryRun launched instead of "
                           "answering DryRunOperation", operation=operation,
                           code="UnexpectedAnswer")

    def pages(self, operation: str, key: str, **params: Any) -> Iterator[Any]:
        """Every item under ``key`` of every page of ``operation`` (``NextToken``)."""
        token: str | None = None
        while True:
            answer = self.call(operation, **params, **({"NextToken": token} if token else {}))
            yield from answer.get(key) or []
            token = answer.get("NextToken")
            if not token:
                return

    def translate(self, exc: BaseException, operation: str) -> AwsCallError:
        """An :class:`AwsCallError` for a failed boto3 call (one line, no credentials; what
        the call was: :func:`~deepvm_core.cloud.aws.client.read_aws_failure`)."""
        f = read_aws_failure(exc, self._secrets)
        where = f"{operation} in {self.region}"
        if f.answered:
            tries = f" after {f.attempts} attempts" if f.attempts > 1 else ""
            text = f"{where} failed{tries}: {f.code}" + (f": {f.message}" if f.message else "")
        elif f.cause == "no_credentials":
            text = (f"{where} failed: no AWS credentials found; set AWS_ACCESS_KEY_ID and "
                    "AWS_SECRET_ACCESS_KEY, pass --profile, or run 'aws sso login'")
        elif f.cause == "unreachable":
            text = f"{where} failed: the EC2 endpoint could not be reached: {f.detail}"
        elif f.cause == "timeout":
            text = f"{where} failed: no answer in time: {f.detail}"
        else:
            text = f"{where} failed: {f.code}: {f.detail}"
        return AwsCallError(redact(text, self._secrets), operation=operation, code=f.code)

    def redact(self, text: str) -> str:
        """``text`` without this session's credentials."""
        return redact(text, self._secrets)
