"""Live AWS catalogs: instance specs and prices fetched from EC2 and the AWS Price List API.

No Streamlit here, and nothing connects at import time. Five modules, one job each:

1. :mod:`deepvm_core.cloud.aws.client`: sessions, retries and the raw paginated calls
   (``DescribeInstanceTypes``, ``DescribeSpotPriceHistory``, ``GetProducts``); every botocore
   failure becomes a :class:`~deepvm_core.errors.FetchError` that names the operation and the
   region, with credentials redacted.
2. :mod:`deepvm_core.cloud.aws.parse`: pure parsers of the answers (network levels, quota families,
   instance specs, spot prices per zone, on-demand prices); which AWS data is read and how.
3. :mod:`deepvm_core.cloud.aws.assemble`: our catalog format, with eFLOPS, scaling fits, quotas and
   the saturation table carried over from a base catalog, validated.
4. :mod:`deepvm_core.cloud.aws.fetch`: :func:`fetch_catalogs` runs the three for one or more regions
   (with ``spot_advisor=True``, also the Spot Instance Advisor's interruption buckets:
   :func:`read_spot_advisor`) and writes the catalogs atomically, all or nothing.
5. :mod:`deepvm_core.cloud.aws.inputs`: what a fetch is asked for (regions, instance types,
   base catalog) and where it writes, checked before any network call.

The names below are the package's entry points, re-exported from those modules.
"""

from deepvm_core.cloud.aws.client import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_PRICING_REGION,
    DEFAULT_SPOT_WINDOW_HOURS,
    PRICING_REGIONS,
    sanitize_message,
)
from deepvm_core.cloud.aws.fetch import (
    DEFAULT_BASE_CATALOG,
    FetchResult,
    RegionFetch,
    fetch_catalogs,
    read_spot_advisor,
)
from deepvm_core.cloud.aws.inputs import validate_instance_types, validate_regions
from deepvm_core.cloud.aws.parse import SPOT_AGGREGATES, InstanceSpec, SpotAggregate
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
