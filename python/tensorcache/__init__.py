"""TensorCache's Python client: cached per-example tensors as numpy arrays.

>>> from tensorcache import TensorCacheClient
>>> with TensorCacheClient(["10.0.0.5:7400", "10.0.0.6:7400"]) as client:
...     values = client.lookup("dpo-ref-...", [7, 42, 1999])
...     values["chosen_logp"]            # numpy array of shape [3]
"""

from typing import Union

import numpy as np

from .client import TensorCacheClient
from .session import Session, Step
from .errors import BadRequest, LookupFailed, ProtocolError, TensorCacheError, Unavailable
from .wire import CacheInfo, Field

__all__ = [
    "TensorCacheClient",
    "Session",
    "Step",
    "CacheInfo",
    "Field",
    "TensorCacheError",
    "BadRequest",
    "LookupFailed",
    "ProtocolError",
    "Unavailable",
    "bf16_to_float32",
]


def bf16_to_float32(bits: Union[np.ndarray, "np.typing.ArrayLike"]) -> np.ndarray:
    """The float32 values of BF16 fields given as their 16-bit patterns (exact: BF16 is the high
    half of a float32)."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
