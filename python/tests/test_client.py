"""The Python client against real nodes: values, bad input, concurrency and fail-over."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from conftest import EXAMPLES, MAX_BATCH, reference
from tensorcache import BadRequest, ProtocolError, TensorCacheClient, Unavailable


@pytest.fixture(scope="module")
def ref(filled, nodes):
    return reference(filled, nodes[0].cache)


def bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint32)


def test_describe_names_the_fields(nodes):
    with TensorCacheClient(nodes[0].endpoint, timeout=60) as client:
        info = client.describe(nodes[0].cache)
    assert info.n == EXAMPLES
    assert [f.name for f in info.fields] == ["chosen_logp", "rejected_logp"]
    assert all(f.dtype == "F32" and f.shape == () for f in info.fields)


@pytest.mark.parametrize("size", [1, 2, 31, 256, 1000, MAX_BATCH])
def test_random_batches_are_bit_equal_to_the_segments(nodes, ref, size):
    rng = np.random.default_rng(size)
    cache = nodes[0].cache
    with TensorCacheClient([n.endpoint for n in nodes], timeout=60) as client:
        for _ in range(3):
            indices = rng.integers(0, EXAMPLES, size)
            values = client.lookup(cache, indices)
            for name, expected in ref.items():
                assert values[name].shape == (size,)
                assert np.array_equal(bits(values[name]), bits(expected[indices])), name


def test_lookup_into_fills_the_callers_arrays(nodes, ref):
    cache = nodes[0].cache
    indices = np.array([2999, 0, 512, 511, 7, 7])
    out = {name: np.full(10, np.nan, dtype=np.float32) for name in ref}
    with TensorCacheClient(nodes[1].endpoint, timeout=60) as client:
        client.lookup_into(cache, indices, out)
    for name, expected in ref.items():
        assert np.array_equal(bits(out[name][:6]), bits(expected[indices]))
        assert np.isnan(out[name][6:]).all(), "nothing written past the batch"


def test_bad_input_is_named_and_the_connection_stays_usable(nodes, ref):
    cache = nodes[0].cache
    bad = [
        (cache, [1, EXAMPLES], f"index {EXAMPLES} out of range [0, {EXAMPLES}) for cache '{cache}'"),
        (cache, [1, -1], f"index -1 out of range [0, {EXAMPLES}) for cache '{cache}'"),
        (cache, [0] * (MAX_BATCH + 1), f"batch of {MAX_BATCH + 1} indices for cache '{cache}' is over the maximum {MAX_BATCH}"),
        (cache, [], f"empty batch for cache '{cache}', expected 1..{MAX_BATCH} indices"),
        ("no-such-cache", [0], "unknown cache 'no-such-cache', expected one of "),
    ]
    with TensorCacheClient(nodes[0].endpoint, timeout=60) as client:
        for name, indices, message in bad:
            with pytest.raises(BadRequest) as e:
                client.lookup(name, indices)
            assert str(e.value).startswith(message), str(e.value)
            assert isinstance(e.value, ValueError)
        with pytest.raises(BadRequest, match="expected one dimension"):
            client.lookup(cache, [[1, 2]])
        with pytest.raises(BadRequest, match="expected integers"):
            client.lookup(cache, [1.5])
        short = {"chosen_logp": np.empty(3, np.float32), "rejected_logp": np.empty(2, np.float32)}
        with pytest.raises(BadRequest, match="output array of field 'rejected_logp'"):
            client.lookup_into(cache, [1, 2, 3], short)
        wrong = {"chosen_logp": np.empty(3, np.float64), "rejected_logp": np.empty(3, np.float32)}
        with pytest.raises(BadRequest, match="expected a writable C-contiguous float32"):
            client.lookup_into(cache, [1, 2, 3], wrong)
        values = client.lookup(cache, [5, 6, 7])  # still in step after every refusal
        assert np.array_equal(bits(values["chosen_logp"]), bits(ref["chosen_logp"][[5, 6, 7]]))


def test_another_protocol_version_is_refused(nodes):
    import socket
    import struct

    host, port = nodes[0].endpoint.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as s:
        body = bytes((9, 1)) + struct.pack("<H", 1) + b"x"
        s.sendall(struct.pack("<i", len(body)) + body)
        from tensorcache import wire

        with pytest.raises(ProtocolError, match="protocol version 9, expected 1"):
            wire.ok_body(wire.Reader(s).frame(), "node")


def test_concurrent_lookups_share_the_pool(nodes, ref):
    cache = nodes[0].cache
    errors = []
    with TensorCacheClient([n.endpoint for n in nodes], timeout=60) as client:

        def work(seed: int) -> None:
            rng = np.random.default_rng(100 + seed)
            try:
                for _ in range(100):
                    indices = rng.integers(0, EXAMPLES, 32)
                    values = client.lookup(cache, indices)
                    assert np.array_equal(bits(values["rejected_logp"]), bits(ref["rejected_logp"][indices]))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors


def test_no_endpoint_is_unavailable():
    from conftest import free_port

    with TensorCacheClient(f"127.0.0.1:{free_port()}", timeout=5) as client:
        with pytest.raises(Unavailable, match="failed on every endpoint"):
            client.describe("any")
