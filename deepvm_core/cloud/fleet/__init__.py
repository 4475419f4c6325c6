"""Launch what DeepVM chose: EC2 Fleet requests, launch, status and teardown.

Layers (boto3 is imported only when a session is opened; nothing connects at import time):

* :mod:`~deepvm_core.cloud.fleet.target`: the chosen configuration of an export (``chosen``,
  else ``deepvm[0]``) as a :class:`FleetPlan`; the plan id (tag ``deepvm:plan``) is derived from
  the export file's SHA-256.
* :mod:`~deepvm_core.cloud.fleet.requests`: the two ``CreateFleet`` bodies (spot workers;
  anchor or memory nodes), checked against botocore's service model.
* :mod:`~deepvm_core.cloud.fleet.bundle`: the files: the bodies, ``launch.txt``, and
  :func:`build_bundle` (pure: the dashboard's "Launch on AWS" panel uses it) with
  :func:`write_bundle` and :meth:`FleetBundle.zip_bytes`.
* :mod:`~deepvm_core.cloud.fleet.ec2`: the EC2 client (region, profile,
  ``AWS_ENDPOINT_URL_EC2``, retries on throttling, one-line errors without credentials).
* :mod:`~deepvm_core.cloud.fleet.launch`: :func:`prepare` (checks and ``DryRun``),
  :func:`launch` (spot workers, then the on-demand part in their AZ, counts checked) and
  :func:`rollback`.
* :mod:`~deepvm_core.cloud.fleet.manage`: the plan's instances by tag, :func:`plan_status` and
  :func:`teardown`.
* :mod:`~deepvm_core.cloud.fleet.zones`: the planned zone IDs and the default spot price cap
  (PW minus the on-demand part) of an export; :mod:`~deepvm_core.cloud.fleet.placement`: the
  zone IDs resolved to the account's zone names (``DescribeAvailabilityZones``) and pinned.
* :mod:`~deepvm_core.cloud.fleet.errors`: exceptions and exit codes.
"""

from deepvm_core.cloud.fleet.bundle import FleetBundle, build_bundle, launch_text, write_bundle
from deepvm_core.cloud.fleet.ec2 import AwsSettings, Ec2
from deepvm_core.cloud.fleet.errors import (
    AwsCallError,
    FleetInputError,
    LaunchFailed,
    RollbackReport,
    TeardownIncomplete,
)
from deepvm_core.cloud.fleet.launch import LaunchResult, Preflight, launch, prepare, rollback
from deepvm_core.cloud.fleet.manage import (
    InstanceInfo,
    PlanStatus,
    PollSettings,
    TeardownResult,
    plan_instances,
    plan_status,
    teardown,
)
from deepvm_core.cloud.fleet.requests import (
    FleetRequests,
    RequestOptions,
    TemplateRef,
    build_requests,
    parse_subnets,
    parse_template,
    validate_request,
)
from deepvm_core.cloud.fleet.target import FleetPart, FleetPlan, plan_from_export, read_export

__all__ = [
    "AwsCallError", "AwsSettings", "Ec2", "FleetBundle", "FleetInputError", "FleetPart",
    "FleetPlan", "FleetRequests", "InstanceInfo", "LaunchFailed", "LaunchResult",
    "PlanStatus", "PollSettings", "Preflight", "RequestOptions", "RollbackReport",
    "TeardownIncomplete", "TeardownResult", "TemplateRef", "build_bundle", "build_requests",
    "launch", "launch_text", "parse_subnets", "parse_template", "plan_from_export",
    "plan_instances", "plan_status", "prepare", "read_export", "rollback", "teardown",
    "validate_request", "write_bundle",
]
