"""The lookup port's binary protocol, versions 1 to 4 (see docs/wire-protocol.md).

Every frame is an int32 length of the rest, then the rest; everything is little-endian. This
client sends DESCRIBE in version 1, GET, OPEN, RESUME, NEXT and AUTH in version 3, whose values carry
each field's dtype: F32, F16 and I32, I64 arrive as numpy arrays of that dtype, BF16 as its 16-bit
patterns (``uint16``, the high half of a float32; see :func:`tensorcache.bf16_to_float32`), and
INPUTS, a cache's recorded inputs, in version 4.
"""

from __future__ import annotations

import json
import socket
import struct
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

import numpy as np

from .errors import BadRequest, LookupFailed, ProtocolError, Unauthorized

VERSION = 1  # GET and DESCRIBE: answered by every node
VERSION_2 = 2  # adds the trainer-session ops
VERSION_3 = 3  # typed values: each field's values in its own dtype, with the dtype's code
VERSION_4 = 4  # adds INPUTS
GET, DESCRIBE = 1, 2
OPEN, RESUME, NEXT = 3, 4, 5
AUTH = 6  # version 3: presents the port's token, the first request of a connection
INPUTS = 7  # version 4: the inputs a cache was filled from, one JSON object of strings
OK, BAD_REQUEST, FAILED, PROTOCOL = 0, 1, 2, 3
MAX_FRAME = 256 << 20
UNAUTHORIZED = "unauthorized:"  # how a node's PROTOCOL reply for want of credentials starts

_DTYPES: Dict[str, np.dtype] = {
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),  # the 16-bit pattern; numpy has no bfloat16
    "I32": np.dtype("<i4"),
    "I64": np.dtype("<i8"),
}
# The code a version-3 reply gives each dtype (docs/wire-protocol.md, section 13).
DTYPE_CODES: Dict[str, int] = {"F32": 1, "F16": 2, "BF16": 3, "I32": 4, "I64": 5}
_DTYPE_NAMES: Dict[int, str] = {code: name for name, code in DTYPE_CODES.items()}


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
        """The numpy dtype values of this field arrive in: ``<f4``, ``<f2``, ``<i4``, ``<i8``, and
        ``<u2`` for BF16 (its 16-bit patterns; numpy has no bfloat16)."""
        try:
            return _DTYPES[self.dtype]
        except KeyError:
            raise ProtocolError(f"field {self.name!r} has dtype {self.dtype!r}, expected one of {list(_DTYPES)}") from None

    @property
    def code(self) -> int:
        """The code of this field's dtype in a version-3 reply."""
        self.numpy_dtype  # an unknown dtype name is a ProtocolError naming the field
        return DTYPE_CODES[self.dtype]


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


def encode_get(cache: str, indices: np.ndarray, version: int = VERSION_3) -> bytes:
    """A GET frame for ``indices`` (int64, little-endian) of ``cache``, in protocol ``version``
    (the layout is the same in every version; the reply's is not)."""
    body = bytes((version, GET)) + _str(cache) + struct.pack("<i", len(indices))
    payload = indices.astype("<i8", copy=False).tobytes()
    return struct.pack("<i", len(body) + len(payload)) + body + payload


def encode_describe(cache: str) -> bytes:
    """A DESCRIBE frame for ``cache``."""
    body = bytes((VERSION, DESCRIBE)) + _str(cache)
    return struct.pack("<i", len(body)) + body


def encode_auth(token: str) -> bytes:
    """An AUTH frame (protocol version 3) presenting ``token``; its cache id is empty."""
    body = bytes((VERSION_3, AUTH)) + _str("") + _str(token)
    return struct.pack("<i", len(body)) + body


def encode_inputs(cache: str) -> bytes:
    """An INPUTS frame (protocol version 4) for ``cache``: nothing follows the cache id."""
    body = bytes((VERSION_4, INPUTS)) + _str(cache)
    return struct.pack("<i", len(body)) + body


def encode_session(op: int, cache: str, run: str, rank: int, world_size: int = 0, seed: int = 0,
                   global_batch: int = 0, step: int = 0, version: int = VERSION_3) -> bytes:
    """A session request frame: OPEN, RESUME or NEXT, in protocol ``version`` (2 or 3; the layout
    is the same, the values of a NEXT's reply are not)."""
    body = bytes((version, op)) + _str(cache) + _str(run) + struct.pack("<i", rank)
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
    if status == PROTOCOL and message.startswith(UNAUTHORIZED):
        raise Unauthorized(f"{peer} refused this client: {message}")
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


def decode_inputs(body: memoryview, peer: object) -> Dict[str, str]:
    """Reads the reply to an INPUTS: the recorded inputs, keys in sorted order. A node of versions
    1 to 3 refuses the version, which is a :class:`ProtocolError` that says the node must be
    upgraded; a reply that is not a JSON object of strings is a :class:`ProtocolError` too."""
    if len(body) and body[0] == PROTOCOL:
        message = _Cursor(body[1:], peer).string()
        if message.startswith(f"protocol version {VERSION_4},"):
            raise ProtocolError(
                f"node {peer} does not serve recorded inputs (protocol version 4); upgrade the node")
    c = ok_body(body, peer)
    (n,) = c.unpack("<H")
    raw = bytes(c.take(n))
    if c.at != len(body):
        raise ProtocolError(f"{peer}: {len(body) - c.at} bytes after the reply to INPUTS")

    def unique(pairs: List[Tuple[str, object]]) -> Dict[str, object]:
        d: Dict[str, object] = {}
        for key, value in pairs:
            if key in d:
                raise ProtocolError(f"{peer}: recorded input {key!r} twice in the reply to INPUTS")
            d[key] = value
        return d

    try:
        inputs = json.loads(raw.decode("utf-8"), object_pairs_hook=unique)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ProtocolError(f"{peer}: reply to INPUTS of no valid JSON: {e}: {raw[:200]!r}") from None
    if not isinstance(inputs, dict):
        raise ProtocolError(f"{peer}: reply to INPUTS of no JSON object: {raw[:200]!r}")
    for key, value in inputs.items():
        if not isinstance(value, str):
            raise ProtocolError(
                f"{peer}: recorded input {key!r} is {json.dumps(value)[:200]} in the reply to INPUTS,"
                f" expected a string")
    return {key: inputs[key] for key in sorted(inputs)}


def read_step(reader: "Reader", info: CacheInfo, peer: object, version: int = VERSION_3):
    """Reads the reply to a NEXT of protocol ``version``: (step, epoch, indices, values per field
    name), each field's values an array of its :attr:`Field.numpy_dtype`."""
    remaining = _read_status(reader, peer)
    head = bytearray(20)
    if remaining < len(head):
        raise ProtocolError(f"{peer}: reply of {remaining} bytes after its status, expected at least 20")
    reader.fill(memoryview(head))
    step, epoch, count = struct.unpack("<qqi", head)
    if count < 0 or 20 + 8 * count > remaining:
        raise ProtocolError(f"{peer}: step of {count} indices in a reply of {remaining} bytes after its status")
    indices = np.empty(count, dtype="<i8")
    reader.fill(memoryview(indices).cast("B"))
    values = {f.name: np.empty((count,) + f.shape, dtype=f.numpy_dtype) for f in info.fields}
    _read_fields(reader, info, count, [values[f.name] for f in info.fields], peer,
                 remaining - 20 - 8 * count, version)
    return step, epoch, indices, values


def check_out(info: CacheInfo, count: int, out: Sequence[np.ndarray]) -> None:
    """Checks that ``out`` holds, per field of ``info`` in order, a writable C-contiguous array of
    the field's :attr:`Field.numpy_dtype` shaped ``[rows, *shape]`` with ``rows >= count``; else a
    :class:`BadRequest` naming the field, the array's dtype and shape and the expected ones."""
    if len(out) != len(info.fields):
        raise BadRequest(f"{len(out)} output arrays for {len(info.fields)} fields {[f.name for f in info.fields]}")
    for field, a in zip(info.fields, out):
        dtype = field.numpy_dtype
        if not isinstance(a, np.ndarray):
            raise BadRequest(f"output of field {field.name!r} is a {type(a).__name__}, expected a numpy array of {dtype}")
        if (a.dtype != dtype or not a.flags.c_contiguous or not a.flags.writeable
                or a.ndim != 1 + len(field.shape) or a.shape[1:] != field.shape or a.shape[0] < count):
            flags = ("" if a.flags.c_contiguous else " (not C-contiguous)") + ("" if a.flags.writeable else " (read-only)")
            bits = " (BF16 bit patterns)" if field.dtype == "BF16" else ""
            shape = ", ".join(str(d) for d in (count,) + field.shape)
            raise BadRequest(
                f"output array of field {field.name!r} is {a.dtype} {a.shape}{flags}, expected a writable"
                f" C-contiguous {dtype} array{bits} of shape [{shape}] (or more rows) for its {field.dtype} values"
            )


def read_values_into(
    reader: "Reader", info: CacheInfo, count: int, out: Sequence[np.ndarray], peer: object,
    version: int = VERSION_3,
) -> None:
    """Reads the reply to a GET of ``count`` indices in protocol ``version`` straight into ``out``
    (one C-contiguous array per field, of the field's :attr:`Field.numpy_dtype`, with room for
    ``count`` rows): the values go from the socket into the caller's memory, with no copy in
    between. Versions 1 and 2 carry float32 values only, so every field must be F32. ``out`` is
    checked (:func:`check_out`) before anything is read."""
    check_out(info, count, out)
    _read_fields(reader, info, count, out, peer, _read_status(reader, peer), version)


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
    reader: "Reader", info: CacheInfo, count: int, out: Sequence[np.ndarray], peer: object,
    length: int, version: int,
) -> None:
    """Reads the values part of ``length`` bytes into ``out``: ``fields:u16`` then per field
    ``floats:i32 f32*`` (versions 1 and 2) or ``dtype:u8 count:i32 element*`` (version 3)."""
    if version not in (VERSION, VERSION_2, VERSION_3):
        raise ValueError(f"protocol version {version}, expected 1, 2 or 3")
    typed = version == VERSION_3
    small = bytearray(5)
    if length < 2:
        raise ProtocolError(f"{peer}: reply of {length} bytes after its status, expected at least 2")
    reader.fill(memoryview(small)[:2])
    (fields,) = struct.unpack("<H", small[:2])
    used = 2
    if not typed:
        for field in info.fields:
            if field.dtype != "F32":
                raise ProtocolError(
                    f"{peer}: field {field.name!r} is {field.dtype}, which protocol version {version}"
                    f" cannot carry (float32 values only): version 3 is needed"
                )
    if fields != len(info.fields):
        raise ProtocolError(f"{peer}: {fields} fields in the reply, expected {len(info.fields)}")
    for f, field in enumerate(info.fields):
        dtype = field.numpy_dtype
        head = memoryview(small)[: 5 if typed else 4]
        if used + len(head) > length:
            raise ProtocolError(f"{peer}: reply of {length} bytes ends before field {field.name!r}")
        reader.fill(head)
        used += len(head)
        if typed:
            code, values = struct.unpack("<Bi", head)
            if code != field.code:
                got = _DTYPE_NAMES.get(code, "an unknown dtype")
                raise ProtocolError(
                    f"{peer}: field {field.name!r} arrives with dtype code {code} ({got}),"
                    f" expected {field.code} ({field.dtype})"
                )
        else:
            (values,) = struct.unpack("<i", head)
        if values != count * field.width:
            raise ProtocolError(
                f"{peer}: {values} values of field {field.name!r}, expected {count * field.width}"
            )
        nbytes = values * dtype.itemsize
        if used + nbytes > length:
            raise ProtocolError(f"{peer}: reply of {length} bytes ends inside the values of field {field.name!r}")
        reader.fill(memoryview(out[f]).cast("B")[:nbytes])
        used += nbytes
    if used != length:
        raise ProtocolError(f"{peer}: reply of {length} bytes, {used} of them read")
