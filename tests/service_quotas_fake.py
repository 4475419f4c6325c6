"""A loopback fake of the AWS Service Quotas API (moto's service-quotas mock does not implement
ListServiceQuotas): an ``http.server`` on 127.0.0.1 that ``AWS_ENDPOINT_URL_SERVICE_QUOTAS``
points to, speaking JSON 1.1 (POST with ``X-Amz-Target: ServiceQuotasV20190624.<operation>``).

It answers ``ListServiceQuotas`` and ``ListAWSDefaultServiceQuotas`` for service code ``ec2``
from :data:`ACCOUNT_QUOTAS` / :data:`DEFAULT_QUOTAS` (per region: ``applied`` replaces a region's
answer), :data:`PAGE_SIZE` quotas a page with ``NextToken``, and injects faults per operation
(``fail``): ``denied`` (AccessDeniedException), ``throttle`` (TooManyRequestsException),
``http500``, ``echo_credentials`` (an error that repeats the credentials), ``malformed``
(not JSON) and ``wrong_shape`` (JSON without a ``Quotas`` list).

The answer mixes vCPU quotas with others, spells one name without commas (as some accounts
show it) and gives the Trn spot quota another code than ours, so that matching by name counts.

Fixtures (import them into a test module): ``fake_service_quotas``, ``service_quotas``.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from tests.loopback import LoopbackFake, LoopbackServer, send

#: A page of the fake's answers holds at most this many quotas: several pages per answer.
PAGE_SIZE = 4
TARGET_PREFIX = "ServiceQuotasV20190624."
_CREDENTIAL_SCOPE = re.compile(r"Credential=[^/]+/\d{8}/([a-z0-9-]+)/([a-z0-9-]+)/")


def quota(code: str, name: str, value: float) -> dict:
    """One ``ServiceQuota`` item of service ec2."""
    return {"ServiceCode": "ec2", "ServiceName": "Amazon Elastic Compute Cloud (Amazon EC2)",
            "QuotaArn": f"arn:aws:servicequotas:us-east-1:123456789012:ec2/{code}",
            "QuotaCode": code, "QuotaName": name, "Value": value, "Unit": "None",
            "Adjustable": True, "GlobalQuota": False}


#: The account's applied quotas (vCPUs), the same in every region unless a test says otherwise.
ACCOUNT_QUOTAS: tuple[dict, ...] = (
    quota("L-1216C47A", "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances", 640.0),
    quota("L-34B43A08", "All Standard (A C D H I M R T Z) Spot Instance Requests", 512.0),
    quota("L-0263D0A3", "EC2-VPC Elastic IPs", 5.0),
    quota("L-DB2E81BA", "Running On-Demand G and VT instances", 64.0),
    quota("L-3819A6DF", "All G and VT Spot Instance Requests", 96.0),
    quota("L-417A185B", "Running On-Demand P instances", 96.0),
    quota("L-7212CCBC", "All P Spot Instance Requests", 192.0),
    quota("L-2753CF59", "Running Dedicated p2 Hosts", 0.0),
    quota("L-2C3B7624", "Running On-Demand Trn instances", 8.0),
    quota("L-5480EFD2", "All Trn Spot Instance Requests", 0.0),
    quota("L-1945791B", "Running On-Demand Inf instances", 8.0),
    quota("L-B5D1601B", "All Inf Spot Instance Requests", 0.0),
    quota("L-74FC7D96", "Running On-Demand F instances", 0.0),
    quota("L-7295265B", "Running On-Demand X instances", 0.0),
)

#: AWS's default values (ListAWSDefaultServiceQuotas): the published new-account spot values.
DEFAULT_QUOTAS: tuple[dict, ...] = (
    quota("L-1216C47A", "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances", 5.0),
    quota("L-34B43A08", "All Standard (A, C, D, H, I, M, R, T, Z) Spot Instance Requests", 5.0),
    quota("L-DB2E81BA", "Running On-Demand G and VT instances", 0.0),
    quota("L-3819A6DF", "All G and VT Spot Instance Requests", 0.0),
    quota("L-417A185B", "Running On-Demand P instances", 0.0),
    quota("L-7212CCBC", "All P Spot Instance Requests", 0.0),
    quota("L-2C3B7624", "Running On-Demand Trn instances", 0.0),
    quota("L-6B0D517C", "All Trn Spot Instance Requests", 0.0),
)

_OPERATIONS = {"ListServiceQuotas": "applied", "ListAWSDefaultServiceQuotas": "defaults"}


@dataclass
class FakeServiceQuotas(LoopbackFake):
    """The fake Service Quotas endpoint (ListServiceQuotas, ListAWSDefaultServiceQuotas)."""

    applied: dict[str, list[dict]] = field(default_factory=dict)  # region -> its answer
    defaults: list[dict] | None = None  # replaces DEFAULT_QUOTAS when given
    faults: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (operation, region)
    _server: LoopbackServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        with self._lock:
            self.applied.clear()
            self.defaults = None
            self.faults.clear()
            self.requests.clear()

    def fail(self, operation: str, kind: str, times: int | None = None) -> None:
        """Make the next ``times`` (all, when ``None``) requests of ``operation`` fail."""
        with self._lock:
            self.faults[operation] = (kind, times)

    def count(self, operation: str) -> int:
        """How many requests of ``operation`` arrived."""
        return sum(1 for op, _ in self.requests if op == operation)

    def _handle(self, h: http.server.BaseHTTPRequestHandler, body: bytes) -> None:
        request = json.loads(body or b"{}")
        operation = h.headers.get("X-Amz-Target", "").removeprefix(TARGET_PREFIX)
        scope = _CREDENTIAL_SCOPE.search(h.headers.get("Authorization", ""))
        region = scope.group(1) if scope else "?"
        with self._lock:
            self.requests.append((operation, region))
            kind, remaining = self.faults.get(operation, ("", 0))
            if kind and remaining != 0:
                if remaining is not None:
                    self.faults[operation] = (kind, remaining - 1)
            else:
                kind = ""
        if kind:
            self._fault(h, kind)
            return
        if operation not in _OPERATIONS:
            self._error(h, 400, "UnknownOperationException", f"unknown operation {operation}")
            return
        if request.get("ServiceCode") != "ec2":
            self._error(h, 400, "NoSuchResourceException", "The request failed because the "
                        "specified service does not exist.")
            return
        if _OPERATIONS[operation] == "defaults":
            items = list(DEFAULT_QUOTAS if self.defaults is None else self.defaults)
        else:
            items = self.applied.get(region, list(ACCOUNT_QUOTAS))
        offset = int(request.get("NextToken") or 0)
        size = min(int(request.get("MaxResults") or PAGE_SIZE), PAGE_SIZE)
        answer: dict = {"Quotas": items[offset:offset + size]}
        if offset + size < len(items):
            answer["NextToken"] = str(offset + size)
        self._send(h, 200, json.dumps(answer).encode())

    def _fault(self, h: http.server.BaseHTTPRequestHandler, kind: str) -> None:
        echo = (f"credentials {h.headers.get('Authorization', '')} secret "
                f"{os.environ.get('AWS_SECRET_ACCESS_KEY', '')} token "
                f"{os.environ.get('AWS_SESSION_TOKEN', '')}")
        errors = {
            "denied": (400, "AccessDeniedException", "User: arn:aws:iam::123456789012:user/"
                       "deepvm is not authorized to perform: servicequotas:ListServiceQuotas"),
            "throttle": (400, "TooManyRequestsException", "Rate exceeded"),
            "http500": (500, "ServiceException", "Something went wrong."),
            "echo_credentials": (400, "UnrecognizedClientException",
                                 f"The security token included in the request is invalid: "
                                 f"{echo}"),
        }
        if kind in errors:
            self._error(h, *errors[kind])
        elif kind == "malformed":  # a gateway's page, not JSON
            self._send(h, 200, b"<html><body>Gateway says hello</body></html>")
        elif kind == "wrong_shape":  # JSON without a Quotas list
            self._send(h, 200, b'{"Items": []}')
        else:
            raise AssertionError(f"unknown Service Quotas fault {kind}")

    def _error(self, h: http.server.BaseHTTPRequestHandler, status: int, code: str,
               message: str) -> None:
        self._send(h, status, json.dumps({"__type": code, "Message": message}).encode())

    @staticmethod
    def _send(h: http.server.BaseHTTPRequestHandler, status: int, payload: bytes) -> None:
        send(h, status, payload, "application/x-amz-json-1.1")


@pytest.fixture(scope="module")
def fake_service_quotas() -> Iterator[FakeServiceQuotas]:
    """The fake Service Quotas endpoint on 127.0.0.1 (a free port)."""
    with FakeServiceQuotas() as fake:
        yield fake


@pytest.fixture
def service_quotas(fake_service_quotas: FakeServiceQuotas, aws_env: object,
                   monkeypatch: pytest.MonkeyPatch) -> FakeServiceQuotas:
    """The fake, reset, with ``AWS_ENDPOINT_URL_SERVICE_QUOTAS`` pointing to it, on top of
    ``aws_fakes.aws_env`` (fake credentials, EC2 and Pricing fakes, loopback only; import
    ``moto_url``, ``fake_aws`` and ``aws_env`` into the test module too)."""
    del aws_env
    fake_service_quotas.reset()
    monkeypatch.setenv("AWS_ENDPOINT_URL_SERVICE_QUOTAS", fake_service_quotas.url)
    return fake_service_quotas
