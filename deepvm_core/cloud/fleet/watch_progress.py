"""The progress file of a watched job (``deepvm watch --progress``, issue 28): where the job says
how much of its work is checkpointed, read by the controller at every step.

**Format.** One line, rewritten by the job at each checkpoint: ``DONE/TOTAL`` (epochs or steps
checkpointed, of the job's total: ``1200/3000``) or a fraction from 0 to 1 (``0.4``); a share
above 1 counts as 1. Only the first line is read.

**Where.** A local path, or an S3 object ``s3://BUCKET/KEY`` read with ``GetObject`` through the
project's AWS session helpers (:func:`deepvm_core.cloud.aws.client.connect`: the standard
credential chain and ``--profile``, the attempts and timeouts of the EC2 calls, the watch's
region; boto3's own endpoint settings such as ``AWS_ENDPOINT_URL_S3`` keep working).

**No word.** A file or object that does not exist (yet), that cannot be read (access denied, an
endpoint that does not answer) or whose line is not in the format is no word from the job: the
reading says why (:attr:`ProgressReading.problem`, naming the path and the value), and the
controller falls back to the job model's estimate from the time the workers ran, and says so.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deepvm_core.cloud.aws.client import (
    DETAIL_CHARS,
    aws_errors,
    connect,
    failure_reason,
    read_aws_failure,
    sanitize_message,
)
from deepvm_core.cloud.fleet.ec2 import AwsSettings
from deepvm_core.errors import DeepVMError, FetchError

#: The scheme of a progress file in S3.
S3_SCHEME = "s3://"
#: The most bytes read of a progress file (its first line is all that counts).
MAX_PROGRESS_BYTES = 4096
#: What the controller does without a word from the job, for a sentence.
ESTIMATE_FALLBACK = "the work done is estimated from the time the workers ran"

_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]$")


@dataclass(frozen=True)
class ProgressReading:
    """One reading of the progress file: ``share`` of the job done (0 to 1), or ``None`` with
    the reason in ``problem`` (one line, naming the path and the value)."""

    share: float | None
    problem: str = ""


def parse_progress(text: str) -> float:
    """The share (0 to 1) of a progress line (module docstring).

    Raises:
        ValueError: the line is not ``DONE/TOTAL`` with TOTAL > 0 or a number, or not finite
            (the message quotes the line).
    """
    line = text.strip()
    quoted = repr(line[:60] + ("..." if len(line) > 60 else ""))
    try:
        if "/" in line:
            done, total = (float(x) for x in line.split("/", 1))
            if not total > 0:
                raise ValueError(f"the line {quoted}: TOTAL must be > 0")
            share = done / total
        else:
            share = float(line)
    except ValueError as exc:
        if str(exc).startswith("the line"):
            raise
        raise ValueError(f"the line {quoted} is not DONE/TOTAL or a fraction from 0 to "
                         "1") from None
    if not math.isfinite(share):
        raise ValueError(f"the line {quoted} is not a finite number")
    return min(max(share, 0.0), 1.0)


def _first_line(data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("the file is not UTF-8 text") from None
    lines = text.strip().splitlines()
    if not lines:
        raise ValueError("the file is empty (no line yet)")
    return lines[0]


def _reading(path: str, data: bytes) -> ProgressReading:
    try:
        return ProgressReading(parse_progress(_first_line(data)))
    except ValueError as exc:
        return ProgressReading(None, f"--progress {path}: {exc}")


def split_s3_url(path: str) -> tuple[str, str]:
    """``(bucket, key)`` of ``s3://BUCKET/KEY``.

    Raises:
        DeepVMError: no bucket, a bucket name S3 does not allow, or no key.
    """
    rest = path[len(S3_SCHEME):]
    bucket, _, key = rest.partition("/")
    if not bucket or not _BUCKET.match(bucket):
        raise DeepVMError(f"--progress {path}: the bucket {bucket!r} is not an S3 bucket name "
                          "(3 to 63 lower-case letters, digits, dots and hyphens)")
    if not key or key.endswith("/"):
        raise DeepVMError(f"--progress {path}: no object key after the bucket (give "
                          "s3://BUCKET/KEY, the object the job writes)")
    return bucket, key


def check_progress_path(path: str) -> str:
    """``path`` if the controller can read it: a local path or ``s3://BUCKET/KEY``.

    Raises:
        DeepVMError: another scheme (``gs://``, ``https://``), or a bad S3 URL.
    """
    if path.startswith(S3_SCHEME):
        split_s3_url(path)
        return path
    if "://" in path:
        scheme = path.split("://", 1)[0]
        raise DeepVMError(f"--progress {path}: the scheme {scheme}:// is not read (give a "
                          "local path or s3://BUCKET/KEY)")
    if not path.strip():
        raise DeepVMError("--progress '': give a local path or s3://BUCKET/KEY")
    return path


class ProgressFile:
    """A progress file at a local ``path`` (:func:`open_progress` makes the right kind)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def read(self) -> ProgressReading:
        """The job's word now (module docstring)."""
        try:
            with Path(self.path).open("rb") as f:
                data = f.read(MAX_PROGRESS_BYTES)
        except FileNotFoundError:
            return ProgressReading(None, f"--progress {self.path}: no such file (not written "
                                         "yet)")
        except OSError as exc:
            return ProgressReading(None, f"--progress {self.path}: cannot be read "
                                         f"({exc.strerror or type(exc).__name__})")
        return _reading(self.path, data)


class S3ProgressFile(ProgressFile):
    """A progress file in S3 (``url``: ``s3://BUCKET/KEY``), read with ``GetObject`` in
    ``region`` with the session settings of ``aws`` (module docstring); the client is made at
    the first read.

    Raises:
        DeepVMError: a bad S3 URL (:func:`split_s3_url`).
    """

    def __init__(self, url: str, region: str, aws: AwsSettings | None = None) -> None:
        super().__init__(url)
        self.url = url
        self.region = region
        self.aws = aws or AwsSettings()
        self.bucket, self.key = split_s3_url(url)
        self._client: Any = None
        self._secrets: tuple[str, ...] = ()

    def _connect(self) -> Any:
        if self._client is None:
            a = self.aws
            conn = connect(profile=a.profile, max_attempts=a.max_attempts,
                           connect_timeout_s=a.connect_timeout_s,
                           read_timeout_s=a.read_timeout_s)
            self._secrets = conn.caller.secrets()
            self._client = conn.client("s3", self.region)
        return self._client

    def read(self) -> ProgressReading:
        """The job's word now: the object's first line (module docstring)."""
        try:
            client = self._connect()
            answer = client.get_object(Bucket=self.bucket, Key=self.key)
            data = answer["Body"].read(MAX_PROGRESS_BYTES)
        except FetchError as exc:  # the session could not be made (profile, credentials)
            return ProgressReading(None, f"--progress {self.url}: {exc}")
        except aws_errors() as exc:
            return ProgressReading(None, self._problem(exc))
        return _reading(self.url, bytes(data))

    def _problem(self, exc: BaseException) -> str:
        f = read_aws_failure(exc, self._secrets)
        where = f"--progress {self.url}: GetObject (bucket {self.bucket!r}, key {self.key!r})"
        if f.code in ("NoSuchKey", "404", "NotFound"):
            text = f"{where}: no such object (not written yet){f.said}"
        elif f.code == "NoSuchBucket":
            text = f"{where}: no such bucket{f.said}"
        else:  # AWS's other failures, in the fetches' words
            text = f"{where}: {failure_reason(f, 'GetObject', self.aws.max_attempts)[1]}"
        return sanitize_message(" ".join(text.split()), self._secrets)[:DETAIL_CHARS * 2]


def open_progress(path: str, *, region: str, aws: AwsSettings | None = None) -> ProgressFile:
    """The progress file at ``path`` (checked: :func:`check_progress_path`); an S3 object is
    read in ``region`` with the session settings ``aws``. Nothing is read yet."""
    check_progress_path(path)
    if path.startswith(S3_SCHEME):
        return S3ProgressFile(path, region, aws)
    return ProgressFile(path)
