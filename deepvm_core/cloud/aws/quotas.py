"""The account's own EC2 vCPU quotas, from the Service Quotas API, as a catalog's quota rows.

**Which AWS data.** Service Quotas ``ListServiceQuotas`` for service code ``ec2`` in the
catalog's region (every page): the quotas applied to the account. AWS says a quota whose applied
value is not available is left out of that answer; for a group missing from it,
``ListAWSDefaultServiceQuotas`` (AWS's default value) is read and a note says so. Both need the
IAM permission ``servicequotas:ListServiceQuotas`` / ``servicequotas:ListAWSDefaultServiceQuotas``.

The groups, their families and the rows they give are
:mod:`deepvm_core.cloud.aws.quota_groups`.

Errors become a :class:`~deepvm_core.errors.FetchError` through
:class:`~deepvm_core.cloud.aws.client.Caller` (no credentials, access denied, throttling, an
unreachable endpoint, a malformed answer): one line naming the operation, the region and the
cause, credentials redacted. No Streamlit here, and boto3 is imported only when a session is
created.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Unpack, cast

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.store import load_catalog
from deepvm_core.cloud.aws.assemble import fetched_catalog_name
from deepvm_core.cloud.aws.client import (
    AwsOptions,
    Caller,
    MalformedAnswer,
    aws_errors,
    connect,
    create_session,
)
from deepvm_core.cloud.aws.fetch import fetch_catalogs, refuse_bundled, write_fetched_catalogs
from deepvm_core.cloud.aws.fetch_result import FetchResult, RegionFetch
from deepvm_core.cloud.aws.inputs import target_paths, validate_regions
from deepvm_core.cloud.aws.quota_groups import (
    QUOTA_GROUPS,
    GroupValues,
    account_quotas,
    group_of,
    group_values,
)
from deepvm_core.errors import FetchError, InputError

#: The Service Quotas service code of EC2.
SERVICE_CODE = "ec2"
#: The operation that reads the account's applied quotas.
LIST_OPERATION = "ListServiceQuotas"
#: The operation that reads AWS's default values (for groups the first one left out).
DEFAULTS_OPERATION = "ListAWSDefaultServiceQuotas"
_IAM_ACTIONS = {LIST_OPERATION: "servicequotas:ListServiceQuotas",
                DEFAULTS_OPERATION: "servicequotas:ListAWSDefaultServiceQuotas"}
_PAGE_SIZE = 100


# ----------------------------------------------------------------------------- AWS calls


def list_quotas(client: Any, operation: str) -> list[dict[str, Any]]:
    """Every ``Quotas`` item of ``operation`` (``ListServiceQuotas`` or
    ``ListAWSDefaultServiceQuotas``) for service ``ec2``, all pages. Raises botocore's
    exceptions, and :class:`MalformedAnswer` for a page without a ``Quotas`` list."""
    method = {LIST_OPERATION: "list_service_quotas",
              DEFAULTS_OPERATION: "list_aws_default_service_quotas"}[operation]
    items: list[dict[str, Any]] = []
    pages = client.get_paginator(method).paginate(
        ServiceCode=SERVICE_CODE, PaginationConfig={"PageSize": _PAGE_SIZE})
    for page in pages:
        found = page.get("Quotas")
        if not isinstance(found, list):
            raise MalformedAnswer(f"{operation} answer without a Quotas list")
        items.extend(found)
    return items


def _label(operation: str) -> str:
    return f"Service Quotas {operation} (service {SERVICE_CODE})"


def _quota_error(caller: Caller, exc: BaseException, operation: str, region: str) -> FetchError:
    """:meth:`Caller.fail`'s error, worded for Service Quotas: the IAM action named in full, and
    no advice about instance types."""
    try:
        caller.fail(exc, operation, region, _label(operation))
    except FetchError as error:
        message = str(error).replace(f"IAM permission {operation}",
                                     f"IAM permission {_IAM_ACTIONS[operation]}")
        message = message.replace("; try again later or with fewer instance types",
                                  "; try again later")
        return FetchError(message, operation=error.operation, region=error.region,
                          kind=error.kind)
    raise AssertionError("Caller.fail returned")  # pragma: no cover


@dataclass(frozen=True)
class AccountQuotas:
    """The account's EC2 vCPU quotas in one region.

    Attributes:
        region: the AWS region.
        values: per group label, its values (:func:`group_values`).
        defaults: labels of the groups whose values are AWS's defaults (the applied value was
            not in ``ListServiceQuotas``).
        read_at: UTC time of the read.
    """

    region: str
    values: Mapping[str, GroupValues]
    defaults: tuple[str, ...]
    read_at: datetime


def read_account_quotas(
    region: str,
    *,
    families: Iterable[str] | None = None,
    session: Any = None,
    now: datetime | None = None,
    **options: Unpack[AwsOptions],
) -> AccountQuotas:
    """The account's EC2 vCPU quotas in ``region`` (``ListServiceQuotas``, every page). For a
    group of ``families`` (default: every group of :data:`QUOTA_GROUPS`) the answer left out,
    AWS's default (``ListAWSDefaultServiceQuotas``, read only then). ``options``: how to reach
    AWS (:class:`~deepvm_core.cloud.aws.client.AwsOptions`; ``profile`` unused with
    ``session``).

    Raises:
        FetchError: a call failed (no credentials, access denied, throttled after
            ``max_attempts`` attempts, unreachable, malformed): one line naming the operation,
            the region and the cause.
        InputError: a bad region.
    """
    (region,) = validate_regions([region])
    connection = connect(session, **options)
    operation = LIST_OPERATION
    try:
        client = connection.client("service-quotas", region)
        values = group_values(list_quotas(client, LIST_OPERATION))
        wanted = ({g.label for g in QUOTA_GROUPS} if families is None else
                  {g.label for g in map(group_of, families) if g is not None})
        missing = sorted(wanted - set(values))
        if missing:
            operation = DEFAULTS_OPERATION
            defaults = group_values(list_quotas(client, DEFAULTS_OPERATION))
            values.update({label: dataclasses.replace(
                defaults[label], notes=(*defaults[label].notes,
                                        f"{label}: AWS's default value (the account's applied "
                                        "value was not in ListServiceQuotas)"))
                for label in missing if label in defaults})
            missing = [label for label in missing if label in defaults]
    except aws_errors() as exc:
        raise _quota_error(connection.caller, exc, operation, region) from None
    return AccountQuotas(region, values, tuple(missing),
                         (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0))


def with_account_quotas(catalog: Catalog, quotas: AccountQuotas, *,
                        name: str | None = None) -> tuple[Catalog, tuple[str, ...]]:
    """``catalog`` with the account's quota rows (:func:`account_quotas`), ``source`` saying
    where they were read, and renamed to ``name`` when given; and notes.

    Raises:
        FetchError: the account answered no EC2 vCPU quota group at all (kind ``malformed``).
    """
    if not quotas.values:
        raise FetchError(f"{_label(LIST_OPERATION)} for region {quotas.region} answered no EC2 "
                         "vCPU quota (none of 'Running On-Demand ... instances' or 'All ... "
                         "Spot Instance Requests'). Nothing was written.",
                         operation=LIST_OPERATION, region=quotas.region, kind="malformed")
    rows, notes = account_quotas(catalog, quotas.values)
    stamp = quotas.read_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    source = (f"{catalog.source.rstrip()} Quotas: this account's own, read from the Service "
              f"Quotas API ({LIST_OPERATION}, service {SERVICE_CODE}) in {quotas.region} at "
              f"{stamp}, replacing any quotas named above; each family gets its AWS group's "
              "value (data/README.md, 'Quotas')").strip()
    if quotas.defaults:
        source += f"; AWS's default value for group {', '.join(quotas.defaults)}"
    updated = dataclasses.replace(catalog, quotas=rows, source=source + ".",
                                  name=name or catalog.name)
    return updated, (f"quotas: this account's own, read from Service Quotas in "
                     f"{quotas.region}", *notes)


# ----------------------------------------------------------------------------- entry points


def _is_base_quota_note(note: str) -> bool:
    return note.startswith("quotas are the base catalog's")


def fetch_catalogs_with_quotas(
    regions: Sequence[str] | str,
    *,
    out: str | os.PathLike[str] | None = None,
    write: bool = True,
    now: datetime | None = None,
    **fetch_options: Any,
) -> FetchResult:
    """:func:`~deepvm_core.cloud.aws.fetch.fetch_catalogs` (same arguments) with each region's
    quotas read from the account (:func:`read_account_quotas`, through the same
    :class:`~deepvm_core.cloud.aws.client.AwsOptions`) instead of the base catalog's.

    The quotas are read after the prices (the fetch checks every argument first); the catalogs
    are written (all or nothing) only when every region's specs, prices and quotas were read.

    Raises:
        FetchError, InputError: as :func:`fetch_catalogs` and :func:`read_account_quotas`.
    """
    region_list = validate_regions([regions] if isinstance(regions, str) else regions)
    fetched_at = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    targets = (target_paths(out, [fetched_catalog_name(r, fetched_at) for r in region_list])
               if write else [])
    refuse_bundled(targets)  # before any request
    result = fetch_catalogs(region_list, out=out, write=False, now=fetched_at, **fetch_options)
    options = cast(AwsOptions, {k: v for k, v in fetch_options.items()
                                if k in AwsOptions.__annotations__})
    session = create_session(options.get("profile"))
    account = [read_account_quotas(r, session=session, now=fetched_at, **options)
               for r in region_list]
    regions_out: list[RegionFetch] = []
    for fetched, quotas in zip(result.regions, account, strict=True):
        catalog, notes = with_account_quotas(fetched.catalog, quotas)
        regions_out.append(dataclasses.replace(
            fetched, catalog=catalog,
            notes=(*(n for n in fetched.notes if not _is_base_quota_note(n)), *notes)))
    if write:
        paths = write_fetched_catalogs([r.catalog for r in regions_out], targets)
        regions_out = [dataclasses.replace(r, path=p)
                       for r, p in zip(regions_out, paths, strict=True)]
    return dataclasses.replace(result, regions=tuple(regions_out))


def catalog_with_account_quotas(
    catalog: Catalog | str | os.PathLike[str],
    *,
    region: str | None = None,
    out: str | os.PathLike[str] | None = None,
    write: bool = True,
    now: datetime | None = None,
    session_factory: Callable[[str | None], Any] = create_session,
    **options: Unpack[AwsOptions],
) -> tuple[Catalog, Path | None, tuple[str, ...]]:
    """An existing catalog (a :class:`Catalog`, a path or a bundled name) with the account's
    quotas of ``region`` (default: the catalog's own region), named
    ``<name>-quotas-<YYYYmmddTHHMMSSZ>`` and written to ``out`` (a ``.json`` file or a folder;
    default the per-user fetched-catalogs folder) unless ``write`` is False. Returns the
    catalog, where it was written (``None`` without ``write``) and notes. ``options``: how to
    reach AWS (:class:`~deepvm_core.cloud.aws.client.AwsOptions`), the session made by
    ``session_factory(profile)``.

    Raises:
        InputError: no region (the catalog has none and none was given), or ``out`` is the
            input file.
        FetchError: as :func:`read_account_quotas`, or a bundled target (kind ``write``).
        CatalogNotFoundError, CatalogError: the catalog is missing or invalid.
    """
    source_path = None
    if not isinstance(catalog, Catalog):
        source_path = Path(catalog)
        catalog = load_catalog(catalog)
    region = region or (catalog.region if catalog.provider == "aws" else None)
    if not region:
        raise InputError("region", region, f"catalog {catalog.name} is not an AWS catalog "
                         "with a region: give the AWS region to read quotas in (--region)")
    (region,) = validate_regions([region])
    read_at = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    name = f"{catalog.name}-quotas-{read_at:%Y%m%dT%H%M%SZ}"
    targets = target_paths(out, [name]) if write else []
    if source_path is not None and targets and source_path.is_file() and (
            targets[0].resolve() == source_path.resolve()):
        raise InputError("out", str(out), "is the input catalog; the input is never "
                         "overwritten")
    refuse_bundled(targets)
    families = sorted({t.family for t in (*catalog.gpu_types, *catalog.cpu_types)}
                      | {q.family for q in catalog.quotas})
    quotas = read_account_quotas(region, families=families, now=read_at,
                                 session=session_factory(options.get("profile")), **options)
    updated, notes = with_account_quotas(catalog, quotas, name=name)
    path = write_fetched_catalogs([updated], targets)[0] if write else None
    return updated, path, notes
