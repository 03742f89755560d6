"""Per-token (ragged) values: a field whose value for an example is ``[tokens, ...shape]``, with
``tokens`` varying by example, as one array of every token's values and the examples' offsets."""

from __future__ import annotations

from typing import Iterator, Sequence, Union

import numpy as np


class Ragged:
    """The values of ``n`` examples of a per-token field: ``values`` is ``[total tokens, ...shape]``
    (every example's tokens, in example order), ``offsets`` is ``[n + 1]`` int64, and example ``i``
    holds ``values[offsets[i]:offsets[i + 1]]``, which ``ragged[i]`` gives (a view, no copy).

    >>> r = Ragged(np.arange(6, dtype=np.float32).reshape(3, 2), np.array([0, 1, 3]))
    >>> len(r), r[1].shape, r.lengths().tolist()
    (2, (2, 2), [1, 2])
    """

    __slots__ = ("values", "offsets")

    def __init__(self, values: np.ndarray, offsets: Union[np.ndarray, Sequence[int]]) -> None:
        offsets = np.asarray(offsets, dtype=np.int64)
        if offsets.ndim != 1 or len(offsets) == 0:
            raise ValueError(f"offsets of shape {offsets.shape}, expected [n + 1] with n >= 0")
        if offsets[0] != 0 or np.any(np.diff(offsets) < 0):
            raise ValueError(f"offsets {offsets.tolist()[:8]}..., expected 0 first and never falling")
        if values.ndim == 0 or offsets[-1] != len(values):
            raise ValueError(
                f"values of shape {values.shape} for offsets ending at {int(offsets[-1])}, expected "
                f"[{int(offsets[-1])}, ...]")
        self.values = values
        self.offsets = offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int) -> np.ndarray:
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"example {i} of {n}")
        i %= n
        return self.values[self.offsets[i]:self.offsets[i + 1]]

    def __iter__(self) -> Iterator[np.ndarray]:
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return (f"Ragged({len(self)} examples, {len(self.values)} tokens, values "
                f"{self.values.dtype}{list(self.values.shape[1:])})")

    def lengths(self) -> np.ndarray:
        """Each example's number of tokens, ``[n]`` int64."""
        return np.diff(self.offsets)

    def take(self, indices: Union[np.ndarray, Sequence[int]]) -> "Ragged":
        """The examples ``indices``, in that order, as a new ``Ragged`` (their values copied): a
        trainer's batch out of a whole cache's values."""
        idx = np.asarray(indices, dtype=np.int64)
        n = len(self)
        if idx.ndim != 1 or (idx.size and (idx.min() < -n or idx.max() >= n)):
            raise IndexError(f"indices {idx.tolist()[:8]}... of {n} examples, expected [-{n}, {n})")
        idx = idx % n if n else idx
        starts = self.offsets[idx]
        lengths = self.offsets[idx + 1] - starts
        offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        positions = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
        return Ragged(self.values[positions], offsets)

    def padded(self, pad: Union[int, float] = 0, length: Union[int, None] = None):  # type: ignore[no-untyped-def]
        """The values as ``[n, T, ...shape]`` padded with ``pad`` after each example's tokens, and a
        ``[n, T]`` bool mask that is true at real tokens; ``T`` is the longest example unless
        ``length`` is given (an example longer than ``length`` is an error, never cut)."""
        lengths = self.lengths()
        longest = int(lengths.max()) if len(lengths) else 0
        t = longest if length is None else length
        if t < longest:
            raise ValueError(f"an example has {longest} tokens, over the padded length {t}")
        out = np.full((len(self), t) + self.values.shape[1:], pad, dtype=self.values.dtype)
        mask = np.arange(t)[None, :] < lengths[:, None]
        out[mask] = self.values  # row-major order of the mask is the examples' token order
        return out, mask
