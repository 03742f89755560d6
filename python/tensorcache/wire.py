"""The lookup port's binary protocol, version 1 (see docs/wire-protocol.md).

Every frame is an int32 length of the rest, then the rest; everything is little-endian.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

import numpy as np

from .errors import BadRequest, LookupFailed, ProtocolError

VERSION = 1  # GET and DESCRIBE: answered by every node
VERSION_2 = 2  # adds the trainer-session ops
GET, DESCRIBE = 1, 2
OPEN, RESUME, NEXT = 3, 4, 5
OK, BAD_REQUEST, FAILED, PROTOCOL = 0, 1, 2, 3
MAX_FRAME = 256 << 20

_DTYPES: Dict[str, np.dtype] = {
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),  # the 16-bit pattern; numpy has no bfloat16
    "I32": np.dtype("<i4"),
    "I64": np.dtype("<i8"),
    "U8": np.dtype("u1"),
}


@dataclass(frozen=True)
class Field:
    """One cached tensor per example: its name, dtype name (safetensors') and shape."""

    name: str
    dtype: str
    shape: Tuple[int, ...]

    @property
    def width(self) -> int:
        """Values per example."""
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def numpy_dtype(self) -> np.dtype:
        """The numpy dtype values of this field arrive in."""
        try:
            return _DTYPES[self.dtype]
        except KeyError:
            raise ProtocolError(f"field {self.name!r} has dtype {self.dtype!r}, expected one of {sorted(_DTYPES)}") from None


@dataclass(frozen=True)
class CacheInfo:
    """What a node says of a cache: its name, example count, range size and fields in order."""

    name: str
    n: int
    range_size: int
    fields: Tuple[Field, ...]


def _str(s: str) -> bytes:
    b = s.encode("utf-8")
    if len(b) > 0xFFFF:
        raise BadRequest(f"string of {len(b)} UTF-8 bytes, expected at most 65535: {s[:40]!r}")
    return struct.pack("<H", len(b)) + b


def encode_get(cache: str, indices: np.ndarray) -> bytes:
    """A GET frame for ``indices`` (int64, little-endian) of ``cache``."""
    body = bytes((VERSION, GET)) + _str(cache) + struct.pack("<i", len(indices))
    payload = indices.astype("<i8", copy=False).tobytes()
    return struct.pack("<i", len(body) + len(payload)) + body + payload


def encode_describe(cache: str) -> bytes:
    """A DESCRIBE frame for ``cache``."""
    body = bytes((VERSION, DESCRIBE)) + _str(cache)
    return struct.pack("<i", len(body)) + body


def encode_session(op: int, cache: str, run: str, rank: int, world_size: int = 0, seed: int = 0,
                   global_batch: int = 0, step: int = 0) -> bytes:
    """A session request frame (protocol version 2): OPEN, RESUME or NEXT."""
    body = bytes((VERSION_2, op)) + _str(cache) + _str(run) + struct.pack("<i", rank)
    if op == OPEN:
        body += struct.pack("<iqi", world_size, seed, global_batch)
    else:
        body += struct.pack("<q", step)
    return struct.pack("<i", len(body)) + body


class Reader:
    """Reads frames from one socket into a reusable buffer."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._buf = bytearray(8192)

    def fill(self, view: memoryview) -> None:
        """Reads exactly ``len(view)`` bytes into ``view``."""
        got = 0
        while got < len(view):
            n = self._sock.recv_into(view[got:])
            if n == 0:
                raise ConnectionError("connection closed" if got == 0 else "connection closed mid-frame")
            got += n

    def frame(self) -> memoryview:
        """The next frame's body; valid until the next call."""
        head = bytearray(4)
        self.fill(memoryview(head))
        (length,) = struct.unpack("<i", head)
        if length < 1 or length > MAX_FRAME:
            raise ProtocolError(f"frame of {length} bytes, expected 1..{MAX_FRAME}")
        if len(self._buf) < length:
            self._buf = bytearray(max(length, 2 * len(self._buf)))
        view = memoryview(self._buf)[:length]
        self.fill(view)
        return view


class _Cursor:
    def __init__(self, body: memoryview, peer: object) -> None:
        self.body = body
        self.at = 0
        self.peer = peer

    def take(self, n: int) -> memoryview:
        if self.at + n > len(self.body):
            raise ProtocolError(f"{self.peer}: reply truncated, {n} bytes wanted at {self.at} of {len(self.body)}")
        v = self.body[self.at : self.at + n]
        self.at += n
        return v

    def unpack(self, fmt: str) -> tuple:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))

    def string(self) -> str:
        (n,) = self.unpack("<H")
        return bytes(self.take(n)).decode("utf-8")


def ok_body(body: memoryview, peer: object) -> _Cursor:
    """The cursor after an OK status, or the error the reply carries as an exception."""
    c = _Cursor(body, peer)
    (status,) = c.unpack("<B")
    if status == OK:
        return c
    message = c.string()
    if status == BAD_REQUEST:
        raise BadRequest(message)
    if status == FAILED:
        raise LookupFailed(message)
    raise ProtocolError(f"{peer} rejected a request: {message}")


def decode_info(c: _Cursor) -> CacheInfo:
    """Reads the OK reply to a DESCRIBE."""
    name = c.string()
    n, range_size, count = c.unpack("<qiH")
    fields: List[Field] = []
    for _ in range(count):
        fname = c.string()
        dtype = c.string()
        (rank,) = c.unpack("<B")
        shape = c.unpack(f"<{rank}i") if rank else ()
        fields.append(Field(fname, dtype, tuple(shape)))
    return CacheInfo(name, n, range_size, tuple(fields))


def read_step(reader: "Reader", info: CacheInfo, peer: object):
    """Reads the reply to a NEXT: (step, epoch, indices, values per field name)."""
    remaining = [_read_status(reader, peer)]
    head = bytearray(20)
    reader.fill(memoryview(head))
    step, epoch, count = struct.unpack("<qqi", head)
    indices = np.empty(count, dtype="<i8")
    reader.fill(memoryview(indices).cast("B"))
    values = {f.name: np.empty((count,) + f.shape, dtype=f.numpy_dtype) for f in info.fields}
    remaining[0] -= 20 + 8 * count
    _read_fields(reader, info, count, [values[f.name] for f in info.fields], peer, remaining[0])
    return step, epoch, indices, values


def read_values_into(
    reader: "Reader", info: CacheInfo, count: int, out: Sequence[np.ndarray], peer: object
) -> None:
    """Reads the reply to a GET of ``count`` indices straight into ``out`` (one array per field):
    the values go from the socket into the caller's memory, with no copy in between."""
    _read_fields(reader, info, count, out, peer, _read_status(reader, peer))


def _read_status(reader: "Reader", peer: object) -> int:
    """Reads a reply's length and status; returns the bytes left after an OK, else raises."""
    head = bytearray(4)
    reader.fill(memoryview(head))
    (length,) = struct.unpack("<i", head)
    if length < 1 or length > MAX_FRAME:
        raise ProtocolError(f"{peer}: frame of {length} bytes, expected 1..{MAX_FRAME}")
    status = bytearray(1)
    reader.fill(memoryview(status))
    if status[0] != OK:
        rest = bytearray(length - 1)
        reader.fill(memoryview(rest))
        ok_body(memoryview(bytes(status) + bytes(rest)), peer)
        raise ProtocolError(f"{peer}: an error reply without an error")
    return length - 1


def _read_fields(
    reader: "Reader", info: CacheInfo, count: int, out: Sequence[np.ndarray], peer: object, length: int
) -> None:
    """Reads ``fields:u16 (values:i32 data)*`` of ``length`` bytes into ``out``."""
    small = bytearray(4)
    reader.fill(memoryview(small)[:2])
    (fields,) = struct.unpack("<H", small[:2])
    used = 2
    if fields != len(info.fields):
        raise ProtocolError(f"{peer}: {fields} fields in the reply, expected {len(info.fields)}")
    for f, field in enumerate(info.fields):
        reader.fill(memoryview(small))
        (values,) = struct.unpack("<i", small)
        if values != count * field.width:
            raise ProtocolError(
                f"{peer}: {values} values of field {field.name!r}, expected {count * field.width}"
            )
        nbytes = values * field.numpy_dtype.itemsize
        reader.fill(memoryview(out[f]).cast("B")[:nbytes])
        used += 4 + nbytes
    if used != length:
        raise ProtocolError(f"{peer}: reply of {length} bytes, {used} of them read")
