"""The connections to the nodes' lookup ports: a pool of them, fail-over across endpoints, and the
count of attempts a request is given (docs/wire-protocol.md, section 9)."""

from __future__ import annotations

import itertools
import socket
import ssl
import threading
from typing import Callable, List, Optional, Sequence, Tuple, TypeVar

from . import wire
from .errors import BadRequest, LookupFailed, ProtocolError, TensorCacheError, Unauthorized, Unavailable

T = TypeVar("T")


class Connection:
    """One TCP connection, under TLS when there is a context, used by one thread at a time: a
    request is :meth:`send` and its reply read from :attr:`reader`."""

    def __init__(self, address: Tuple[str, int], timeout: float, tls: Optional[ssl.SSLContext] = None,
                 token: Optional[str] = None) -> None:
        self.address = address
        sock: Optional[socket.socket] = None
        try:
            sock = socket.create_connection(address, timeout=min(timeout, 10.0))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if tls is not None:
                sock = tls.wrap_socket(sock, server_hostname=address[0])  # the handshake, timed
            sock.settimeout(timeout)
            self._sock = sock
            self.reader = wire.Reader(sock)
            if token is not None:
                sock.sendall(wire.encode_auth(token))
                wire.ok_body(self.reader.frame(), self.peer)
        except Unauthorized:  # a PermissionError, so an OSError, but an answer: not to be retried
            sock.close()  # type: ignore[union-attr]
            raise
        except OSError as e:  # refused, timed out, or TLS failed (a refused client certificate too)
            if sock is not None:
                sock.close()
            raise ConnectionError(f"cannot connect to lookup endpoint {address[0]}:{address[1]}: {e}") from e
        except Exception:
            if sock is not None:
                sock.close()
            raise

    @property
    def peer(self) -> str:
        return f"{self.address[0]}:{self.address[1]}"

    def send(self, request: bytes) -> None:
        """Sends one encoded request (``wire.encode_*``); its reply follows on :attr:`reader`."""
        self._sock.sendall(request)

    def close(self) -> None:
        try:
            self._sock.close()
        except OSError:
            pass


class Transport:
    """The pooled connections to ``endpoints``, each opened with ``timeout``, ``tls`` and ``token``
    as :class:`Connection` takes them. Thread-safe: each concurrent request borrows a connection
    of its own. A request runs on a pooled connection when there is one, else on a new one to the
    next endpoint that takes one; a request that fails there is given another connection as
    :meth:`call` and :meth:`call_attempts` say. A pooled connection that a node has closed
    meanwhile (idle too long, or its place taken at the node's connection cap) costs no attempt."""

    def __init__(self, endpoints: Sequence[Tuple[str, int]], timeout: float,
                 tls: Optional[ssl.SSLContext] = None, token: Optional[str] = None) -> None:
        self._endpoints = list(endpoints)
        self._timeout = timeout
        self._tls = tls
        self._token = token
        self._idle: List[Connection] = []
        self._lock = threading.Lock()
        self._next = itertools.count()
        self._closed = False

    @property
    def idle(self) -> int:
        """How many connections are pooled, in step and waiting for a request."""
        with self._lock:
            return len(self._idle)

    def close(self) -> None:
        """Closes the pooled connections; requests in flight finish on theirs."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()

    def call(self, cache: str, request: Callable[[Connection], T]) -> T:
        """Runs ``request``, on the next endpoint when a node does not answer (it must be
        idempotent): :class:`Unavailable` only once every endpoint has failed it."""
        failures: List[str] = []
        while len(failures) < len(self._endpoints):
            try:
                return self._once(request)
            except Unavailable as e:
                if self._closed:
                    raise
                if not getattr(e, "pooled", False):  # pooled ones run out: each failed one is dropped
                    failures.append(str(e))
        raise Unavailable(f"lookup of cache {cache!r} failed on every endpoint: {failures}")

    def call_attempts(self, request: Callable[[Connection, int], T], attempts: int) -> T:
        """Runs ``request(connection, attempt)`` until it succeeds, ``attempts`` times at most,
        also when it fails with :class:`LookupFailed`; a pooled connection that the node had closed
        while it was idle costs no attempt, but counts as one for ``attempt > 0`` (the request may
        have reached the node)."""
        last: Exception = Unavailable("no attempt made")
        attempt = failures = 0
        while failures < attempts:
            try:
                return self._once(lambda c: request(c, attempt))
            except (LookupFailed, Unavailable) as e:
                last = e
                attempt += 1
                if not getattr(e, "pooled", False):  # pooled ones run out: each failed one is dropped
                    failures += 1
        raise last if isinstance(last, TensorCacheError) else Unavailable(str(last))

    def _once(self, request: Callable[[Connection], T]) -> T:
        """Runs ``request`` on one connection, with no retry; an I/O failure is Unavailable."""
        if self._closed:
            raise Unavailable("the client is closed")
        c: Optional[Connection] = None
        pooled = False
        try:
            c, pooled = self._borrow()
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
            failed = Unavailable(f"{c.peer if c else 'connect'}: {e}")
            failed.pooled = pooled  # type: ignore[attr-defined]  # the node may have closed it while it was idle
            raise failed from e

    def _borrow(self) -> Tuple[Connection, bool]:
        """A pooled connection, or a new one to the next endpoint that takes one; and whether it
        was pooled."""
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        last: Optional[Exception] = None
        for _ in range(len(self._endpoints)):
            address = self._endpoints[next(self._next) % len(self._endpoints)]
            try:
                return Connection(address, self._timeout, self._tls, self._token), False
            except ConnectionError as e:
                last = e
        assert last is not None
        raise last

    def _return(self, c: Optional[Connection]) -> None:
        if c is None:
            return
        with self._lock:
            if not self._closed:
                self._idle.append(c)
                return
        c.close()
