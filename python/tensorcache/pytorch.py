"""PyTorch adapters; importing this module imports torch (``import tensorcache`` does not)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Iterator, Optional, Sequence, Union

import numpy as np
import torch
from torch.utils.data import IterableDataset

if TYPE_CHECKING:
    from .client import TensorCacheClient
    from .session import Session


class SessionDataset(IterableDataset):
    """A rank's session as a PyTorch ``IterableDataset``: each item is one step, a dict of tensors
    ``{"step", "epoch", "indices", <field>...}`` (values shared with the arrays read from the
    socket, no copy). Use it with ``DataLoader(dataset, batch_size=None)``: a step is already a
    batch. ``steps`` bounds it (a session is endless); resume the session before iterating."""

    def __init__(self, session: "Session", steps: Optional[int] = None) -> None:
        super().__init__()
        self.session = session
        self.steps = steps

    def __iter__(self) -> Iterator[Dict[str, torch.Tensor]]:
        served = 0
        for s in self.session:
            if self.steps is not None and served >= self.steps:
                return
            item = {
                "step": torch.tensor(s.step),
                "epoch": torch.tensor(s.epoch),
                "indices": torch.from_numpy(s.indices),
            }
            for name, values in s.values.items():
                item[name] = torch.from_numpy(values)
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
    "ref_rejected_logps"}`` as float32 tensors in row order, from the cache's ``chosen`` and
    ``rejected`` fields (what ``DPOTrainer`` computes with ``precompute_ref_log_probs``)."""
    if isinstance(rows, torch.Tensor):
        rows = rows.cpu().numpy()
    values = client.lookup(cache, rows)
    for field in (chosen, rejected):
        if field not in values:
            raise KeyError(f"cache {cache!r} has no field {field!r}, it has {sorted(values)}")
    return {
        "ref_chosen_logps": torch.from_numpy(values[chosen]),
        "ref_rejected_logps": torch.from_numpy(values[rejected]),
    }
