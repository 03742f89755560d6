"""TensorCacheClient: lookups through the nodes' lookup ports, for processes that are no members."""

from __future__ import annotations

import os
import ssl
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import wire
from .errors import BadRequest
from .session import Session
from .transport import Connection, Transport
from .wire import CacheInfo

Endpoint = Union[str, Tuple[str, int]]
PathLike = Union[str, "os.PathLike[str]"]
TlsFiles = Union[Tuple[PathLike, PathLike, PathLike], Tuple[PathLike]]


def tls_context(cafile: PathLike, certfile: Optional[PathLike] = None,
                keyfile: Optional[PathLike] = None) -> ssl.SSLContext:
    """A TLS 1.3 client context for lookup ports that speak TLS: the nodes' certificates must be
    signed by the CA certificates of ``cafile`` (PEM) and name the host or IP address the client
    connects to; ``certfile`` and ``keyfile`` (PEM) are this client's certificate and private key,
    signed by the ports' client CA, which such ports require. A file that cannot be loaded is named:
    :class:`FileNotFoundError` when it is missing, :class:`BadRequest` when it is not what it
    should be."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies the certificate and the host name
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    _load(f"CA certificates {cafile}", ctx.load_verify_locations, cafile)
    if certfile is not None:
        _load(f"client certificate {certfile} with key {keyfile}", ctx.load_cert_chain, certfile, keyfile)
    return ctx


def _load(what: str, load, *files) -> None:  # type: ignore[no-untyped-def]
    try:
        load(*files)
    except FileNotFoundError as e:
        raise FileNotFoundError(e.errno, f"cannot load the {what}: {e.strerror}") from e
    except OSError as e:  # ssl.SSLError included
        raise BadRequest(f"cannot load the {what}: {e}") from e


def _endpoint(e: Endpoint) -> Tuple[str, int]:
    if isinstance(e, tuple):
        return e[0], int(e[1])
    host, sep, port = str(e).rpartition(":")
    if not sep or not port.isdigit():
        raise BadRequest(f"endpoint {e!r}, expected host:port")
    return host, int(port)


def _describe(c: Connection, cache: str) -> CacheInfo:
    c.send(wire.encode_describe(cache))
    return wire.decode_info(wire.ok_body(c.reader.frame(), c.peer))


def _inputs(c: Connection, cache: str) -> Dict[str, str]:
    c.send(wire.encode_inputs(cache))
    return wire.decode_inputs(c.reader.frame(), c.peer)


def _get_into(c: Connection, cache: str, info: CacheInfo, indices: np.ndarray, out: Sequence[np.ndarray]) -> None:
    wire.check_out(info, len(indices), out)  # a refusal leaves the connection in step
    c.send(wire.encode_get(cache, indices))
    wire.read_values_into(c.reader, info, len(indices), out, c.peer)


class TensorCacheClient:
    """Reads cached per-example tensors from TensorCache nodes through their lookup ports.

    ``endpoints`` are ``"host:port"`` strings or ``(host, port)`` pairs of any nodes' lookup ports
    (``./tensorcache node --lookup-port P``). A reply not read within ``timeout`` seconds fails
    the connection; take it above the nodes' ``tensorcache.lookup.timeout``, since a lookup of
    values not computed yet waits for them. Thread-safe: each concurrent call uses a pooled
    connection of its own. A lookup is idempotent, so one whose node goes away is sent again to
    the next endpoint; it fails with :class:`Unavailable` only when every endpoint has failed it.
    A pooled connection that a node has closed meanwhile (idle too long, or its place taken at the
    node's connection cap) costs no attempt: the call goes again on a new one.

    For ports that need credentials: ``token`` is the port's token (every connection presents it
    first, in an AUTH request; a wrong one is :class:`Unauthorized`), and ``tls`` makes every
    connection TLS 1.3, either an :class:`ssl.SSLContext` or the files ``(cafile, certfile,
    keyfile)`` for :func:`tls_context`: the CA that signed the nodes' certificates, and this
    client's certificate and key, signed by the port's client CA.
    """

    def __init__(self, endpoints: Union[Endpoint, Iterable[Endpoint]], timeout: float = 60.0,
                 token: Optional[str] = None, tls: Union[ssl.SSLContext, TlsFiles, None] = None) -> None:
        if isinstance(endpoints, (str, tuple)):
            endpoints = [endpoints]
        addresses: List[Tuple[str, int]] = [_endpoint(e) for e in endpoints]
        if not addresses:
            raise BadRequest("no lookup endpoint given, expected at least one")
        if timeout <= 0:
            raise BadRequest(f"timeout {timeout}, expected a positive number of seconds")
        if token is not None and (not isinstance(token, str) or not token.strip()):
            raise BadRequest("an empty token, expected the lookup port's token (a non-empty str)")
        if tls is None or isinstance(tls, ssl.SSLContext):
            context = tls
        elif isinstance(tls, tuple) and len(tls) in (1, 3):
            context = tls_context(*tls)
        else:
            raise BadRequest(f"tls {tls!r}, expected an ssl.SSLContext or (cafile, certfile, keyfile)")
        self._transport = Transport(addresses, float(timeout), context, token)
        self._infos: Dict[str, CacheInfo] = {}

    def __enter__(self) -> "TensorCacheClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def transport(self) -> Transport:
        """The pooled connections this client's calls and its sessions go over."""
        return self._transport

    def close(self) -> None:
        """Closes the pooled connections; calls in flight finish on theirs."""
        self._transport.close()

    def describe(self, cache: str) -> CacheInfo:
        """The cache's name, example count, range size and fields, as the nodes have it."""
        info = self._infos.get(cache)
        if info is None:
            info = self._transport.call(cache, lambda c: _describe(c, cache))
            self._infos[cache] = info
        return info

    def inputs(self, cache: str) -> Dict[str, str]:
        """The inputs the cache was filled from, as the node recorded them: a flat dict of strings
        in sorted key order (data set, model and tokenizer digests, truncation; see
        docs/wire-protocol.md, section 15), empty when none were recorded. Asked each time, in
        protocol version 4: a node older than that is a :class:`ProtocolError` that says so. An
        unknown cache is a :class:`BadRequest`, as for :meth:`describe`."""
        return self._transport.call(cache, lambda c: _inputs(c, cache))

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
        self._transport.call(cache, lambda c: _get_into(c, cache, info, idx, out))

    def session(self, cache: str, run: str, rank: int, world_size: int, seed: int,
                global_batch: int) -> Session:
        """The session of rank ``rank`` of run ``run``: a constant global batch of ``global_batch``
        examples per step split over ``world_size`` ranks, in a seeded order of the cache's
        examples; at step 0 when new, else at its next step. Iterate it for the steps."""
        return Session(self, cache, run, rank, world_size, seed, global_batch)
