"""The numpy array types of the library, one home for each alias.

Arrays hold one entry per configuration (or per sample, per GPU type): 1-D unless a docstring
says otherwise; units are in the names of the fields that hold them.
"""

from typing import Any

import numpy as np
import numpy.typing as npt

#: Float64 array (prices USD/hour, times, rates, fractions).
FloatArray = npt.NDArray[np.float64]
#: Int64 array (counts, row indices, architecture codes of :class:`deepvm_core.model.Arch`).
IntArray = npt.NDArray[np.int64]
#: Boolean array (masks).
BoolArray = npt.NDArray[np.bool_]
#: Any signed-integer array (indices whose width numpy picks, e.g. from ``np.argsort``).
SignedArray = npt.NDArray[np.signedinteger[Any]]
