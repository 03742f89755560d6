"""TensorCache's Python client: cached per-example tensors as numpy arrays.

>>> from tensorcache import TensorCacheClient
>>> with TensorCacheClient(["10.0.0.5:7400", "10.0.0.6:7400"]) as client:
...     values = client.lookup("dpo-ref-...", [7, 42, 1999])
...     values["chosen_logp"]            # numpy array of shape [3]

Each field's values come in its dtype (``Field.numpy_dtype``): F32, F16, I32 and I64 as float32,
float16, int32 and int64 arrays; BF16 as its 16-bit patterns (``uint16``, the high half of a
float32), which :func:`bf16_to_float32` turns into float32.

Ports that need credentials take a token and TLS files (see :func:`tls_context`):

>>> client = TensorCacheClient("node-1:7400", token=open("lookup.token").read().strip(),
...                            tls=("nodes-ca.pem", "trainer.pem", "trainer.key"))
"""

from typing import Union

import numpy as np

from .client import TensorCacheClient, tls_context
from .session import Session, Step
from .export import Export, ExportError, load_export
from .errors import BadRequest, LookupFailed, ProtocolError, TensorCacheError, Unauthorized, Unavailable
from .ragged import Ragged
from .wire import CacheInfo, Field

__all__ = [
    "TensorCacheClient",
    "Session",
    "Step",
    "CacheInfo",
    "Field",
    "Ragged",
    "TensorCacheError",
    "BadRequest",
    "LookupFailed",
    "ProtocolError",
    "Unavailable",
    "Unauthorized",
    "bf16_to_float32",
    "tls_context",
    "load_export",
    "Export",
    "ExportError",
]


def bf16_to_float32(bits: Union[np.ndarray, "np.typing.ArrayLike"]) -> np.ndarray:
    """The float32 values of BF16 fields given as their 16-bit patterns, as :meth:`lookup
    <TensorCacheClient.lookup>` and session steps give them (``uint16``): exact, since BF16 is the
    high half of a float32. ``bf16_to_float32(np.uint16(0x3f80))`` is 1.0."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
