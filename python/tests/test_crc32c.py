"""CRC32C in numpy lanes equals the byte-at-a-time CRC on inputs around every boundary."""

from __future__ import annotations

import random

import pytest

from tensorcache import crc32c as c


def test_the_check_value_of_the_standard():
    assert c.crc32c(b"123456789") == 0xE3069283
    assert c.crc32c(b"") == 0


@pytest.mark.parametrize("lanes,lane_bytes", [(4, 16), (64, 8), (7, 33)])
def test_lanes_joined_equal_the_plain_loop(monkeypatch, lanes, lane_bytes):
    monkeypatch.setattr(c, "_LANES", lanes)
    monkeypatch.setattr(c, "_LANE_BYTES", lane_bytes)
    monkeypatch.setattr(c, "_SMALL", 1)
    rng = random.Random(lanes * lane_bytes)
    block = lanes * lane_bytes
    for n in [1, block - 1, block, block + 1, 3 * block, 3 * block + 5, 7 * block + block - 1]:
        data = bytes(rng.randrange(256) for _ in range(n))
        assert c.crc32c(data) == c._register(0xFFFFFFFF, data) ^ 0xFFFFFFFF, n
        assert c.crc32c(memoryview(bytearray(data))) == c.crc32c(data)
