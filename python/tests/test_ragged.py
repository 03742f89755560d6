"""The per-token value type and its padding for a model."""

from __future__ import annotations

import numpy as np
import pytest

from tensorcache import Ragged


def teacher(lengths, k=3):
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    values = np.arange(offsets[-1] * k, dtype=np.int32).reshape(-1, k)
    return Ragged(values, offsets)


def test_examples_are_views_of_their_tokens():
    r = teacher([2, 0, 3])
    assert len(r) == 3 and r.lengths().tolist() == [2, 0, 3]
    assert r[0].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert r[1].shape == (0, 3)
    assert r[-1].tolist() == r[2].tolist() == [[6, 7, 8], [9, 10, 11], [12, 13, 14]]
    assert np.shares_memory(r[2], r.values)
    assert [len(x) for x in r] == [2, 0, 3]
    with pytest.raises(IndexError, match="example 3 of 3"):
        r[3]


def test_padding_puts_each_example_first_and_masks_the_rest():
    r = teacher([2, 0, 3])
    padded, mask = r.padded(pad=-1)
    assert padded.shape == (3, 3, 3) and padded.dtype == np.int32
    assert mask.tolist() == [[True, True, False], [False, False, False], [True, True, True]]
    assert padded[0, :2].tolist() == r[0].tolist() and padded[0, 2].tolist() == [-1, -1, -1]
    assert (padded[1] == -1).all()
    assert padded[2].tolist() == r[2].tolist()
    assert r.padded(length=5)[0].shape == (3, 5, 3)
    with pytest.raises(ValueError, match="3 tokens, over the padded length 2"):
        r.padded(length=2)


def test_inconsistent_offsets_are_refused_naming_them():
    values = np.zeros((4, 2), dtype=np.float32)
    with pytest.raises(ValueError, match="expected 0 first"):
        Ragged(values, [1, 4])
    with pytest.raises(ValueError, match="never falling"):
        Ragged(values, [0, 3, 2, 4])
    with pytest.raises(ValueError, match=r"offsets ending at 3, expected \[3, ...\]"):
        Ragged(values, [0, 3])
    with pytest.raises(ValueError, match="expected \\[n \\+ 1\\]"):
        Ragged(values, [])


def test_torch_batches_are_padded_tensors_with_a_mask():
    torch = pytest.importorskip("torch")
    from tensorcache.pytorch import pad_ragged

    r = Ragged(np.array([[0.5], [-1.0], [2.0]], dtype=np.float32), [0, 1, 3])
    batch = pad_ragged(r, pad=0.0)
    assert batch["values"].shape == (2, 2, 1) and batch["values"].dtype == torch.float32
    assert batch["mask"].tolist() == [[True, False], [True, True]]
    assert batch["values"][1, :, 0].tolist() == [-1.0, 2.0]


def test_take_gives_a_batch_of_examples_in_the_order_asked():
    r = Ragged(np.arange(12, dtype=np.float32).reshape(6, 2), [0, 1, 1, 4, 6])
    b = r.take([3, 0, 1, 3])
    assert b.lengths().tolist() == [2, 1, 0, 2]
    assert b[0].tolist() == [[8, 9], [10, 11]] and b[1].tolist() == [[0, 1]] and len(b[2]) == 0
    assert r.take([]).lengths().tolist() == []
    with pytest.raises(IndexError, match="of 4 examples"):
        r.take([4])
