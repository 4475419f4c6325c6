"""Loopback fakes of the AWS endpoints the catalog fetcher calls (no test reaches AWS).

* moto runs as a real server on 127.0.0.1 (``ThreadedMotoServer``): it answers
  ``DescribeInstanceTypes`` from its instance-type data.
* :class:`FakeAws` is a small server (``loopback.LoopbackServer``) on 127.0.0.1 that both
  ``AWS_ENDPOINT_URL_EC2`` and ``AWS_ENDPOINT_URL_PRICING`` point to. It speaks the wire
  format of two operations moto cannot serve realistically:

  - EC2 ``DescribeSpotPriceHistory`` (query protocol: form-encoded POST, XML answer with a
    ``spotPriceHistorySet`` and ``nextToken`` pagination); moto's spot prices are placeholders;
  - Pricing ``GetProducts`` (JSON 1.1: POST with ``X-Amz-Target:
    AWSPriceListService.GetProducts``, answer ``{"PriceList": [json-string, ...],
    "NextToken": ...}``); moto has no Pricing API.

  Every other request (``DescribeInstanceTypes``) is proxied to moto unchanged. Faults (HTTP
  500, throttling, access denied, malformed answers, an error echoing credentials) are
  injected per operation with :meth:`FakeAws.fail`.
* The Spot Instance Advisor's fake is in ``spot_advisor_fake``; the loopback helpers
  (a closed port, the network guard, folder snapshots) in ``loopback``.

The fixture data derive from the bundled catalog ``aws-us-east-1-2023-10``: on-demand prices
are its on-demand prices, the cheapest zone's latest spot price is its spot price (other
regions: times a factor).

Fixtures (``tests/conftest.py`` makes them available to every test): ``moto_url`` and ``fake_aws``
(one server each per session), ``aws_env`` (per test: the fake reset, the environment set).
"""

from __future__ import annotations

import http.client
import http.server
import json
import os
import re
import threading
import urllib.parse
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.store import bundled_catalog_paths, load_catalog
from tests.aws_price_data import price_list, spot_history
from tests.loopback import (
    LoopbackFake,
    LoopbackServer,
    forward,
    guard_loopback_only,
    send,
    snapshot,
)

BASE_CATALOG = "aws-us-east-1-2023-10"

#: A recognisable fake secret: it must never show up in an output.
FAKE_ACCESS_KEY_ID = "AKIAFAKEDEEPVM7EXAMPLE"
FAKE_SECRET_ACCESS_KEY = "fAkE/SeCrEt+DeepVM-never-print-me-0123456789"
FAKE_SESSION_TOKEN = "FakeSessionToken-DeepVM-never-print-me-abcdef"

SPOT_PAGE_SIZE = 7  # the fake's page size: several pages per answer
PRICING_PAGE_SIZE = 2

EC2_NS = "http://ec2.amazonaws.com/doc/2016-11-15/"
_CREDENTIAL_SCOPE = re.compile(r"Credential=[^/]+/\d{8}/([a-z0-9-]+)/([a-z0-9-]+)/")


@dataclass
class RegionOffers:
    """What the fake offers in one region.

    Attributes:
        spot_factor: spot prices are the base catalog's times this; ``None``: no spot offers.
        on_demand_factor: on-demand prices are the base catalog's times this; ``None``: the
            price list has no product in this region.
    """

    spot_factor: float | None = 1.0
    on_demand_factor: float | None = 1.0


def default_offers() -> dict[str, RegionOffers]:
    """us-east-1 (the base catalog's prices), eu-west-1 (20 % dearer), ap-south-2 (spot
    prices but no price-list offers: "a region with no offers")."""
    return {
        "us-east-1": RegionOffers(1.0, 1.0),
        "eu-west-1": RegionOffers(1.2, 1.2),
        "ap-south-2": RegionOffers(1.0, None),
    }


# ----------------------------------------------------------------------------- the server


@dataclass
class Fault:
    kind: str  # http500, throttle, denied, malformed, not_json, echo_credentials, wrong_shape
    remaining: int | None  # requests left to fail; None = every request


@dataclass
class FakeAws(LoopbackFake):
    """The fake EC2 (spot) + Pricing endpoint; everything else goes to moto."""

    moto_url: str
    catalog: Catalog
    offers: dict[str, RegionOffers] = field(default_factory=default_offers)
    faults: dict[str, Fault] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (operation, region)
    #: GetProducts filters the fake applies; the others are ignored, like a lax server, so
    #: decoy products come back (several pages) and the client's own attribute check counts.
    pricing_filter_fields: tuple[str, ...] = ("instanceType", "regionCode")
    _server: LoopbackServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        with self._lock:
            self.offers = default_offers()
            self.faults.clear()
            self.requests.clear()

    def fail(self, operation: str, kind: str, times: int | None = None) -> None:
        """Make the next ``times`` (all, when ``None``) requests of ``operation`` fail."""
        self.faults[operation] = Fault(kind, times)

    def count(self, operation: str) -> int:
        """How many requests of ``operation`` arrived."""
        return sum(1 for op, _ in self.requests if op == operation)

    # -- dispatch

    def _handle(self, h: http.server.BaseHTTPRequestHandler, body: bytes) -> None:
        target = h.headers.get("X-Amz-Target", "")
        scope = _CREDENTIAL_SCOPE.search(h.headers.get("Authorization", ""))
        signing_region = scope.group(1) if scope else "?"
        if target == "AWSPriceListService.GetProducts":
            self._pricing(h, body)
            return
        form = urllib.parse.parse_qs(body.decode("utf-8"), keep_blank_values=True)
        action = (form.get("Action") or [""])[0]
        with self._lock:
            self.requests.append((action, signing_region))
        if self._fault("ec2", action, h):
            return
        if action == "DescribeSpotPriceHistory":
            self._spot(h, form, signing_region)
        else:
            self._proxy(h, body)

    def _fault(self, protocol: str, operation: str,
               h: http.server.BaseHTTPRequestHandler) -> bool:
        with self._lock:
            fault = self.faults.get(operation)
            if fault is None or fault.remaining == 0:
                return False
            if fault.remaining is not None:
                fault.remaining -= 1
        echo = (f"credentials {h.headers.get('Authorization', '')} secret "
                f"{os.environ.get('AWS_SECRET_ACCESS_KEY', '')} token "
                f"{os.environ.get('AWS_SESSION_TOKEN', '')}")
        if protocol == "ec2":
            answers = {
                "http500": (500, "InternalError", "An internal error has occurred"),
                "throttle": (503, "RequestLimitExceeded", "Request limit exceeded."),
                "denied": (403, "UnauthorizedOperation",
                           "You are not authorized to perform this operation."),
                "echo_credentials": (401, "AuthFailure", f"AWS was not able to validate {echo}"),
            }
            if fault.kind in answers:
                status, code, message = answers[fault.kind]
                xml = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error>'
                       f"<Code>{code}</Code><Message>{escape(message)}</Message></Error>"
                       f"</Errors><RequestID>{uuid.uuid4()}</RequestID></Response>")
                self._send(h, status, xml.encode(), "text/xml;charset=UTF-8")
            elif fault.kind in ("malformed", "not_json"):
                self._send(h, 200, b'<?xml version="1.0"?><DescribeSpotPriceHistoryResponse>'
                                   b"<spotPriceHistorySet><item><instanceType>", "text/xml")
            else:
                raise AssertionError(f"unknown EC2 fault {fault.kind}")
            return True
        answers_json = {
            "http500": (500, "InternalErrorException", "An internal error occurred."),
            "throttle": (400, "ThrottlingException", "Rate exceeded"),
            "denied": (400, "AccessDeniedException", "User: arn:aws:iam::123456789012:user/"
                       "deepvm is not authorized to perform: pricing:GetProducts"),
            "echo_credentials": (400, "UnrecognizedClientException",
                                 f"The security token included in the request is invalid: "
                                 f"{echo}"),
        }
        if fault.kind in answers_json:
            status, code, message = answers_json[fault.kind]
            payload = json.dumps({"__type": code, "Message": message}).encode()
            self._send(h, status, payload, "application/x-amz-json-1.1")
        elif fault.kind == "malformed":
            payload = json.dumps({"FormatVersion": "aws_v1",
                                  "PriceList": ['{"product": {"attributes": ']}).encode()
            self._send(h, 200, payload, "application/x-amz-json-1.1")
        elif fault.kind == "not_json":
            self._send(h, 200, b"<html><body>Gateway says hello</body></html>",
                       "application/x-amz-json-1.1")
        elif fault.kind == "wrong_shape":
            self._send(h, 200, b'{"Products": []}', "application/x-amz-json-1.1")
        else:
            raise AssertionError(f"unknown Pricing fault {fault.kind}")
        return True

    # -- EC2 DescribeSpotPriceHistory

    def _spot(self, h: http.server.BaseHTTPRequestHandler, form: dict[str, list[str]],
              region: str) -> None:
        types = [v[0] for k, v in sorted(form.items()) if k.startswith("InstanceType.")]
        products = [v[0] for k, v in form.items() if k.startswith("ProductDescription.")]
        start = form.get("StartTime", [None])[0]
        start_time = (datetime.fromisoformat(start.replace("Z", "+00:00")) if start else None)
        offers = self.offers.get(region)
        entries: list[dict] = []
        if offers is not None and offers.spot_factor is not None:
            entries = spot_history(self.catalog, region, offers.spot_factor, datetime.now(UTC))
        entries = [e for e in entries
                   if (not types or e["InstanceType"] in types)
                   and (not products or e["ProductDescription"] in products)
                   and (start_time is None or e["Timestamp"] >= start_time)]
        offset = int((form.get("NextToken") or ["0"])[0] or 0)
        size = min(int((form.get("MaxResults") or [SPOT_PAGE_SIZE])[0]), SPOT_PAGE_SIZE)
        page = entries[offset:offset + size]
        items = "".join(
            "<item>"
            f"<instanceType>{e['InstanceType']}</instanceType>"
            f"<productDescription>{escape(e['ProductDescription'])}</productDescription>"
            f"<spotPrice>{e['SpotPrice']}</spotPrice>"
            f"<timestamp>{e['Timestamp'].strftime('%Y-%m-%dT%H:%M:%S.000Z')}</timestamp>"
            f"<availabilityZone>{e['AvailabilityZone']}</availabilityZone>"
            "</item>" for e in page)
        token = (f"<nextToken>{offset + size}</nextToken>"
                 if offset + size < len(entries) else "<nextToken/>")
        xml = (f'<?xml version="1.0" encoding="UTF-8"?>\n<DescribeSpotPriceHistoryResponse '
               f'xmlns="{EC2_NS}"><requestId>{uuid.uuid4()}</requestId>'
               f"<spotPriceHistorySet>{items}</spotPriceHistorySet>{token}"
               "</DescribeSpotPriceHistoryResponse>")
        self._send(h, 200, xml.encode(), "text/xml;charset=UTF-8")

    # -- Pricing GetProducts

    def _pricing(self, h: http.server.BaseHTTPRequestHandler, body: bytes) -> None:
        request = json.loads(body or b"{}")
        filters = {f["Field"]: f["Value"] for f in request.get("Filters", [])
                   if f.get("Type") == "TERM_MATCH"}
        region = filters.get("regionCode", "?")
        with self._lock:
            self.requests.append(("GetProducts", region))
        if self._fault("pricing", "GetProducts", h):
            return
        if request.get("ServiceCode") != "AmazonEC2":
            payload = json.dumps({"__type": "InvalidParameterException",
                                  "Message": "unknown service code"}).encode()
            self._send(h, 400, payload, "application/x-amz-json-1.1")
            return
        offers = self.offers.get(region)
        products: list[tuple[dict, str]] = []
        if offers is not None and offers.on_demand_factor is not None:
            products = price_list(self.catalog, region, offers.on_demand_factor)
        matching = [text for attrs, text in products
                    if all(attrs.get(k) == v for k, v in filters.items()
                           if k in self.pricing_filter_fields)]
        offset = int(request.get("NextToken") or 0)
        size = min(int(request.get("MaxResults") or PRICING_PAGE_SIZE), PRICING_PAGE_SIZE)
        answer: dict = {"FormatVersion": "aws_v1", "PriceList": matching[offset:offset + size]}
        if offset + size < len(matching):
            answer["NextToken"] = str(offset + size)
        self._send(h, 200, json.dumps(answer).encode(), "application/x-amz-json-1.1")

    # -- everything else: moto

    def _proxy(self, h: http.server.BaseHTTPRequestHandler, body: bytes) -> None:
        self._send(h, *forward(h, self.moto_url, body, timeout_s=30))

    @staticmethod
    def _send(h: http.server.BaseHTTPRequestHandler, status: int, payload: bytes,
              content_type: str) -> None:
        send(h, status, payload, content_type)


@dataclass
class AwsEnv:
    """What a test gets from the ``aws_env`` fixture."""

    fake: FakeAws
    fetched_dir: Path
    monkeypatch: pytest.MonkeyPatch

    def snapshot(self) -> dict[str, bytes]:
        return snapshot(self.fetched_dir)


# ----------------------------------------------------------------------------- fixtures


def reset_moto(moto_url: str) -> None:
    """Forget every resource moto holds (all accounts, regions and services): a fresh AWS
    account for the next test, without a new server."""
    parsed = urllib.parse.urlsplit(moto_url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        conn.request("POST", "/moto-api/reset")
        response = conn.getresponse()
        response.read()
        assert response.status == 200, f"moto reset answered HTTP {response.status}"
    finally:
        conn.close()


@pytest.fixture(scope="session")
def moto_url() -> Iterator[str]:
    """moto as a real server on 127.0.0.1 (a free port), one per test session (one per xdist
    worker); yields its URL. Tests that change its state reset it first (``reset_moto``)."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture(scope="session")
def fake_aws(moto_url: str) -> Iterator[FakeAws]:
    """The fake spot/pricing endpoint in front of moto, one per session (``aws_env`` resets
    it for each test)."""
    with FakeAws(moto_url=moto_url, catalog=load_catalog(BASE_CATALOG)) as fake:
        yield fake


@pytest.fixture
def aws_env(fake_aws: FakeAws, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AwsEnv:
    """An environment where boto3 reaches only the fakes: every ``AWS_*`` variable of the
    developer removed, fake credentials, config files that do not exist, instance metadata
    off, no proxies, and any connection beyond loopback refused; fetched catalogs go to a
    temporary folder that already holds one catalog (so tests can check that a failure changes
    nothing)."""
    fake_aws.reset()
    guard_loopback_only(monkeypatch)
    for key in list(os.environ):
        if key.startswith("AWS_") or key.lower() in ("http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", FAKE_ACCESS_KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", FAKE_SECRET_ACCESS_KEY)
    monkeypatch.setenv("AWS_SESSION_TOKEN", FAKE_SESSION_TOKEN)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-such-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-such-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("AWS_ENDPOINT_URL_EC2", fake_aws.url)
    monkeypatch.setenv("AWS_ENDPOINT_URL_PRICING", fake_aws.url)
    fetched = tmp_path / "fetched"
    fetched.mkdir()
    (fetched / "aws-us-east-1-earlier.json").write_bytes(
        bundled_catalog_paths()[BASE_CATALOG].read_bytes())
    monkeypatch.setenv("DEEPVM_FETCHED_CATALOG_DIR", str(fetched))
    return AwsEnv(fake_aws, fetched, monkeypatch)
