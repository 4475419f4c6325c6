"""Interruption buckets from the AWS Spot Instance Advisor (issue 8, catalog side): the pure
parser, the assembly, and ``deepvm fetch --spot-advisor`` against a loopback server that serves
the excerpt (``spot_advisor_fake.FakeSpotAdvisor``) or is down. No test reaches AWS. The
catalog field itself is tested in ``test_catalog.py``."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import aws_fakes
import pytest
import spot_advisor_fake
from aws_fakes import AwsEnv
from loopback import closed_port_url
from spot_advisor_fake import FakeSpotAdvisor

from deepvm_core.catalog.store import load_catalog
from deepvm_core.cli.fetch import main
from deepvm_core.cloud import aws
from deepvm_core.cloud.aws import assemble, client, instance_types
from deepvm_core.cloud.aws import spot_advisor as advisor
from deepvm_core.errors import FetchError
from tests.conftest import SPOT_ADVISOR_EXCERPT

moto_url = aws_fakes.moto_url
fake_aws = aws_fakes.fake_aws
aws_env = aws_fakes.aws_env
fake_spot_advisor = spot_advisor_fake.fake_spot_advisor
spot_advisor = spot_advisor_fake.spot_advisor


def excerpt() -> dict:
    return json.loads(SPOT_ADVISOR_EXCERPT.read_text())


# ----------------------------------------------------------------------------- parser


def test_parse_spot_advisor_reads_linux_buckets_per_region():
    buckets = advisor.parse_spot_advisor(excerpt())
    assert sorted(buckets) == ["ap-northeast-1", "eu-central-1", "eu-west-1", "us-east-1",
                               "us-west-2"]
    assert buckets["us-east-1"]["g4dn.xlarge"] == 3
    assert buckets["eu-west-1"]["g4dn.xlarge"] == 1
    assert "g3s.xlarge" not in buckets["us-east-1"]
    assert all(0 <= b <= 4 for region in buckets.values() for b in region.values())


def _with(region_types: object = None, **top: object) -> dict:
    data = {"ranges": excerpt()["ranges"],
            "spot_advisor": {"us-east-1": {"Linux": region_types if region_types is not None
                                           else {"g4dn.xlarge": {"r": 3, "s": 64}}}}}
    data.update(top)
    return data


def test_parse_spot_advisor_without_linux_or_ranges():
    data = _with()
    data["spot_advisor"]["eu-west-1"] = {"Windows": {"g4dn.xlarge": {"r": 1}}}
    del data["ranges"]
    assert advisor.parse_spot_advisor(data) == {"us-east-1": {"g4dn.xlarge": 3}, "eu-west-1": {}}


@pytest.mark.parametrize("data", [
    [], {"ranges": []}, {"spot_advisor": []},
    _with({"g4dn.xlarge": {"r": 5}}), _with({"g4dn.xlarge": {"r": "3"}}),
    _with({"g4dn.xlarge": {"r": True}}), _with({"g4dn.xlarge": {"s": 60}}),
    _with({"g4dn.xlarge": 3}), _with([]),
    _with(ranges=[{"index": 0, "label": "<1%"}]),
], ids=["list", "no-spot-advisor", "spot-advisor-list", "bucket-5", "bucket-text",
        "bucket-bool", "no-bucket", "entry-not-object", "linux-not-object", "ranges-changed"])
def test_parse_spot_advisor_rejects_other_shapes(data):
    with pytest.raises(client.MalformedAnswer):
        advisor.parse_spot_advisor(data)


# ----------------------------------------------------------------------------- assembly


def _spec(name: str, gpu: bool = True) -> instance_types.InstanceSpec:
    return instance_types.InstanceSpec(name=name, family=instance_types.quota_family(name), vcpus=4,
                              memory_gib=16.0, network_gbps=10.0, network_text="10 Gigabit",
                              gpu_model="NVIDIA T4" if gpu else None, gpu_count=int(gpu))


def _assemble(**kwargs: object) -> tuple[dict, tuple[str, ...]]:
    names = ("g4dn.xlarge", "g9.xlarge")
    return assemble.assemble_catalog_dict(
        region=kwargs.pop("region", "us-east-1"), specs=[_spec(n) for n in names],
        spot_by_type={n: {"z": 0.2} for n in names}, on_demand_by_type={n: 1.0 for n in names},
        base=None, fetched_at=datetime(2026, 1, 1, tzinfo=UTC), **kwargs)


def test_assembly_sets_buckets_and_names_the_types_without_one():
    data, notes = _assemble(spot_advisor=advisor.parse_spot_advisor(excerpt()),
                            spot_advisor_source="http://127.0.0.1/x, read at 2026-01-01")
    assert [r["interruption_bucket"] for r in data["gpu_types"]] == [3, None]
    assert any("no Spot Instance Advisor interruption bucket" in n and n.endswith("g9.xlarge")
               for n in notes)
    assert "Spot Instance Advisor (http://127.0.0.1/x, read at 2026-01-01; Linux)" in (
        data["source"])
    data, notes = _assemble(region="sa-east-1", spot_advisor={"us-east-1": {}})
    assert [r["interruption_bucket"] for r in data["gpu_types"]] == [None, None]
    assert any("no data for sa-east-1" in n for n in notes)


def test_assembly_without_the_advisor_leaves_buckets_empty():
    data, notes = _assemble()
    assert all("interruption_bucket" not in r for r in data["gpu_types"])
    assert "Interruption buckets: not read" in data["source"]
    assert not any("interruption" in n for n in notes)


# ----------------------------------------------------------------------------- reading the file


def test_the_url_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("DEEPVM_SPOT_ADVISOR_URL", "http://127.0.0.1:1/mine.json")
    assert advisor.spot_advisor_url() == "http://127.0.0.1:1/mine.json"
    monkeypatch.delenv("DEEPVM_SPOT_ADVISOR_URL")
    assert advisor.spot_advisor_url() == advisor.DEFAULT_SPOT_ADVISOR_URL
    assert advisor.DEFAULT_SPOT_ADVISOR_URL.startswith("https://")


def test_read_spot_advisor_from_a_loopback_server(spot_advisor: FakeSpotAdvisor):
    assert aws.read_spot_advisor() == advisor.parse_spot_advisor(excerpt())
    assert spot_advisor.requests == ["/spot-advisor-data.json"]


def test_a_server_error_is_retried(spot_advisor: FakeSpotAdvisor):
    spot_advisor.fail(503, times=1)
    assert aws.read_spot_advisor(max_attempts=2)["us-east-1"]["g5.xlarge"] == 4
    assert len(spot_advisor.requests) == 2


@pytest.mark.parametrize(("status", "kind", "requests"), [
    (500, "server_error", 3), (429, "throttled", 3), (404, "other", 1), (403, "access_denied", 1),
])
def test_http_errors(spot_advisor: FakeSpotAdvisor, status, kind, requests):
    spot_advisor.fail(status)
    with pytest.raises(FetchError) as caught:
        aws.read_spot_advisor(max_attempts=3)
    error = caught.value
    assert (error.kind, error.operation) == (kind, advisor.SPOT_ADVISOR_OPERATION)
    assert f"HTTP {status}" in str(error)
    assert spot_advisor.url in str(error)
    assert len(spot_advisor.requests) == requests


@pytest.mark.parametrize(("body", "words"), [
    (b"<html>maintenance</html>", "not JSON"), (b'{"spot_advisor": []}', "malformed"),
    (b"\xff\xfe", "not JSON"),
])
def test_a_malformed_answer(spot_advisor: FakeSpotAdvisor, body, words):
    spot_advisor.body = body
    with pytest.raises(FetchError) as caught:
        aws.read_spot_advisor(max_attempts=1)
    assert caught.value.kind == "malformed"
    assert words in str(caught.value)


def test_a_server_that_is_down():
    url = closed_port_url() + "/spot-advisor-data.json"
    slept: list[float] = []
    with pytest.raises(FetchError) as caught:
        advisor.get_spot_advisor(url, max_attempts=3, timeout_s=2, sleep=slept.append)
    assert caught.value.kind == "unreachable"
    assert "could not be reached after 3 attempt(s)" in str(caught.value)
    assert slept == [0.25, 0.5]


def test_credentials_in_the_url_are_redacted(spot_advisor: FakeSpotAdvisor):
    url = spot_advisor.url.replace("http://", "http://user:s3cret-pass@")
    spot_advisor.fail(500)
    with pytest.raises(FetchError) as caught:
        aws.read_spot_advisor(url, max_attempts=1)
    assert "s3cret-pass" not in str(caught.value)


# ----------------------------------------------------------------------------- deepvm fetch


def test_fetch_with_spot_advisor_fills_the_buckets(aws_env: AwsEnv,
                                                   spot_advisor: FakeSpotAdvisor, capsys):
    assert main(["--region", "us-east-1", "--region", "eu-west-1", "--max-attempts", "1",
                 "--spot-advisor"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert ("interruption buckets (Spot Instance Advisor): g4dn.xlarge 3 (15-20%), "
            "g5.xlarge 4 (>20%)") in captured.out
    written = {load_catalog(p).region: load_catalog(p)
               for p in aws_env.fetched_dir.glob("aws-*-2*.json")}
    assert {g.name: g.interruption_bucket for g in written["us-east-1"].gpu_types} == {
        "g4dn.xlarge": 3, "g5.xlarge": 4}
    assert {g.name: g.interruption_bucket for g in written["eu-west-1"].gpu_types} == {
        "g4dn.xlarge": 1, "g5.xlarge": 2}
    assert spot_advisor.url in written["us-east-1"].source
    assert len(spot_advisor.requests) == 1  # one file for every region


@pytest.mark.usefixtures("aws_env")
def test_fetch_result_names_the_advisor(spot_advisor: FakeSpotAdvisor):
    calls: list[tuple[str, int, int]] = []
    result = aws.fetch_catalogs("us-east-1", max_attempts=1, spot_advisor=True,
                                progress=lambda *a: calls.append(a))
    assert result.spot_advisor_url == spot_advisor.url
    assert calls[0] == ("interruption buckets (Spot Instance Advisor)", 0, 5)
    assert calls[-1] == ("done", 5, 5)
    plain = aws.fetch_catalogs("us-east-1", max_attempts=1, write=False)
    assert plain.spot_advisor_url is None
    assert all(g.interruption_bucket is None for g in plain.catalog.gpu_types)
    assert "not read" in plain.catalog.source


@pytest.mark.usefixtures("spot_advisor")
def test_fetch_with_the_advisor_down_exits_2_and_writes_nothing(aws_env: AwsEnv, capsys):
    aws_env.monkeypatch.setenv("DEEPVM_SPOT_ADVISOR_URL",
                               closed_port_url() + "/spot-advisor-data.json")
    before = aws_env.snapshot()
    assert main(["--region", "us-east-1", "--max-attempts", "2", "--spot-advisor"]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert captured.out == ""
    assert len(lines) == 1
    assert lines[0].startswith("deepvm fetch: error: reading the AWS Spot Instance Advisor data "
                               "from http://127.0.0.1:")
    assert "could not be reached after 2 attempt(s)" in lines[0]
    assert lines[0].endswith("Nothing was written.")
    assert aws_env.snapshot() == before
    assert aws_env.fake.requests == []  # the advisor is read first: no AWS call was made
