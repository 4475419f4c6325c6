"""What a fetch returns: a :class:`RegionFetch` per region (its validated catalog, where it was
written, the specs kept, the notes) in one :class:`FetchResult`
(:func:`deepvm_core.cloud.aws.fetch.fetch_catalogs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from deepvm_core.catalog import Catalog
from deepvm_core.cloud.aws.instance_types import InstanceSpec
from deepvm_core.cloud.aws.spot_prices import SpotAggregate


@dataclass(frozen=True)
class RegionFetch:
    """What one region's fetch produced.

    Attributes:
        region: the AWS region (``us-east-1``).
        catalog: the validated catalog.
        path: where it was written, or ``None`` when the fetch did not write.
        instance_specs: the specs of the types in the catalog (GPU model, count, memory too).
        notes: what the user should know: types dropped and why, mapped network values,
            GPU types that need eFLOPS, where quotas come from.
    """

    region: str
    catalog: Catalog
    path: Path | None
    instance_specs: tuple[InstanceSpec, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class FetchResult:
    """The result of :func:`fetch_catalogs`: one :class:`RegionFetch` per region, in order.

    Attributes:
        regions: per region results.
        fetched_at: UTC timestamp of the fetch (ISO 8601, ``Z``).
        base_catalog: name of the base catalog, or ``None``.
        spot_aggregate: ``min`` or ``median``.
        spot_advisor_url: where the interruption buckets were read, or ``None`` when they were
            not (every bucket is ``None`` then).
    """

    regions: tuple[RegionFetch, ...]
    fetched_at: str
    base_catalog: str | None
    spot_aggregate: SpotAggregate
    spot_advisor_url: str | None = None

    @property
    def catalog(self) -> Catalog:
        """The first region's catalog (the only one of a single-region fetch)."""
        return self.regions[0].catalog

    @property
    def path(self) -> Path | None:
        """The first region's file."""
        return self.regions[0].path

    @property
    def paths(self) -> tuple[Path, ...]:
        """Every file written."""
        return tuple(r.path for r in self.regions if r.path is not None)

    @property
    def notes(self) -> tuple[str, ...]:
        """Every region's notes, each prefixed with its region."""
        return tuple(f"{r.region}: {n}" for r in self.regions for n in r.notes)

    def catalogs_by_region(self) -> dict[str, Catalog]:
        """``{region: catalog}``, the input of
        :func:`deepvm_core.recommend.regions.compare_regions`."""
        return {r.region: r.catalog for r in self.regions}

