"""TensorCacheClient: lookups through the nodes' lookup ports, for processes that are no members."""

from __future__ import annotations

import itertools
import socket
import threading
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import wire
from .errors import BadRequest, LookupFailed, ProtocolError, Unavailable
from .wire import CacheInfo

Endpoint = Union[str, Tuple[str, int]]


def _endpoint(e: Endpoint) -> Tuple[str, int]:
    if isinstance(e, tuple):
        return e[0], int(e[1])
    host, sep, port = str(e).rpartition(":")
    if not sep or not port.isdigit():
        raise BadRequest(f"endpoint {e!r}, expected host:port")
    return host, int(port)


class _Connection:
    """One TCP connection, used by one thread at a time."""

    def __init__(self, address: Tuple[str, int], timeout: float) -> None:
        self.address = address
        try:
            self.sock = socket.create_connection(address, timeout=min(timeout, 10.0))
        except OSError as e:
            raise ConnectionError(f"cannot connect to lookup endpoint {address[0]}:{address[1]}: {e}") from e
        self.sock.settimeout(timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = wire.Reader(self.sock)

    @property
    def peer(self) -> str:
        return f"{self.address[0]}:{self.address[1]}"

    def describe(self, cache: str) -> CacheInfo:
        self.sock.sendall(wire.encode_describe(cache))
        return wire.decode_info(wire.ok_body(self.reader.frame(), self.peer))

    def get_into(self, cache: str, info: CacheInfo, indices: np.ndarray, out: Sequence[np.ndarray]) -> None:
        wire.check_out(info, len(indices), out)  # a refusal leaves the connection in step
        self.sock.sendall(wire.encode_get(cache, indices))
        wire.read_values_into(self.reader, info, len(indices), out, self.peer)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class TensorCacheClient:
    """Reads cached per-example tensors from TensorCache nodes through their lookup ports.

    ``endpoints`` are ``"host:port"`` strings or ``(host, port)`` pairs of any nodes' lookup ports
    (``./tensorcache node --lookup-port P``). A reply not read within ``timeout`` seconds fails
    the connection; take it above the nodes' ``tensorcache.lookup.timeout``, since a lookup of
    values not computed yet waits for them. Thread-safe: each concurrent call uses a pooled
    connection of its own. A lookup is idempotent, so one whose node goes away is sent again to
    the next endpoint; it fails with :class:`Unavailable` only when every endpoint has failed it.
    """

    def __init__(self, endpoints: Union[Endpoint, Iterable[Endpoint]], timeout: float = 60.0) -> None:
        if isinstance(endpoints, (str, tuple)):
            endpoints = [endpoints]
        self._endpoints: List[Tuple[str, int]] = [_endpoint(e) for e in endpoints]
        if not self._endpoints:
            raise BadRequest("no lookup endpoint given, expected at least one")
        if timeout <= 0:
            raise BadRequest(f"timeout {timeout}, expected a positive number of seconds")
        self._timeout = float(timeout)
        self._idle: List[_Connection] = []
        self._lock = threading.Lock()
        self._next = itertools.count()
        self._infos: Dict[str, CacheInfo] = {}
        self._closed = False

    def __enter__(self) -> "TensorCacheClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the pooled connections; calls in flight finish on theirs."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()

    def describe(self, cache: str) -> CacheInfo:
        """The cache's name, example count, range size and fields, as the nodes have it."""
        info = self._infos.get(cache)
        if info is None:
            info = self._call(cache, lambda c: c.describe(cache))
            self._infos[cache] = info
        return info

    def lookup(self, cache: str, indices: Union[Sequence[int], np.ndarray]) -> Dict[str, np.ndarray]:
        """The values of ``indices``: per field name, an array shaped ``[len(indices), *shape]`` in
        request order, of the field's numpy dtype (:attr:`Field.numpy_dtype`): float32 for F32,
        float16 for F16, int32 for I32, int64 for I64, and for BF16 its 16-bit patterns
        (``uint16``), see :func:`tensorcache.bf16_to_float32`."""
        info = self.describe(cache)
        idx = self._indices(cache, indices)
        out = {f.name: np.empty((len(idx),) + f.shape, dtype=f.numpy_dtype) for f in info.fields}
        self._get_into(cache, info, idx, [out[f.name] for f in info.fields])
        return out

    def lookup_into(
        self, cache: str, indices: Union[Sequence[int], np.ndarray], out: Mapping[str, np.ndarray]
    ) -> None:
        """Like :meth:`lookup`, into the caller's arrays: ``out[name]`` must be a writable
        C-contiguous array of the field's numpy dtype (:attr:`Field.numpy_dtype`, ``uint16`` for
        BF16) shaped ``[rows, *shape]`` with ``rows >= len(indices)``; values are read from the
        socket straight into its first ``len(indices)`` rows. An array of another dtype or shape is
        a :class:`BadRequest` before the request is sent. On failure ``out`` may hold part of the
        values."""
        info = self.describe(cache)
        idx = self._indices(cache, indices)
        arrays = []
        for f in info.fields:
            a = out.get(f.name) if isinstance(out, Mapping) else None
            if a is None:
                raise BadRequest(f"no output array for field {f.name!r} of cache {cache!r}, expected one per field {[g.name for g in info.fields]}")
            arrays.append(a)
        wire.check_out(info, len(idx), arrays)
        self._get_into(cache, info, idx, arrays)

    @staticmethod
    def _indices(cache: str, indices: Union[Sequence[int], np.ndarray]) -> np.ndarray:
        a = np.asarray(indices)
        if a.ndim != 1:
            raise BadRequest(f"indices of shape {a.shape} for cache {cache!r}, expected one dimension")
        if a.size and not np.issubdtype(a.dtype, np.integer):
            raise BadRequest(f"indices of dtype {a.dtype} for cache {cache!r}, expected integers")
        return np.ascontiguousarray(a, dtype="<i8")

    def _get_into(self, cache: str, info: CacheInfo, idx: np.ndarray, out: List[np.ndarray]) -> None:
        self._call(cache, lambda c: c.get_into(cache, info, idx, out))

    def session(self, cache: str, run: str, rank: int, world_size: int, seed: int,
                global_batch: int) -> "Session":
        """The session of rank ``rank`` of run ``run``: a constant global batch of ``global_batch``
        examples per step split over ``world_size`` ranks, in a seeded order of the cache's
        examples; at step 0 when new, else at its next step. Iterate it for the steps."""
        from .session import Session

        return Session(self, cache, run, rank, world_size, seed, global_batch)

    def _call_once(self, cache: str, request):  # type: ignore[no-untyped-def]
        """Runs ``request`` on one connection, with no retry; an I/O failure is Unavailable."""
        if self._closed:
            raise Unavailable("the client is closed")
        c: Optional[_Connection] = None
        try:
            c = self._borrow()
            result = request(c)
            self._return(c)
            return result
        except (BadRequest, LookupFailed):
            self._return(c)
            raise
        except ProtocolError:
            if c is not None:
                c.close()
            raise
        except (OSError, ConnectionError) as e:
            if c is not None:
                c.close()
            raise Unavailable(f"{c.peer if c else 'connect'}: {e}") from e

    def _call(self, cache: str, request):  # type: ignore[no-untyped-def]
        """Runs ``request``, on the next endpoint when a node does not answer (it is idempotent)."""
        failures: List[str] = []
        for _ in range(len(self._endpoints)):
            try:
                return self._call_once(cache, request)
            except Unavailable as e:
                if self._closed:
                    raise
                failures.append(str(e))
        raise Unavailable(f"lookup of cache {cache!r} failed on every endpoint: {failures}")

    def _borrow(self) -> _Connection:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        last: Optional[Exception] = None
        for _ in range(len(self._endpoints)):
            address = self._endpoints[next(self._next) % len(self._endpoints)]
            try:
                return _Connection(address, self._timeout)
            except ConnectionError as e:
                last = e
        assert last is not None
        raise last

    def _return(self, c: Optional[_Connection]) -> None:
        if c is None:
            return
        with self._lock:
            if not self._closed:
                self._idle.append(c)
                return
        c.close()
