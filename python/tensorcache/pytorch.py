"""PyTorch adapters; importing this module imports torch (``import tensorcache`` does not)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Iterator, Mapping, Optional, Sequence, Union

import numpy as np
import torch
from torch.utils.data import IterableDataset

if TYPE_CHECKING:
    from .client import TensorCacheClient
    from .ragged import Ragged
    from .session import Session


def as_tensor(values: np.ndarray, dtype: str) -> torch.Tensor:
    """The tensor of a field's values of dtype name ``dtype`` (no copy): F32, F16, I32 and I64 as
    float32, float16, int32 and int64 tensors, BF16 (its 16-bit patterns) as a bfloat16 tensor."""
    if dtype == "BF16":
        return torch.from_numpy(values.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(values)


def _tensors(values: Mapping[str, np.ndarray], dtypes: Mapping[str, str]) -> Dict[str, torch.Tensor]:
    return {name: as_tensor(v, dtypes[name]) for name, v in values.items()}


class SessionDataset(IterableDataset):
    """A rank's session as a PyTorch ``IterableDataset``: each item is one step, a dict of tensors
    ``{"step", "epoch", "indices", <field>...}`` (values shared with the arrays read from the
    socket, no copy), each field's of its dtype (:func:`as_tensor`: BF16 fields as bfloat16). Use
    it with ``DataLoader(dataset, batch_size=None)``: a step is already a batch. ``steps`` bounds
    it (a session is endless); resume the session before iterating."""

    def __init__(self, session: "Session", steps: Optional[int] = None) -> None:
        super().__init__()
        self.session = session
        self.steps = steps

    def __iter__(self) -> Iterator[Dict[str, torch.Tensor]]:
        served = 0
        dtypes = {f.name: f.dtype for f in self.session.info.fields}
        for s in self.session:
            if self.steps is not None and served >= self.steps:
                return
            item = {
                "step": torch.tensor(s.step),
                "epoch": torch.tensor(s.epoch),
                "indices": torch.from_numpy(s.indices),
            }
            item.update(_tensors(s.values, dtypes))
            yield item
            served += 1


def ref_logps(
    client: "TensorCacheClient",
    cache: str,
    rows: Union[Sequence[int], np.ndarray, torch.Tensor],
    chosen: str = "chosen_logp",
    rejected: str = "rejected_logp",
) -> Dict[str, torch.Tensor]:
    """TRL's reference columns for a batch of data set rows: ``{"ref_chosen_logps",
    "ref_rejected_logps"}`` as tensors in row order, from the cache's ``chosen`` and ``rejected``
    fields (what ``DPOTrainer`` computes with ``precompute_ref_log_probs``): float32 for F32
    fields, of the field's dtype otherwise (:func:`as_tensor`)."""
    if isinstance(rows, torch.Tensor):
        rows = rows.cpu().numpy()
    values = client.lookup(cache, rows)
    for field in (chosen, rejected):
        if field not in values:
            raise KeyError(f"cache {cache!r} has no field {field!r}, it has {sorted(values)}")
    dtypes = {f.name: f.dtype for f in client.describe(cache).fields}
    return {
        "ref_chosen_logps": as_tensor(values[chosen], dtypes[chosen]),
        "ref_rejected_logps": as_tensor(values[rejected], dtypes[rejected]),
    }


def pad_ragged(values: "Ragged", pad: Union[int, float] = 0, length: Optional[int] = None,
               dtype: Optional[str] = None) -> Dict[str, torch.Tensor]:
    """A batch of a per-token field as tensors for a model: ``{"values": [B, T, ...shape],
    "mask": [B, T] bool}``, each example's tokens first and ``pad`` after them (:meth:`Ragged.padded
    <tensorcache.ragged.Ragged.padded>`); ``dtype``, the field's dtype name, turns BF16 patterns into
    bfloat16 (:func:`as_tensor`)."""
    padded, mask = values.padded(pad, length)
    tensor = as_tensor(padded, dtype) if dtype is not None else torch.from_numpy(padded)
    return {"values": tensor, "mask": torch.from_numpy(mask)}
