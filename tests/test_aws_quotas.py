"""The account's own quotas (issue 24, part 4): ``deepvm fetch --quotas`` and ``deepvm catalog
quotas`` read EC2's vCPU quotas from the Service Quotas API (a loopback fake,
``service_quotas_fake``; moto's mock has no ListServiceQuotas) and map AWS's quota groups to
the catalog's families. Expected rows are written by hand from the fake's table.
"""

from __future__ import annotations

import json

import aws_fakes
import pytest
import service_quotas_fake
from aws_fakes import FAKE_ACCESS_KEY_ID, FAKE_SECRET_ACCESS_KEY, FAKE_SESSION_TOKEN, AwsEnv
from service_quotas_fake import ACCOUNT_QUOTAS, FakeServiceQuotas, quota

from deepvm_core.catalog.store import load_catalog
from deepvm_core.cli import main
from deepvm_core.cli.fetch import main as fetch_main
from deepvm_core.cloud.aws.client import MalformedAnswer
from deepvm_core.cloud.aws.quota_groups import (
    QUOTA_GROUPS,
    GroupValues,
    account_quotas,
    group_values,
)
from deepvm_core.cloud.aws.quotas import catalog_with_account_quotas
from deepvm_core.errors import FetchError
from deepvm_core.model import Scenario
from deepvm_core.recommend.recommendation import recommend

# The loopback servers (module scope) and the per-test environment; ``service_quotas`` is the
# Service Quotas fake on top of ``aws_env``.
moto_url = aws_fakes.moto_url
fake_aws = aws_fakes.fake_aws
aws_env = aws_fakes.aws_env
fake_service_quotas = service_quotas_fake.fake_service_quotas
service_quotas = service_quotas_fake.service_quotas

TODAY = "aws-us-east-1-2025-h1"
STANDARD = (640, 512)  # the fake account's Standard group, on demand / spot vCPUs
#: The fake account's rows for aws-us-east-1-2025-h1's families (its rows G, C, D, M, T, R, P,
#: Trn): Standard 640 / 512 for C, D, M, T, R; G and VT 64 / 96; P 96 / 192; Trn 8 / 0.
TODAY_ACCOUNT_ROWS = {"G": (64, 96), "C": STANDARD, "D": STANDARD, "M": STANDARD,
                      "T": STANDARD, "R": STANDARD, "P": (96, 192), "Trn": (8, 0)}
SECRETS = (FAKE_ACCESS_KEY_ID, FAKE_SECRET_ACCESS_KEY, FAKE_SESSION_TOKEN)


def _rows(catalog) -> dict[str, tuple[int, int]]:
    return {q.family: (q.on_demand_vcpus, q.spot_vcpus) for q in catalog.quotas}


# ----------------------------------------------------------------------------- pure mapping


def test_groups_are_matched_by_name_or_code():
    values = group_values(ACCOUNT_QUOTAS)
    # "All Standard (A C D H I M R T Z) Spot ..." (no commas) matches by name
    assert values["Standard"] == GroupValues(640, 512)
    assert values["G and VT"] == GroupValues(64, 96)
    assert values["P"] == GroupValues(96, 192)
    # the fake's Trn spot code is not ours: the name matches
    assert values["Trn"] == GroupValues(8, 0)
    assert values["F"] == GroupValues(0, None)  # no spot quota answered
    assert "DL" not in values
    assert "HPC" not in values
    # a renamed quota still matches by its code
    renamed = group_values([quota("L-417A185B", "Running On-Demand P-family instances", 48.0)])
    assert renamed["P"] == GroupValues(48, None)


def test_the_older_split_p_spot_quota_gives_the_smaller():
    values = group_values([quota("L-417A185B", "Running On-Demand P instances", 96.0),
                           quota("L-7212CCBC", "All P4, P3 and P2 Spot Instance Requests", 64.0),
                           quota("L-C4BD4855", "All P5 Spot Instance Requests", 192.0)])
    assert (values["P"].on_demand_vcpus, values["P"].spot_vcpus) == (96, 64)
    assert "smallest" in values["P"].notes[0]


@pytest.mark.parametrize("value", [-1.0, float("nan"), "12", None, True])
def test_a_matched_quota_must_be_a_number_of_vcpus(value):
    item = quota("L-417A185B", "Running On-Demand P instances", 0.0)
    item["Value"] = value
    with pytest.raises(MalformedAnswer):
        group_values([item])


def test_fractions_round_down():
    assert group_values([quota("L-417A185B", "Running On-Demand P instances", 95.9)])[
        "P"].on_demand_vcpus == 95


def test_every_family_of_a_group_gets_the_groups_value():
    catalog = load_catalog(TODAY)
    rows, notes = account_quotas(catalog, group_values(ACCOUNT_QUOTAS))
    assert {q.family: (q.on_demand_vcpus, q.spot_vcpus) for q in rows} == TODAY_ACCOUNT_ROWS
    assert any(n.startswith("Standard group (640 on-demand / 512 spot vCPUs) -> family C, D, "
                            "M, T, R (each gets") for n in notes), notes
    # every group has its own families, none shared
    families = [f for g in QUOTA_GROUPS for f in g.families]
    assert len(families) == len(set(families))


def test_families_outside_every_group_keep_their_row_or_stay_unlimited():
    catalog = load_catalog("paper-simulated")  # GPU types A..J are family G; CPU C, D, M, T
    rows, _ = account_quotas(catalog, {"P": GroupValues(96, 192)})
    assert {q.family: (q.on_demand_vcpus, q.spot_vcpus) for q in rows} == _rows(catalog)
    half, notes = account_quotas(catalog, {"G and VT": GroupValues(64, None)})
    assert {q.family: (q.on_demand_vcpus, q.spot_vcpus) for q in half}["G"] == (64, 128)
    assert any("only one of the on-demand and spot" in n for n in notes)


# ----------------------------------------------------------------------------- catalog quotas


def test_catalog_quotas_reads_every_page_and_writes_a_new_catalog(
        service_quotas: FakeServiceQuotas, tmp_path):
    catalog, path, notes = catalog_with_account_quotas(TODAY, out=tmp_path, max_attempts=1)
    assert _rows(catalog) == TODAY_ACCOUNT_ROWS
    assert catalog.name.startswith(f"{TODAY}-quotas-")
    assert path is not None
    assert path.parent == tmp_path
    assert _rows(load_catalog(path)) == TODAY_ACCOUNT_ROWS
    assert "read from the Service Quotas API (ListServiceQuotas, service ec2) in us-east-1" in (
        catalog.source)
    # 14 quotas, 4 a page: 4 pages, all signed for us-east-1; no default was needed
    assert service_quotas.requests == [("ListServiceQuotas", "us-east-1")] * 4
    assert notes[0].startswith("quotas: this account's own")
    assert load_catalog(TODAY).quotas != catalog.quotas  # the bundled one is unchanged
    # the prices and types are the input's
    assert catalog.gpu_types == load_catalog(TODAY).gpu_types


@pytest.mark.usefixtures("service_quotas")
def test_account_quotas_bound_the_recommendation(tmp_path):
    """P on demand 96, spot 192 vCPUs: p3.2xlarge (8 vCPUs) at most 24 spot VMs; the anchor of
    a p5en.48xlarge (192 vCPUs) would need 192 on-demand vCPUs: no Single Anchor p5en."""
    catalog, _, _ = catalog_with_account_quotas(TODAY, out=tmp_path, max_attempts=1)
    result = recommend(catalog, Scenario(60.0))
    shown = [c for c in (*result.deepvm, result.cost_first, result.performance_first,
                         result.best_single_anchor, result.best_tiering) if c is not None]
    for c in shown:
        if c.gpu == "p3.2xlarge":
            assert c.gpu_spot <= 24
        if c.gpu == "p5en.48xlarge":
            assert c.gpu_on_demand == 0
            assert c.gpu_spot <= 1


def test_groups_the_account_left_out_take_aws_defaults(service_quotas, tmp_path):
    service_quotas.applied["us-west-2"] = [
        q for q in ACCOUNT_QUOTAS if "P " not in q["QuotaName"] + " "
        and "P instances" not in q["QuotaName"]]
    catalog, _, notes = catalog_with_account_quotas(TODAY, region="us-west-2", out=tmp_path,
                                                    max_attempts=1)
    assert _rows(catalog)["P"] == (0, 0)  # AWS's defaults (the fake's table)
    assert _rows(catalog)["G"] == (64, 96)  # the account's own
    assert any("P: AWS's default value" in n for n in notes), notes
    assert "AWS's default value for group P" in catalog.source
    assert service_quotas.count("ListAWSDefaultServiceQuotas") == 2  # 8 quotas, 2 pages


@pytest.mark.usefixtures("service_quotas")
def test_catalog_quotas_cli(tmp_path, capsys):
    out = tmp_path / "mine.json"
    assert main(["catalog", "quotas", TODAY, "--out", str(out), "--max-attempts", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert str(out) in captured.out
    assert "  P: 96 on-demand / 192 spot vCPUs" in captured.out
    assert _rows(load_catalog(out)) == TODAY_ACCOUNT_ROWS


def test_catalog_quotas_never_writes_a_bundled_catalog_nor_its_input(service_quotas,
                                                                      tmp_path, capsys):
    from deepvm_core.catalog.store import bundled_catalog_paths

    bundled = bundled_catalog_paths()[TODAY]
    assert main(["catalog", "quotas", TODAY, "--out", str(bundled)]) == 2
    assert "refusing to overwrite the bundled catalog" in capsys.readouterr().err
    mine = tmp_path / "mine.json"
    mine.write_bytes(bundled.read_bytes())
    assert main(["catalog", "quotas", str(mine), "--out", str(mine)]) == 2
    assert "the input is never overwritten" in capsys.readouterr().err
    assert service_quotas.requests == []  # refused before any request


@pytest.mark.usefixtures("service_quotas")
def test_a_catalog_without_a_region_needs_one(capsys):
    assert main(["catalog", "quotas", "paper-simulated"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--region" in err


@pytest.mark.parametrize(("fault", "expected"), [
    ("denied", "access denied (AccessDeniedException: User: arn:aws:iam::123456789012:user/"
               "deepvm is not authorized to perform: servicequotas:ListServiceQuotas); the "
               "credentials need the IAM permission servicequotas:ListServiceQuotas"),
    ("throttle", "throttled by AWS after 2 attempt(s) (TooManyRequestsException: Rate "
                 "exceeded); try again later."),
    ("malformed", "malformed answer"),
    ("wrong_shape", "malformed answer: ListServiceQuotas answer without a Quotas list"),
    ("http500", "AWS answered HTTP 500 after 2 attempt(s) (ServiceException"),
    ("echo_credentials", "AWS rejected the credentials"),
])
def test_catalog_quotas_failures_are_one_line(service_quotas, tmp_path, capsys, fault,
                                              expected):
    service_quotas.fail("ListServiceQuotas", fault)
    out = tmp_path / "out"
    out.mkdir()
    code = main(["catalog", "quotas", TODAY, "--out", str(out), "--max-attempts", "2"])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    err = captured.err
    assert err.startswith("deepvm catalog quotas: error: Service Quotas ListServiceQuotas "
                          "(service ec2) for region us-east-1 failed: ")
    assert expected in err
    assert err.endswith("Nothing was written.\n")
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert "fewer instance types" not in err
    for secret in SECRETS:
        assert secret not in err
        assert secret[:12] not in err
    assert list(out.iterdir()) == []
    if fault == "throttle":
        assert service_quotas.count("ListServiceQuotas") == 2  # retried, then gave up


def test_catalog_quotas_without_credentials(service_quotas, aws_env, tmp_path, capsys):
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        aws_env.monkeypatch.delenv(key)
    out = tmp_path / "out"
    out.mkdir()
    assert main(["catalog", "quotas", TODAY, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "for region us-east-1 failed: no AWS credentials found" in err
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert service_quotas.requests == []  # nothing was sent unsigned
    assert list(out.iterdir()) == []


def test_catalog_quotas_with_no_vcpu_quota_in_the_answer(service_quotas, tmp_path, capsys):
    service_quotas.applied["us-east-1"] = [quota("L-0263D0A3", "EC2-VPC Elastic IPs", 5.0)]
    # the defaults are read for the groups left out; refused, the error names that operation
    service_quotas.fail("ListAWSDefaultServiceQuotas", "denied")
    out = tmp_path / "out"
    out.mkdir()
    assert main(["catalog", "quotas", TODAY, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Service Quotas ListAWSDefaultServiceQuotas (service ec2)" in err
    assert "servicequotas:ListAWSDefaultServiceQuotas" in err
    # an answer without any EC2 vCPU quota, and no default either, is refused
    service_quotas.faults.clear()
    service_quotas.defaults = []
    with pytest.raises(FetchError) as caught:
        catalog_with_account_quotas(TODAY, out=out, max_attempts=1)
    assert caught.value.kind == "malformed"
    assert "answered no EC2 vCPU quota" in str(caught.value)
    assert list(out.iterdir()) == []


# ----------------------------------------------------------------------------- fetch --quotas


def test_fetch_quotas_puts_the_accounts_quotas_in_the_fetched_catalog(
        service_quotas, aws_env: AwsEnv, capsys):
    before = aws_env.snapshot()
    code = fetch_main(["--region", "us-east-1", "--max-attempts", "1", "--quotas"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    written = sorted(set(aws_env.snapshot()) - set(before))
    assert len(written) == 1
    doc = json.loads(aws_env.snapshot()[written[0]])
    # the base catalog aws-us-east-1-2023-10 has families G, C, D, M, T
    assert {q["family"]: (q["on_demand_vcpus"], q["spot_vcpus"]) for q in doc["quotas"]} == {
        "G": (64, 96), "C": STANDARD, "D": STANDARD, "M": STANDARD, "T": STANDARD}
    assert "this account's own" in doc["source"]
    assert "quotas are the base catalog's" not in captured.out
    assert "note: quotas: this account's own, read from Service Quotas in us-east-1" in (
        captured.out)
    assert service_quotas.count("ListServiceQuotas") == 4


def test_fetch_quotas_denied_writes_nothing(service_quotas, aws_env: AwsEnv, capsys):
    service_quotas.fail("ListServiceQuotas", "denied")
    before = aws_env.snapshot()
    code = fetch_main(["--region", "us-east-1", "--max-attempts", "1", "--quotas"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("deepvm fetch: error: Service Quotas ListServiceQuotas (service ec2) "
                          "for region us-east-1 failed: access denied")
    assert "servicequotas:ListServiceQuotas" in err
    assert err.count("\n") == 1
    assert aws_env.snapshot() == before


def test_fetch_without_quotas_reads_no_quota(service_quotas, capsys):
    assert fetch_main(["--region", "us-east-1", "--max-attempts", "1"]) == 0
    assert "quotas are the base catalog's" in capsys.readouterr().out
    assert service_quotas.requests == []
