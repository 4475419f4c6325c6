"""Shared constants and unit conversions, one home for each.

Nothing here depends on the rest of the library.
"""

from typing import Final

#: Seconds per hour: prices are USD/hour, times are seconds or hours by their names.
SECONDS_PER_HOUR: Final = 3600.0
#: Seconds per day (trace lengths are given in days).
SECONDS_PER_DAY: Final = 86_400.0
#: Hours per day (durations past two days are written in days).
HOURS_PER_DAY: Final = 24.0
#: Minutes per hour (the CLI and the dashboard take restart and wait times in minutes).
MINUTES_PER_HOUR: Final = 60.0
#: Bytes per GB (10^9 bytes: GPU memory and checkpoints are given in GB).
BYTES_PER_GB: Final = 1e9
#: GB (10^9 bytes) per GiB (2^30 bytes).
GB_PER_GIB: Final = 1.073741824
#: A configuration (or an on-demand part) is affordable when its price <= PW + this, USD per
#: hour: absorbs the float noise of sums of prices.
PRICE_TOLERANCE_USD: Final = 1e-9
