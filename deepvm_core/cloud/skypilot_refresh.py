"""Fresh prices without AWS credentials: catalogs rebuilt from SkyPilot's public AWS catalog.

What ``deepvm catalog import FILE_OR_URL --format skypilot`` does (:mod:`deepvm_core.cloud.
skypilot`), from the public address (``$DEEPVM_SKYPILOT_CATALOG_URL``, else
:data:`DEFAULT_SKYPILOT_CATALOG_URL`), for the dashboard's Live prices page:

1. download ``vms.csv`` (bounded in time and size; ``progress`` hears of every chunk);
2. build one catalog per region the way the bundled ``aws-<region>-2025-h1`` were built: base
   catalog :data:`~deepvm_core.catalog.store.PAPER_CATALOG` (measured eFLOPS and scaling fits,
   quotas, the saturation table), spot price = the cheapest zone, ``prices_date`` = the day of
   the download (SkyPilot refreshes the file every few hours); interruption buckets carried over
   from the bundled catalog of the same region (the Spot Instance Advisor excerpt of mid-2025),
   said in the notes;
3. write them to the fetched-catalogs folder, all or nothing.

Any failure is a :class:`~deepvm_core.errors.FetchError` naming the address and saying that
nothing was written. No credentials are read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from deepvm_core import downloads
from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.catalog.store import PAPER_CATALOG, load_catalog
from deepvm_core.cloud.aws import FetchResult, RegionFetch
from deepvm_core.cloud.aws.fetch import write_fetched_catalogs
from deepvm_core.cloud.aws.inputs import target_paths, validate_regions
from deepvm_core.cloud.skypilot import build_catalog, parse_vms_csv
from deepvm_core.errors import DeepVMError, FetchError
from deepvm_core.market.pool_prices import bundled_region_catalog

#: The environment variable that overrides :data:`DEFAULT_SKYPILOT_CATALOG_URL`.
SKYPILOT_CATALOG_URL_VARIABLE: Final = "DEEPVM_SKYPILOT_CATALOG_URL"
#: SkyPilot's public AWS catalog (schema v7), no credentials needed.
DEFAULT_SKYPILOT_CATALOG_URL: Final = ("https://raw.githubusercontent.com/skypilot-org/"
                                       "skypilot-catalog/master/catalogs/v7/aws/vms.csv")
#: Seconds to wait for the server (connect and each read).
DEFAULT_TIMEOUT_S: Final = 20.0
#: The largest file read, bytes (the whole AWS vms.csv is a few MB).
MAX_BYTES: Final = 64 * 2**20

#: ``progress(step, done, total)``: what is being done, and how far (``total`` 0: unknown).
Progress = Callable[[str, int, int], None]


def _quiet(step: str, done: int, total: int) -> None:
    del step, done, total


def skypilot_catalog_url() -> str:
    """``$DEEPVM_SKYPILOT_CATALOG_URL``, else :data:`DEFAULT_SKYPILOT_CATALOG_URL`."""
    return os.environ.get(SKYPILOT_CATALOG_URL_VARIABLE) or DEFAULT_SKYPILOT_CATALOG_URL


def download(url: str, *, timeout_s: float = DEFAULT_TIMEOUT_S,
             progress: Progress = _quiet) -> bytes:
    """The bytes at ``url`` (``http(s)://``), at most :data:`MAX_BYTES`, read in chunks with
    progress (:func:`deepvm_core.downloads.download`).

    Raises:
        FetchError: a bad address, no answer, an HTTP error, or a file over :data:`MAX_BYTES`
            (kinds ``other``, ``unreachable``, ``timeout``, ``server_error``, ``malformed``).
    """
    def heard(size: int, total: int) -> None:
        progress("downloading SkyPilot's catalog" if size == 0 else
                 f"downloading SkyPilot's catalog: {size / 2**20:.1f} MiB", size, total)

    return downloads.download(url, timeout_s=timeout_s, max_bytes=MAX_BYTES,
                              too_large=f"{MAX_BYTES // 2**20} MiB", progress=heard)


def bundled_buckets(region: str) -> tuple[dict[str, int], str | None]:
    """Interruption buckets by GPU type of the newest bundled catalog of ``region`` (AWS
    catalogs only), and its name; ``({}, None)`` when none is bundled."""
    best = bundled_region_catalog(region)
    if best is None:
        return {}, None
    return ({g.name: g.interruption_bucket for g in best.gpu_types
             if isinstance(g, GpuType) and g.interruption_bucket is not None}, best.name)


@dataclass(frozen=True)
class RefreshSettings:
    """What to refresh.

    Attributes:
        regions: AWS regions, one catalog each.
        url: the address of ``vms.csv`` (default :func:`skypilot_catalog_url`).
        out: where to write (default: the fetched-catalogs folder).
        timeout_s: seconds to wait for the server.
    """

    regions: tuple[str, ...]
    url: str | None = None
    out: str | os.PathLike[str] | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S


def refresh_catalogs(settings: RefreshSettings, *, now: datetime | None = None,
                     progress: Progress = _quiet) -> FetchResult:
    """Download SkyPilot's catalog, build and write one catalog per region (module docstring);
    the result has the shape of a live fetch (:class:`~deepvm_core.cloud.aws.FetchResult`).

    Raises:
        DeepVMError: a bad region (:class:`~deepvm_core.errors.InputError`), a failed download
            or a file that is not SkyPilot's (:class:`~deepvm_core.errors.FetchError`); nothing
            is written then.
    """
    regions = validate_regions(settings.regions)
    url = settings.url or skypilot_catalog_url()
    stamp = (now or datetime.now(UTC)).astimezone(UTC)
    body = download(url, timeout_s=settings.timeout_s, progress=progress)
    steps = len(regions) + 2
    progress("reading the rows", 1, steps)
    try:
        rows = parse_vms_csv(body.decode("utf-8"), url)
    except UnicodeDecodeError:
        raise FetchError(f"{url}: not UTF-8 text. Nothing was written.",
                         kind="malformed") from None
    except DeepVMError as exc:
        raise FetchError(f"{exc}. Nothing was written.", kind="malformed") from None
    base = load_catalog(PAPER_CATALOG)
    date = stamp.strftime("%Y-%m-%d")
    catalogs: list[Catalog] = []
    notes: list[tuple[str, ...]] = []
    for i, region in enumerate(regions):
        progress(f"building the catalog of {region}", 2 + i, steps)
        buckets, bucket_source = bundled_buckets(region)
        try:
            catalog, region_notes = build_catalog(
                rows, region, date=date, base=base,
                source=f"SkyPilot's public AWS catalog ({url}), downloaded {date}",
                buckets=buckets if bucket_source else None)
        except DeepVMError as exc:
            raise FetchError(f"{exc}. Nothing was written.", kind="no_offers") from None
        extra = ((f"interruption buckets carried over from the bundled catalog "
                  f"{bucket_source} (Spot Instance Advisor, mid-2025)",) if bucket_source
                 else ())
        catalogs.append(catalog)
        notes.append((*region_notes, *extra))
    progress("writing the catalogs", steps, steps)
    paths: Sequence[Path] = write_fetched_catalogs(
        catalogs, target_paths(settings.out, [c.name for c in catalogs]))
    return FetchResult(
        regions=tuple(RegionFetch(c.region, c, p, (), n)
                      for c, p, n in zip(catalogs, paths, notes, strict=True)),
        fetched_at=stamp.strftime("%Y-%m-%dT%H:%M:%SZ"), base_catalog=base.name,
        spot_aggregate="min")
