"""Live AWS catalogs: instance specs and prices fetched from EC2 and the AWS Price List API.

No Streamlit here, and nothing connects at import time. One module per job:

1. :mod:`deepvm_core.cloud.aws.client`: sessions, retries and what every call shares; every
   botocore failure becomes a :class:`~deepvm_core.errors.FetchError` that names the operation
   and the region, with credentials redacted.
2. One module per source of data, each with its call and its pure parsers:
   :mod:`~deepvm_core.cloud.aws.instance_types` (EC2 ``DescribeInstanceTypes``: specs, network
   levels, quota families), :mod:`~deepvm_core.cloud.aws.spot_prices` (EC2
   ``DescribeSpotPriceHistory``: spot prices per zone), :mod:`~deepvm_core.cloud.aws.pricing`
   (Price List ``GetProducts``: on-demand prices) and
   :mod:`~deepvm_core.cloud.aws.spot_advisor` (the Spot Instance Advisor's interruption
   buckets, over plain HTTP(S)).
3. :mod:`deepvm_core.cloud.aws.assemble`: our catalog format, with eFLOPS, scaling fits, quotas and
   the saturation table carried over from a base catalog, validated.
4. :mod:`deepvm_core.cloud.aws.fetch`: :func:`fetch_catalogs` runs them for one or more regions
   and writes the catalogs atomically, all or nothing; it returns a
   :mod:`~deepvm_core.cloud.aws.fetch_result`.
5. :mod:`deepvm_core.cloud.aws.inputs`: what a fetch is asked for (regions, instance types,
   base catalog) and where it writes, checked before any network call.
6. :mod:`deepvm_core.cloud.aws.quotas`: the account's own EC2 vCPU quotas (Service Quotas
   ``ListServiceQuotas``) as a catalog's quota rows (``deepvm fetch --quotas``, ``deepvm catalog
   quotas``); which AWS quota group answers for which family is
   :mod:`deepvm_core.cloud.aws.quota_groups`.

The names below are the package's entry points, re-exported from those modules.
"""

from deepvm_core.cloud.aws.client import (
    DEFAULT_MAX_ATTEMPTS,
    sanitize_message,
)
from deepvm_core.cloud.aws.fetch import (
    DEFAULT_BASE_CATALOG,
    fetch_catalogs,
)
from deepvm_core.cloud.aws.fetch_result import FetchResult, RegionFetch
from deepvm_core.cloud.aws.inputs import validate_instance_types, validate_regions
from deepvm_core.cloud.aws.instance_types import InstanceSpec
from deepvm_core.cloud.aws.pricing import DEFAULT_PRICING_REGION, PRICING_REGIONS
from deepvm_core.cloud.aws.spot_advisor import read_spot_advisor
from deepvm_core.cloud.aws.spot_prices import (
    DEFAULT_SPOT_WINDOW_HOURS,
    SPOT_AGGREGATES,
    SpotAggregate,
)
from deepvm_core.errors import FetchError

__all__ = [
    "DEFAULT_BASE_CATALOG",
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_PRICING_REGION",
    "DEFAULT_SPOT_WINDOW_HOURS",
    "PRICING_REGIONS",
    "SPOT_AGGREGATES",
    "FetchError",
    "FetchResult",
    "InstanceSpec",
    "RegionFetch",
    "SpotAggregate",
    "fetch_catalogs",
    "read_spot_advisor",
    "sanitize_message",
    "validate_instance_types",
    "validate_regions",
]
