"""Loopback fakes for the fleet launcher's tests (no test reaches AWS).

* moto runs as a real server on 127.0.0.1 (``ThreadedMotoServer``, a free port): it serves
  ``CreateFleet``, ``DescribeInstances``, ``DeleteFleets``, ``TerminateInstances``, launch
  templates and subnets. It launches every instance a fleet asks for; it does not enforce
  ``MinTargetCapacity``, ``SingleAvailabilityZone`` or prices.
* :class:`Ec2Front` is a small server (``loopback.LoopbackServer``) on 127.0.0.1 in front of
  moto that ``AWS_ENDPOINT_URL_EC2`` points to. It forwards every request to moto and records
  it; faults are injected per operation and call number (DryRun calls counted apart):

  - :meth:`Ec2Front.fail`: answer an EC2 error (``RequestLimitExceeded``, HTTP 500, ...)
    instead of forwarding;
  - :meth:`Ec2Front.shrink`: lower a ``CreateFleet``'s capacity before moto sees it, so moto
    really launches fewer instances than the launcher asked for;
  - :meth:`Ec2Front.drop_instances`: forward, then remove instances from the answer (moto
    launched them all, the answer lists fewer and an ``errorSet``: a fleet that lies);
  - :meth:`Ec2Front.spot_market`: a market that misbehaves on a schedule replayed from traces
    (:class:`SpotMarket`, one per zone, tick k over ``[origin + k g, origin + (k + 1) g)`` of
    an injected clock, cyclic): before any request is answered, the spot instances of every
    zone whose trace is down now are terminated in moto and shown in ``DescribeInstances``
    with the reason ``Server.SpotInstanceTermination``; a spot ``CreateFleet`` into a zone
    that is down is refused (no instance, ``InsufficientInstanceCapacity`` in ``errorSet``,
    moto never sees it); on-demand requests always go through.

Fixtures (``tests/conftest.py`` makes them available to every test): ``ec2_front`` (one per
session, in front of ``aws_fakes``' ``moto_url``), ``fleet_env`` (per test: moto reset, launch
templates ``gpu-workers`` and ``memory-nodes``, three subnets in three AZs, fake credentials,
loopback-only network).
"""

from __future__ import annotations

import http.server
import math
import os
import threading
import urllib.parse
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aws_fakes
import pytest
from loopback import LoopbackFake, LoopbackServer, forward, guard_loopback_only, send

from deepvm_core.cloud.fleet import ec2 as ec2_module

EC2_NS = "http://ec2.amazonaws.com/doc/2016-11-15"
REGION = "us-east-1"

#: A recognisable fake secret: it must never show up in an output.
FAKE_ACCESS_KEY_ID = "AKIAFAKEFLEET7EXAMPLE0"
FAKE_SECRET_ACCESS_KEY = "fAkE/FlEeT+DeepVM-never-print-me-9876543210"
FAKE_SESSION_TOKEN = "FakeFleetSessionToken-DeepVM-never-print-me"
SECRETS = (FAKE_ACCESS_KEY_ID, FAKE_SECRET_ACCESS_KEY, FAKE_SESSION_TOKEN)

GPU_TEMPLATE = "gpu-workers"
CPU_TEMPLATE = "memory-nodes"


@dataclass
class _Rule:
    action: str
    nth: frozenset[int] | None  # call numbers (1-based) it applies to; None: every call
    dry_run: bool
    kind: str  # "error", "shrink", "drop", "pending"
    code: str = ""
    status: int = 400
    message: str = ""
    keep: int = 0


@dataclass
class Call:
    """One request the front saw."""

    action: str
    params: dict[str, str]

    @property
    def dry_run(self) -> bool:
        return self.params.get("DryRun", "").lower() == "true"


@dataclass
class SpotMarket:
    """Spot capacity per zone over time: ``traces[zone][k]`` (>= 1: up) during tick k (cyclic)
    of ``clock``, ticks of ``gap_seconds`` from ``origin``; ``subnets``: subnet id -> zone."""

    traces: dict[str, list[int]]
    gap_seconds: float
    clock: Callable[[], float]
    origin: float
    subnets: dict[str, str]
    reclaimed: set[str] = field(default_factory=set)
    refused: int = 0

    def tick(self) -> int:
        return math.floor((self.clock() - self.origin) / self.gap_seconds + 1e-9)

    def up(self, zone: str) -> bool:
        trace = self.traces.get(zone)
        return True if trace is None else trace[self.tick() % len(trace)] >= 1


@dataclass
class Ec2Front(LoopbackFake):
    """The EC2 endpoint of the tests: moto behind a fault-injecting proxy."""

    moto_url: str
    calls: list[Call] = field(default_factory=list)
    _rules: list[_Rule] = field(default_factory=list)
    _counts: dict[tuple[str, bool], int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: LoopbackServer | None = None
    market: SpotMarket | None = None
    _moto: Any = None

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()
            self._rules.clear()
            self._counts.clear()
            self.market = None

    def spot_market(self, market: SpotMarket) -> None:
        """Replay ``market`` from now on (module docstring)."""
        self._moto = moto_client(self.moto_url)  # made here: boto3 is slow to build in a thread
        self.market = market

    def _reclaim(self) -> None:
        market = self.market
        if market is None:
            return
        down = [z for z in {*market.traces} if not market.up(z)]
        if not down:
            return
        ec2 = self._moto
        answer = ec2.describe_instances(Filters=[
            {"Name": "availability-zone", "Values": down},
            {"Name": "instance-state-name", "Values": ["pending", "running"]}])
        ids = [i["InstanceId"] for r in answer["Reservations"] for i in r["Instances"]
               if i.get("InstanceLifecycle") == "spot"]
        if ids:
            ec2.terminate_instances(InstanceIds=ids)
            market.reclaimed.update(ids)

    def _refuse_spot(self, form: dict[str, list[str]]) -> bytes | None:
        """The answer of a spot ``CreateFleet`` into a zone that is down, else ``None``."""
        market = self.market
        if market is None or form.get("TargetCapacitySpecification.DefaultTargetCapacityType",
                                      [""])[0] != "spot":
            return None
        zones = {market.subnets.get(v[0], "") if k.endswith(".SubnetId") else v[0]
                 for k, v in form.items()
                 if ".Overrides." in k and (k.endswith(".SubnetId")
                                            or k.endswith(".AvailabilityZone"))}
        if not zones or all(market.up(z) for z in zones):
            return None
        market.refused += 1
        return (f'<?xml version="1.0" encoding="UTF-8"?>\n<CreateFleetResponse xmlns="{EC2_NS}">'
                f"<requestId>{uuid.uuid4()}</requestId><fleetId>fleet-{uuid.uuid4()}</fleetId>"
                "<errorSet><item><errorCode>InsufficientInstanceCapacity</errorCode>"
                "<errorMessage>There is no Spot capacity available that matches your request."
                "</errorMessage><lifecycle>spot</lifecycle></item></errorSet>"
                "<fleetInstanceSet/></CreateFleetResponse>").encode()

    def _mark_reclaimed(self, payload: bytes) -> bytes:
        market = self.market
        if market is None or not market.reclaimed:
            return payload
        ET.register_namespace("", EC2_NS)
        root = ET.fromstring(payload)
        ns = {"e": EC2_NS}
        for item in root.iterfind(".//e:instancesSet/e:item", ns):
            if item.findtext("e:instanceId", "", ns) not in market.reclaimed:
                continue
            for old in item.findall("e:stateReason", ns):
                item.remove(old)
            reason = ET.SubElement(item, f"{{{EC2_NS}}}stateReason")
            ET.SubElement(reason, f"{{{EC2_NS}}}code").text = "Server.SpotInstanceTermination"
            ET.SubElement(reason, f"{{{EC2_NS}}}message").text = (
                "Server.SpotInstanceTermination: Spot instance termination")
        return ET.tostring(root, xml_declaration=True, encoding="utf-8")

    # -- faults

    def fail(self, action: str, code: str, *, nth: int | Iterable[int] | None = 1,
             status: int = 400, message: str = "injected by the test",
             dry_run: bool = False) -> None:
        """Answer the ``nth`` call(s) of ``action`` (``None``: every call) with an EC2
        error."""
        self._rules.append(_Rule(action, _calls(nth), dry_run, "error", code, status, message))

    def shrink(self, keep: int, *, nth: int = 1) -> None:
        """Make moto launch only ``keep`` instances on the ``nth`` ``CreateFleet``."""
        self._rules.append(_Rule("CreateFleet", _calls(nth), False, "shrink", keep=keep))

    def drop_instances(self, keep: int, *, nth: int = 1) -> None:
        """Answer the ``nth`` ``CreateFleet`` with only ``keep`` of the instances moto
        launched, and an ``errorSet``."""
        self._rules.append(_Rule("CreateFleet", _calls(nth), False, "drop", keep=keep))

    def never_running(self) -> None:
        """Show every running instance as pending in ``DescribeInstances`` answers."""
        self._rules.append(_Rule("DescribeInstances", None, False, "pending"))

    def count(self, action: str, *, dry_run: bool = False) -> int:
        """How many ``action`` requests (DryRun or not) the front saw, retries included."""
        return sum(1 for c in self.calls if c.action == action and c.dry_run == dry_run)

    # -- serving

    def _handle(self, h: http.server.BaseHTTPRequestHandler, body: bytes) -> None:
        form = urllib.parse.parse_qs(body.decode(), keep_blank_values=True)
        params = {k: v[0] for k, v in form.items()}
        call = Call(params.get("Action", "?"), params)
        with self._lock:
            self.calls.append(call)
            key = (call.action, call.dry_run)
            self._counts[key] = n = self._counts.get(key, 0) + 1
            rule = next((r for r in self._rules if r.action == call.action
                         and r.dry_run == call.dry_run and (r.nth is None or n in r.nth)),
                        None)
        if self.market is not None:
            self._reclaim()
            if call.action == "CreateFleet" and not call.dry_run:
                refused = self._refuse_spot(form)
                if refused is not None:
                    self._send(h, 200, refused, "text/xml")
                    return
        if rule is not None and rule.kind == "error":
            xml = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error>'
                   f"<Code>{rule.code}</Code><Message>{rule.message}</Message></Error>"
                   f"</Errors><RequestID>{uuid.uuid4()}</RequestID></Response>")
            self._send(h, rule.status, xml.encode(), "text/xml")
            return
        if rule is not None and rule.kind == "shrink":
            for key in ("TargetCapacitySpecification.TotalTargetCapacity",
                        "TargetCapacitySpecification.SpotTargetCapacity",
                        "TargetCapacitySpecification.OnDemandTargetCapacity"):
                if key in form and form[key][0] != "0":
                    form[key] = [str(rule.keep)]
            body = urllib.parse.urlencode(form, doseq=True).encode()
        status, payload, content_type = self._forward(h, body)
        if rule is not None and rule.kind == "drop" and status == 200:
            payload = _drop_instances(payload, rule.keep)
        if call.action == "DescribeInstances" and status == 200:
            payload = self._mark_reclaimed(payload)
        if rule is not None and rule.kind == "pending" and status == 200:
            payload = payload.replace(b"<code>16</code>", b"<code>0</code>").replace(
                b"<name>running</name>", b"<name>pending</name>")
        self._send(h, status, payload, content_type)

    def _forward(self, h: http.server.BaseHTTPRequestHandler,
                 body: bytes) -> tuple[int, bytes, str]:
        return forward(h, self.moto_url, body)

    @staticmethod
    def _send(h: http.server.BaseHTTPRequestHandler, status: int, payload: bytes,
              content_type: str) -> None:
        send(h, status, payload, content_type)


def _calls(nth: int | Iterable[int] | None) -> frozenset[int] | None:
    if nth is None:
        return None
    return frozenset([nth] if isinstance(nth, int) else nth)


def _drop_instances(payload: bytes, keep: int) -> bytes:
    ET.register_namespace("", EC2_NS)
    root = ET.fromstring(payload)
    ns = {"e": EC2_NS}
    instances = root.find("e:fleetInstanceSet", ns)
    if instances is not None:
        for item in list(instances)[keep:]:
            instances.remove(item)
    errors = ET.SubElement(root, f"{{{EC2_NS}}}errorSet")
    item = ET.SubElement(errors, f"{{{EC2_NS}}}item")
    ET.SubElement(item, f"{{{EC2_NS}}}errorCode").text = "InsufficientInstanceCapacity"
    ET.SubElement(item, f"{{{EC2_NS}}}errorMessage").text = (
        "There is not enough capacity to fulfill your request.")
    ET.SubElement(item, f"{{{EC2_NS}}}lifecycle").text = "spot"
    return ET.tostring(root, xml_declaration=True, encoding="utf-8")


# ----------------------------------------------------------------------------- helpers


def moto_client(moto_url: str) -> Any:
    """A boto3 EC2 client straight to moto (test setup and assertions)."""
    import boto3

    return boto3.client("ec2", region_name=REGION, endpoint_url=moto_url,
                        aws_access_key_id="testing", aws_secret_access_key="testing")


@dataclass
class FleetEnv:
    """What a test gets from ``fleet_env``."""

    front: Ec2Front
    moto_url: str
    subnets: dict[str, str]  # subnet id -> AZ, AZs a, b, c
    monkeypatch: pytest.MonkeyPatch
    tmp_path: Path

    @property
    def ec2(self) -> Any:
        return moto_client(self.moto_url)

    def instances(self, plan_id: str | None = None) -> list[dict[str, Any]]:
        """Every instance moto knows (with the plan's tag, when given)."""
        filters = ([{"Name": "tag:deepvm:plan", "Values": [plan_id]}] if plan_id else [])
        answer = self.ec2.describe_instances(Filters=filters)
        return [i for r in answer["Reservations"] for i in r["Instances"]]

    def live(self, plan_id: str | None = None) -> list[dict[str, Any]]:
        """The pending or running instances (with the plan's tag, when given)."""
        return [i for i in self.instances(plan_id)
                if i["State"]["Name"] in ("pending", "running", "stopping", "stopped")]


def setup_account(moto_url: str) -> dict[str, str]:
    """Launch templates ``gpu-workers`` and ``memory-nodes`` and a VPC with one subnet in each
    of us-east-1a, b and c; returns subnet id -> AZ."""
    ec2 = moto_client(moto_url)
    # One of moto's own AMIs, looked up by name: listing all of them (1,300) takes seconds.
    image = ec2.describe_images(Owners=["amazon"], Filters=[
        {"Name": "name", "Values": ["Deep Learning AMI*"]}])["Images"][0]["ImageId"]
    for name, instance_type in ((GPU_TEMPLATE, "g4dn.xlarge"), (CPU_TEMPLATE, "c5.xlarge")):
        ec2.create_launch_template(LaunchTemplateName=name, LaunchTemplateData={
            "ImageId": image, "InstanceType": instance_type})
    vpc = ec2.create_vpc(CidrBlock="10.42.0.0/16")["Vpc"]["VpcId"]
    subnets = {}
    for i, zone in enumerate("abc"):
        subnet = ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.42.{i}.0/24",
                                   AvailabilityZone=f"{REGION}{zone}")["Subnet"]
        subnets[subnet["SubnetId"]] = subnet["AvailabilityZone"]
    return subnets


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def ec2_front(moto_url: str) -> Iterator[Ec2Front]:
    """The fault-injecting front of moto, one per session (``fleet_env`` resets it for each
    test)."""
    with Ec2Front(moto_url) as front:
        yield front


def set_fake_aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, endpoint: str, *,
                     credentials: bool = True) -> None:
    """Only fake AWS settings: every ``AWS_*`` variable of the developer removed, config files
    that do not exist, instance metadata off, no proxies, ``AWS_ENDPOINT_URL_EC2`` set."""
    for key in list(os.environ):
        if key.startswith("AWS_") or key.lower() in ("http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.delenv(key, raising=False)
    if credentials:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", FAKE_ACCESS_KEY_ID)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", FAKE_SECRET_ACCESS_KEY)
        monkeypatch.setenv("AWS_SESSION_TOKEN", FAKE_SESSION_TOKEN)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-such-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-such-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("AWS_ENDPOINT_URL_EC2", endpoint)


@pytest.fixture
def fleet_env(moto_url: str, ec2_front: Ec2Front, monkeypatch: pytest.MonkeyPatch,
              tmp_path: Path) -> FleetEnv:
    """A fresh moto account behind the front, with templates and subnets, fake credentials
    and a loopback-only network."""
    aws_fakes.reset_moto(moto_url)
    ec2_front.reset()
    subnets = setup_account(moto_url)
    set_fake_aws_env(monkeypatch, tmp_path, ec2_front.url)
    guard_loopback_only(monkeypatch)
    # the launch code's throttling back-off (2 s, doubled) passes at once: the tests count
    # the retries, not the seconds (botocore's own back-off is bounded by --max-attempts)
    monkeypatch.setattr(ec2_module, "back_off_wait", lambda _seconds: None)
    return FleetEnv(ec2_front, moto_url, subnets, monkeypatch, tmp_path)
