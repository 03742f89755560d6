"""Trainer sessions over the lookup port: a rank's deterministic, resumable steps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Iterator, Protocol, TypeVar

import numpy as np

from . import wire
from .transport import Connection, Transport

T = TypeVar("T")


class _Client(Protocol):
    """What a session needs of its client (a :class:`tensorcache.TensorCacheClient`)."""

    @property
    def transport(self) -> Transport: ...

    def describe(self, cache: str) -> wire.CacheInfo: ...


@dataclass(frozen=True)
class Step:
    """One global step of a rank: its indices, in order, and their values per field name, each an
    array ``[len(indices), *shape]`` of the field's numpy dtype (``uint16`` bit patterns for BF16,
    see :func:`tensorcache.bf16_to_float32`)."""

    step: int
    epoch: int
    indices: np.ndarray
    values: Dict[str, np.ndarray]


class Session:
    """The session of one rank of a training run, served by the cluster's sharded trainer sessions
    (the same ones Java trainers use): an endless iterator of :class:`Step`. After a restart,
    :meth:`resume_from` at the trainer's own checkpoint step gives exactly the steps an
    uninterrupted run would have had. A request that fails (its node gone, no answer in time) is
    asked again, on the next endpoint if need be, after resuming at the step, so that no step is
    skipped or repeated."""

    ATTEMPTS = 3

    def __init__(self, client: _Client, cache: str, run: str, rank: int,
                 world_size: int, seed: int, global_batch: int) -> None:
        self._transport = client.transport
        self._cache = cache
        self._info = client.describe(cache)
        self._run = run
        self._rank = rank
        self._open = dict(world_size=world_size, seed=seed, global_batch=global_batch)
        self._expected = self._retrying(lambda c, attempt: self._next_step(c, wire.OPEN, **self._open))

    @property
    def info(self) -> "wire.CacheInfo":
        """The cache's layout: its fields' names, dtypes and shapes."""
        return self._info

    @property
    def next_step(self) -> int:
        """The step the next iteration serves."""
        return self._expected

    def resume_from(self, step: int) -> "Session":
        """Makes ``step`` (the trainer's checkpoint step) the next one served."""
        self._expected = self._retrying(lambda c, attempt: self._next_step(c, wire.RESUME, step=step))
        return self

    def __iter__(self) -> Iterator[Step]:
        return self

    def __next__(self) -> Step:
        step = self._expected

        def request(c: Connection, attempt: int) -> Step:
            if attempt > 0:  # the lost request may have been served: serve the step again
                self._next_step(c, wire.RESUME, step=step)
            c.send(wire.encode_session(wire.NEXT, self._cache, self._run, self._rank, step=step))
            served, epoch, indices, values = wire.read_step(c.reader, self._info, c.peer)
            return Step(served, epoch, indices, values)

        result = self._retrying(request)
        self._expected = step + 1
        return result

    def _next_step(self, c: Connection, op: int, **kw: int) -> int:
        c.send(wire.encode_session(op, self._cache, self._run, self._rank, **kw))
        body = wire.ok_body(c.reader.frame(), c.peer)
        (next_step,) = body.unpack("<q")
        return int(next_step)

    def _retrying(self, request: Callable[[Connection, int], T]) -> T:
        """Runs ``request(connection, attempt)`` up to ATTEMPTS times (see
        :meth:`Transport.call_attempts`)."""
        return self._transport.call_attempts(request, self.ATTEMPTS)
