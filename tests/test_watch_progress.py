"""The progress file of ``deepvm watch`` (issue 28): a local path or ``s3://BUCKET/KEY``, read at
every step; when it gives no word (no such file or object, access denied, a bad line) the reading
says why, naming the path and the value, and the controller falls back to the estimate. S3 is
moto on 127.0.0.1 (``AWS_ENDPOINT_URL_S3``, boto3's own endpoint setting); access denied is a
loopback endpoint that answers every request ``403 AccessDenied``."""

from __future__ import annotations

import http.server
from pathlib import Path

import pytest
from fleet_fakes import SECRETS, FleetEnv
from loopback import LoopbackServer, send

from deepvm_core.cloud.fleet import AwsSettings
from deepvm_core.cloud.fleet.watch_progress import (
    ProgressFile,
    S3ProgressFile,
    check_progress_path,
    open_progress,
    parse_progress,
)
from deepvm_core.errors import DeepVMError

BUCKET = "deepvm-job-progress"
URL = f"s3://{BUCKET}/runs/job-7/progress.txt"


@pytest.fixture(name="s3")
def s3_fixture(fleet_env: FleetEnv) -> FleetEnv:
    """moto (reset, fake credentials, loopback only) as the S3 endpoint, with the bucket."""
    fleet_env.monkeypatch.setenv("AWS_ENDPOINT_URL_S3", fleet_env.moto_url)
    client().create_bucket(Bucket=BUCKET)
    return fleet_env


def client() -> object:
    import boto3

    return boto3.client("s3", region_name="us-east-1")


def put(text: str) -> None:
    client().put_object(Bucket=BUCKET, Key="runs/job-7/progress.txt",  # type: ignore[attr-defined]
                        Body=text.encode())


def test_the_format_by_hand() -> None:
    for text, share in (("1200/3000\n", 0.4), ("0.25", 0.25), ("3000/3000", 1.0),
                        (" 3/4 ", 0.75), ("1.5", 1.0), ("-1", 0.0)):
        assert parse_progress(text) == share, text
    for text, said in (("7/0", "the line '7/0': TOTAL must be > 0"),
                       ("half", "the line 'half' is not DONE/TOTAL or a fraction from 0 to 1"),
                       ("nan", "the line 'nan' is not a finite number")):
        with pytest.raises(ValueError, match=said):
            parse_progress(text)


def test_a_local_file(tmp_path: Path) -> None:
    path = tmp_path / "progress.txt"
    source = open_progress(str(path), region="us-east-1")
    assert type(source) is ProgressFile
    first = source.read()
    assert first.share is None
    assert first.problem == f"--progress {path}: no such file (not written yet)"
    path.write_text("1200/3000\n")
    assert source.read().share == 0.4
    path.write_text("half\n")
    bad = source.read()
    assert bad.share is None
    assert bad.problem == (f"--progress {path}: the line 'half' is not DONE/TOTAL or a "
                           "fraction from 0 to 1")
    path.write_text("")
    assert source.read().problem == f"--progress {path}: the file is empty (no line yet)"


def test_paths_checked_before_any_read() -> None:
    assert check_progress_path(URL) == URL
    assert check_progress_path("/shared/progress.txt") == "/shared/progress.txt"
    for path, said in (("s3://bucket-only", "no object key after the bucket"),
                       ("s3://bucket-only/", "no object key after the bucket"),
                       ("s3:///key", "the bucket '' is not an S3 bucket name"),
                       ("s3://Bad_Bucket/key", "the bucket 'Bad_Bucket' is not an S3 bucket"),
                       ("gs://bucket/key", "the scheme gs:// is not read"),
                       ("https://example.invalid/p.txt", "the scheme https:// is not read")):
        with pytest.raises(DeepVMError, match=f"--progress {path}: {said}"):
            check_progress_path(path)


@pytest.mark.usefixtures("s3")
def test_an_s3_object_is_read_at_every_step() -> None:
    source = open_progress(URL, region="us-east-1", aws=AwsSettings(region="us-east-1"))
    assert isinstance(source, S3ProgressFile)
    assert (source.bucket, source.key) == (BUCKET, "runs/job-7/progress.txt")
    put("1200/3000\n")
    assert source.read().share == 0.4
    put("0.9")  # rewritten by the job at its next checkpoint
    assert source.read().share == 0.9
    put("3000/3000")
    assert source.read().share == 1.0


@pytest.mark.usefixtures("s3")
def test_a_missing_object_or_bucket_is_no_word() -> None:
    missing = open_progress(URL, region="us-east-1").read()
    assert missing.share is None
    assert missing.problem.startswith(
        f"--progress {URL}: GetObject (bucket '{BUCKET}', key 'runs/job-7/progress.txt'): "
        "no such object (not written yet) (NoSuchKey")
    nobucket = open_progress("s3://no-such-bucket-here/p.txt", region="us-east-1").read()
    assert nobucket.share is None
    assert "GetObject (bucket 'no-such-bucket-here', key 'p.txt'): no such bucket " \
           "(NoSuchBucket" in nobucket.problem


@pytest.mark.usefixtures("s3")
def test_a_malformed_line_is_no_word_and_quoted() -> None:
    put("epoch 12 of 30\n")
    reading = open_progress(URL, region="us-east-1").read()
    assert reading.share is None
    assert reading.problem == (f"--progress {URL}: the line 'epoch 12 of 30' is not "
                               "DONE/TOTAL or a fraction from 0 to 1")
    put("")
    assert open_progress(URL, region="us-east-1").read().problem == (
        f"--progress {URL}: the file is empty (no line yet)")


def test_access_denied_is_no_word_and_names_the_permission(fleet_env: FleetEnv) -> None:
    seen: list[str] = []

    def deny(h: http.server.BaseHTTPRequestHandler, _body: bytes) -> None:
        seen.append(f"{h.command} {h.path}")
        send(h, 403, b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>'
                     b"<Message>Access Denied</Message><RequestId>R1</RequestId></Error>",
             "application/xml")

    with LoopbackServer(deny) as server:
        fleet_env.monkeypatch.setenv("AWS_ENDPOINT_URL_S3", server.url)
        reading = open_progress(URL, region="us-east-1").read()
    assert reading.share is None
    assert reading.problem == (
        f"--progress {URL}: GetObject (bucket '{BUCKET}', key 'runs/job-7/progress.txt'): "
        "access denied (AccessDenied: Access Denied); the credentials need the IAM "
        "permission s3:GetObject on the object")
    assert seen
    assert all(s.startswith("GET ") for s in seen)  # a read, nothing else
    for secret in SECRETS:
        assert secret not in reading.problem
