"""Version 3 of the lookup protocol (typed values), with no node: replies are built by hand with
``struct`` and read through the client's own reader, over a socket pair or from a small fake node
on a local port that answers DESCRIBE, GET and the session ops as docs/wire-protocol.md says."""

from __future__ import annotations

import socket
import struct
import threading
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import pytest

from tensorcache import BadRequest, ProtocolError, TensorCacheClient, bf16_to_float32, wire

# code, element bytes and numpy dtype of each dtype name, as section 13.2 of the document has them
DTYPES = {
    "F32": (1, 4, "<f4"),
    "F16": (2, 2, "<f2"),
    "BF16": (3, 2, "<u2"),
    "I32": (4, 4, "<i4"),
    "I64": (5, 8, "<i8"),
}


def frame(body: bytes) -> bytes:
    return struct.pack("<i", len(body)) + body


def string(s: str) -> bytes:
    b = s.encode("utf-8")
    return struct.pack("<H", len(b)) + b


def field_part(dtype: str, values: np.ndarray, code: Optional[int] = None, count: Optional[int] = None) -> bytes:
    """One field of a version-3 values part: dtype code, element count, little-endian elements."""
    c, size, np_dtype = DTYPES[dtype]
    data = np.ascontiguousarray(values, dtype=np_dtype).tobytes()
    assert len(data) == size * values.size
    return struct.pack("<Bi", c if code is None else code, values.size if count is None else count) + data


def values_part(parts: Sequence[bytes]) -> bytes:
    return struct.pack("<H", len(parts)) + b"".join(parts)


def bf16_bits(floats: Sequence[float]) -> np.ndarray:
    """The BF16 patterns of floats that BF16 holds exactly: the high halves of their float32s."""
    f32 = np.asarray(floats, dtype="<f4")
    bits = (f32.view("<u4") >> 16).astype("<u2")
    assert np.array_equal(bf16_to_float32(bits), f32), "not exact in BF16"
    return bits


def sample(dtype: str, shape: Tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Values of ``dtype`` (BF16 as bit patterns) with the extremes each dtype can hold."""
    if dtype == "BF16":
        return bf16_bits(rng.integers(-256, 256, size=shape) / 4.0).reshape(shape)
    np_dtype = np.dtype(DTYPES[dtype][2])
    if np_dtype.kind == "i":
        info = np.iinfo(np_dtype)
        a = rng.integers(info.min, info.max, size=shape, dtype=np_dtype, endpoint=True)
        a.flat[0], a.flat[-1] = info.min, info.max
        return a
    a = rng.standard_normal(shape).astype(np_dtype)
    a.flat[0], a.flat[-1] = np.finfo(np_dtype).max, -np.finfo(np_dtype).tiny
    return a


class Pair:
    """A connected socket pair: bytes written to ``peer`` are read by ``reader``."""

    def __init__(self) -> None:
        self.peer, self.mine = socket.socketpair()
        self.mine.settimeout(10)
        self.reader = wire.Reader(self.mine)

    def send(self, data: bytes) -> None:
        threading.Thread(target=self.peer.sendall, args=(data,), daemon=True).start()

    def close(self) -> None:
        self.peer.close()
        self.mine.close()


@pytest.fixture
def pair():
    p = Pair()
    yield p
    p.close()


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_each_dtype_is_read_straight_into_an_array_of_its_dtype(pair, dtype, shape):
    rng = np.random.default_rng(len(shape) * 10 + DTYPES[dtype][0])
    b = 4
    info = wire.CacheInfo("c", 100, 10, (wire.Field("x", dtype, shape), wire.Field("y", "I64", ())))
    x, y = sample(dtype, (b,) + shape, rng), sample("I64", (b,), rng)
    pair.send(frame(b"\x00" + values_part([field_part(dtype, x), field_part("I64", y)])) + b"next")
    out = [np.zeros((b,) + shape, info.fields[0].numpy_dtype), np.zeros(b, "<i8")]
    wire.read_values_into(pair.reader, info, b, out, "peer")
    assert out[0].dtype == np.dtype(DTYPES[dtype][2])
    assert out[0].tobytes() == x.tobytes() and out[1].tobytes() == y.tobytes()  # bit for bit
    tail = bytearray(4)
    pair.reader.fill(memoryview(tail))
    assert tail == b"next", "the reply was read to its end and no further"


def test_bf16_and_f16_values_are_the_floats_they_encode(pair):
    info = wire.CacheInfo("c", 100, 10, (wire.Field("h", "F16", (2,)), wire.Field("b", "BF16", (2,))))
    h = np.array([[1.5, -65504.0], [0.000061035156, 2.0]], "<f2")
    b = bf16_bits([1.0, -2.0, 0.5, 3.0]).reshape(2, 2)
    pair.send(frame(b"\x00" + values_part([field_part("F16", h), field_part("BF16", b)])))
    out = [np.zeros((2, 2), "<f2"), np.zeros((2, 2), "<u2")]
    wire.read_values_into(pair.reader, info, 2, out, "peer")
    assert out[0].astype(np.float32).tolist() == [[1.5, -65504.0], [np.float32(np.float16(0.000061035156)), 2.0]]
    assert out[1].tolist() == [[0x3F80, 0xC000], [0x3F00, 0x4040]]
    assert bf16_to_float32(out[1]).tolist() == [[1.0, -2.0], [0.5, 3.0]]


def test_a_step_of_a_next_reply_keeps_each_fields_dtype(pair):
    info = wire.CacheInfo("c", 100, 10, (wire.Field("emb", "BF16", (2,)), wire.Field("tokens", "I32", ())))
    indices = np.array([9, 3], "<i8")
    emb, tokens = bf16_bits([1.0, -2.0, 0.5, 3.0]).reshape(2, 2), np.array([7, 300000], "<i4")
    body = (b"\x00" + struct.pack("<qqi", 5, 1, 2) + indices.tobytes()
            + values_part([field_part("BF16", emb), field_part("I32", tokens)]))
    pair.send(frame(body))
    step, epoch, got, values = wire.read_step(pair.reader, info, "peer")
    assert (step, epoch, got.tolist()) == (5, 1, [9, 3])
    assert values["emb"].dtype == np.dtype("<u2") and values["emb"].tolist() == emb.tolist()
    assert values["tokens"].dtype == np.dtype("<i4") and values["tokens"].tolist() == [7, 300000]


def test_a_dtype_code_other_than_the_fields_is_a_protocol_error(pair):
    info = wire.CacheInfo("c", 100, 10, (wire.Field("logp", "F32", ()),))
    # the values of an F16 field (2 bytes each) where DESCRIBE said F32
    pair.send(frame(b"\x00" + values_part([field_part("F16", np.array([1.0, 2.0]))])))
    with pytest.raises(ProtocolError, match=r"field 'logp' arrives with dtype code 2 \(F16\), expected 1 \(F32\)"):
        wire.read_values_into(pair.reader, info, 2, [np.zeros(2, "<f4")], "peer")


def test_an_unknown_dtype_code_is_a_protocol_error(pair):
    info = wire.CacheInfo("c", 100, 10, (wire.Field("emb", "BF16", ()),))
    pair.send(frame(b"\x00" + values_part([field_part("BF16", np.array([1, 2]), code=9)])))
    with pytest.raises(ProtocolError, match=r"field 'emb' arrives with dtype code 9 \(an unknown dtype\), expected 3 \(BF16\)"):
        wire.read_values_into(pair.reader, info, 2, [np.zeros(2, "<u2")], "peer")


def test_a_wrong_count_is_a_protocol_error(pair):
    info = wire.CacheInfo("c", 100, 10, (wire.Field("tokens", "I64", (2,)),))
    pair.send(frame(b"\x00" + values_part([field_part("I64", np.arange(3))])))
    with pytest.raises(ProtocolError, match=r"3 values of field 'tokens', expected 4"):
        wire.read_values_into(pair.reader, info, 2, [np.zeros((2, 2), "<i8")], "peer")


@pytest.mark.parametrize("extra", [b"\x00", b""])
def test_fields_that_do_not_use_up_the_frame_exactly_are_a_protocol_error(pair, extra):
    info = wire.CacheInfo("c", 100, 10, (wire.Field("a", "I32", ()), wire.Field("b", "I32", ())))
    # two fields announced; with ``extra``, both sent and a byte more, else only the first
    parts = [field_part("I32", np.array([1, 2]))] + ([field_part("I32", np.array([3, 4]))] if extra else [])
    pair.send(frame(b"\x00" + struct.pack("<H", 2) + b"".join(parts) + extra))
    with pytest.raises(ProtocolError, match="reply of"):
        wire.read_values_into(pair.reader, info, 2, [np.zeros(2, "<i4"), np.zeros(2, "<i4")], "peer")


def test_versions_1_and_2_carry_f32_values_only(pair):
    info = wire.CacheInfo("c", 100, 10, (wire.Field("a", "F32", ()), wire.Field("t", "I32", ())))
    pair.send(frame(b"\x00\x02\x00" + struct.pack("<if", 1, 0.5) + struct.pack("<if", 1, 7.0)))
    with pytest.raises(ProtocolError, match=r"field 't' is I32, which protocol version 2 cannot carry"):
        wire.read_values_into(pair.reader, info, 1, [np.zeros(1, "<f4"), np.zeros(1, "<i4")], "peer", version=2)


def test_requests_are_sent_in_version_3():
    assert wire.encode_get("c", np.array([1]))[4:6] == bytes((3, wire.GET))
    for op in (wire.OPEN, wire.RESUME, wire.NEXT):
        assert wire.encode_session(op, "c", "r", 0)[4:6] == bytes((3, op))
    assert wire.encode_describe("c")[4:6] == bytes((1, wire.DESCRIBE))


def test_the_dtype_table_is_the_documents():
    assert wire.DTYPE_CODES == {name: code for name, (code, _, _) in DTYPES.items()}
    for name, (_, size, np_dtype) in DTYPES.items():
        f = wire.Field("f", name, ())
        assert f.numpy_dtype == np.dtype(np_dtype) and f.numpy_dtype.itemsize == size
    with pytest.raises(ProtocolError, match=r"field 'f' has dtype 'U8'"):
        wire.Field("f", "U8", ()).numpy_dtype


class FakeNode:
    """A node's lookup port in a thread: DESCRIBE, GET, OPEN, RESUME and NEXT of one cache whose
    example i holds ``rows[name][i]``, with replies built here, independent of the client's codec."""

    def __init__(self, fields: Sequence[Tuple[str, str, Tuple[int, ...]]], rows: Dict[str, np.ndarray]) -> None:
        self.fields, self.rows = fields, rows
        self.requests: List[Tuple[int, int]] = []
        self.code_of: Dict[str, int] = {}  # a dtype code to send instead of the field's
        self.server = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"127.0.0.1:{self.server.getsockname()[1]}"
        self.next_step = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    @staticmethod
    def _exactly(conn: socket.socket, n: int) -> Optional[bytes]:
        data = b""
        while len(data) < n:
            got = conn.recv(n - len(data))
            if not got:
                return None
            data += got
        return data

    def _values(self, indices: np.ndarray) -> bytes:
        parts = []
        for name, dtype, _ in self.fields:
            parts.append(field_part(dtype, self.rows[name][indices], code=self.code_of.get(name)))
        return values_part(parts)

    def _serve(self, conn: socket.socket) -> None:
        try:
            self._exchanges(conn)
        except OSError:  # the client closed a connection it had not read to the end
            pass
        finally:
            conn.close()

    def _exchanges(self, conn: socket.socket) -> None:
        while True:
            head = self._exactly(conn, 4)
            if head is None:
                return
            body = self._exactly(conn, struct.unpack("<i", head)[0])
            if body is None:
                return
            version, op, n = struct.unpack("<BBH", body[:4])
            self.requests.append((version, op))
            rest = body[4 + n:]
            if op == wire.DESCRIBE:
                reply = b"\x00" + string("c") + struct.pack("<qiH", 100, 10, len(self.fields))
                for name, dtype, shape in self.fields:
                    reply += string(name) + string(dtype) + struct.pack(f"<B{len(shape)}i", len(shape), *shape)
            elif op == wire.GET:
                (count,) = struct.unpack("<i", rest[:4])
                reply = b"\x00" + self._values(np.frombuffer(rest[4:], "<i8", count))
            elif op in (wire.OPEN, wire.RESUME):
                if op == wire.RESUME:
                    (run_len,) = struct.unpack("<H", rest[:2])
                    (self.next_step,) = struct.unpack("<q", rest[2 + run_len + 4:])
                reply = b"\x00" + struct.pack("<q", self.next_step)
            else:  # NEXT: step s serves indices 2s and 2s + 1
                s = self.next_step
                self.next_step += 1
                indices = np.array([2 * s, 2 * s + 1], "<i8")
                reply = b"\x00" + struct.pack("<qqi", s, 0, 2) + indices.tobytes() + self._values(indices)
            conn.sendall(frame(reply))

    def close(self) -> None:
        self.server.close()


TYPED = [("f32", "F32", ()), ("f16", "F16", (3,)), ("bf16", "BF16", (2,)), ("i32", "I32", ()), ("i64", "I64", (2, 2))]


@pytest.fixture
def fake():
    rng = np.random.default_rng(7)
    rows = {name: sample(dtype, (100,) + shape, rng) for name, dtype, shape in TYPED}
    node = FakeNode(TYPED, rows)
    yield node
    node.close()


def test_lookup_returns_each_fields_values_in_its_dtype(fake):
    indices = [42, 7, 7, 99]
    with TensorCacheClient(fake.endpoint, timeout=10) as client:
        values = client.lookup("c", indices)
    assert fake.requests == [(1, wire.DESCRIBE), (3, wire.GET)]
    for name, dtype, shape in TYPED:
        assert values[name].dtype == np.dtype(DTYPES[dtype][2]), name
        assert values[name].shape == (4,) + shape
        assert values[name].tobytes() == fake.rows[name][indices].tobytes(), name


def test_lookup_into_fills_arrays_of_each_dtype(fake):
    out = {name: np.zeros((6,) + shape, DTYPES[dtype][2]) for name, dtype, shape in TYPED}
    with TensorCacheClient(fake.endpoint, timeout=10) as client:
        client.lookup_into("c", [3, 1, 4], out)
    for name, _, _ in TYPED:
        assert out[name][:3].tobytes() == fake.rows[name][[3, 1, 4]].tobytes(), name
        assert not out[name][3:].any(), "nothing written past the batch"


@pytest.mark.parametrize("field, wrong, message", [
    ("bf16", np.zeros((3, 2), np.float32),
     r"output array of field 'bf16' is float32 \(3, 2\), expected a writable C-contiguous uint16 array"
     r" \(BF16 bit patterns\) of shape \[3, 2\] \(or more rows\) for its BF16 values"),
    ("i32", np.zeros(3, np.int64),
     r"output array of field 'i32' is int64 \(3,\), expected a writable C-contiguous int32 array of shape \[3\]"),
    ("f16", np.zeros((3, 2), np.float16),
     r"output array of field 'f16' is float16 \(3, 2\), expected a writable C-contiguous float16 array of shape \[3, 3\]"),
    ("i64", np.zeros(12, np.int64),
     r"output array of field 'i64' is int64 \(12,\), expected a writable C-contiguous int64 array of shape \[3, 2, 2\]"),
    ("f32", np.zeros(2, np.float32),
     r"output array of field 'f32' is float32 \(2,\), expected a writable C-contiguous float32 array of shape \[3\]"),
])
def test_lookup_into_refuses_an_array_of_another_dtype_or_shape_before_sending(fake, field, wrong, message):
    out = {name: np.zeros((3,) + shape, DTYPES[dtype][2]) for name, dtype, shape in TYPED}
    out[field] = wrong
    with TensorCacheClient(fake.endpoint, timeout=10) as client:
        with pytest.raises(BadRequest, match=message) as e:
            client.lookup_into("c", [1, 2, 3], out)
        assert isinstance(e.value, ValueError)
        assert fake.requests == [(1, wire.DESCRIBE)], "no GET was sent"
        assert client.lookup("c", [5])["i32"].tolist() == fake.rows["i32"][[5]].tolist()


def test_a_node_sending_another_dtype_fails_the_lookup_and_its_connection(fake):
    fake.code_of["i32"] = 5  # I64's code for the I32 field
    with TensorCacheClient(fake.endpoint, timeout=10) as client:
        with pytest.raises(ProtocolError, match=r"field 'i32' arrives with dtype code 5 \(I64\), expected 4 \(I32\)"):
            client.lookup("c", [1])
        assert client.transport.idle == 0, "the connection out of step is closed, not pooled"
        del fake.code_of["i32"]
        assert client.lookup("c", [1])["i32"].tolist() == fake.rows["i32"][[1]].tolist()


def test_session_steps_keep_each_fields_dtype(fake):
    with TensorCacheClient(fake.endpoint, timeout=10) as client:
        session = client.session("c", "run", 0, 1, 0, 2)
        first, second = next(session), next(session)
        session.resume_from(0)
        again = next(session)
    assert [v for v, _ in fake.requests[1:]] == [3] * 5, "OPEN, NEXT, NEXT, RESUME, NEXT in version 3"
    assert (first.step, second.step, again.step) == (0, 1, 0)
    for name, dtype, shape in TYPED:
        assert second.values[name].dtype == np.dtype(DTYPES[dtype][2])
        assert second.values[name].tobytes() == fake.rows[name][[2, 3]].tobytes(), name
        assert again.values[name].tobytes() == first.values[name].tobytes(), name


def test_pytorch_tensors_keep_each_fields_dtype(fake):
    torch = pytest.importorskip("torch")
    from tensorcache.pytorch import SessionDataset, as_tensor

    bits = bf16_bits([1.0, -2.0, 0.5, 3.0])
    t = as_tensor(bits, "BF16")
    assert t.dtype == torch.bfloat16 and t.float().tolist() == [1.0, -2.0, 0.5, 3.0]
    with TensorCacheClient(fake.endpoint, timeout=10) as client:
        (item,) = list(SessionDataset(client.session("c", "torch", 0, 1, 0, 2), steps=1))
    expected = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
                "I32": torch.int32, "I64": torch.int64}
    for name, dtype, shape in TYPED:
        assert item[name].dtype == expected[dtype] and tuple(item[name].shape) == (2,) + shape, name
    assert item["bf16"].float().numpy().tolist() == bf16_to_float32(fake.rows["bf16"][[0, 1]]).tolist()
    assert item["i64"].numpy().tolist() == fake.rows["i64"][[0, 1]].tolist()
