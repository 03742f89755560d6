"""Trainer sessions over the lookup port, a trainer killed and resumed, and a node dying."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import EXAMPLES, reference
from tensorcache import BadRequest, TensorCacheClient

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def ref(filled, nodes):
    return reference(filled, nodes[0].cache)


def bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint32)


def test_ranks_share_each_epoch_and_values_are_the_caches(nodes, ref):
    cache = nodes[0].cache
    with TensorCacheClient([n.endpoint for n in nodes], timeout=120) as client:
        ranks = [client.session(cache, "py-epoch", r, 2, 7, 100) for r in range(2)]
        assert [r.next_step for r in ranks] == [0, 0]
        seen = []
        for step in range(EXAMPLES // 100):  # one epoch of whole steps
            for r in ranks:
                s = next(r)
                assert (s.step, s.epoch, len(s.indices)) == (step, 0, 50)
                for name, expected in ref.items():
                    assert np.array_equal(bits(s.values[name]), bits(expected[s.indices]))
                seen.extend(s.indices.tolist())
        assert len(seen) == len(set(seen)) == EXAMPLES, "each example once in the epoch"
        again = client.session(cache, "py-epoch-again", 0, 2, 7, 100)
        assert np.array_equal(next(again).indices, client.session(cache, "py-epoch-third", 0, 2, 7, 100).__next__().indices)


def test_resume_serves_a_step_again_and_bad_arguments_are_named(nodes):
    cache = nodes[0].cache
    with TensorCacheClient(nodes[0].endpoint, timeout=120) as client:
        session = client.session(cache, "py-resume", 0, 1, 3, 16)
        first = [next(session) for _ in range(5)]
        session.resume_from(2)
        assert session.next_step == 2
        again = next(session)
        assert (again.step, again.epoch) == (2, 0)
        assert np.array_equal(again.indices, first[2].indices)
        with pytest.raises(BadRequest) as e:
            client.session(cache, "py-bad", 3, 2, 3, 16)  # rank 3 of a world of 2
        assert "rank" in str(e.value) and "3" in str(e.value), str(e.value)


def test_a_trainer_killed_mid_epoch_resumes_exactly_from_its_checkpoint(nodes, tmp_path):
    cache = nodes[0].cache
    endpoints = ",".join(n.endpoint for n in nodes)
    steps = 40

    def trainer(run: str, log: Path, ckpt: Path) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, str(HERE / "trainer.py"), endpoints, cache, run,
                                 str(steps), str(log), str(ckpt)])

    whole_log = tmp_path / "whole.log"
    assert trainer("py-whole", whole_log, tmp_path / "whole.ckpt").wait(300) == 0
    log, ckpt = tmp_path / "killed.log", tmp_path / "killed.ckpt"
    first = trainer("py-killed", log, ckpt)
    deadline = time.time() + 120
    while (not ckpt.exists() or int(ckpt.read_text()) < 12) and time.time() < deadline:
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait(30)
    checkpoint = int(ckpt.read_text())
    assert 12 <= checkpoint < steps, f"killed mid-epoch, at checkpoint {checkpoint}"
    assert trainer("py-killed", log, ckpt).wait(300) == 0

    lines = [line.split(" ", 1) for line in log.read_text().splitlines()]
    by_step = {}
    for step, rest in lines:  # a step logged but not checkpointed is served again: the last wins
        by_step[int(step)] = rest
    whole = [line.split(" ", 1)[1] for line in whole_log.read_text().splitlines()]
    assert sorted(by_step) == list(range(steps)), "no step skipped"
    assert [by_step[s] for s in range(steps)] == whole, "the steps of an uninterrupted run"
    repeated = len(lines) - steps
    assert repeated <= 1, f"{repeated} steps served twice around the kill"


def test_lookups_and_sessions_move_to_the_next_endpoint_when_a_node_dies(nodes, ref):
    """Runs last: it kills the first node."""
    first, second, third = nodes
    cache = first.cache
    everything = np.arange(EXAMPLES)
    with TensorCacheClient(second.endpoint, timeout=120) as warm:
        warm.lookup(cache, everything)  # the second node's replica holds every value now
    with TensorCacheClient([first.endpoint, second.endpoint, third.endpoint], timeout=120) as client:
        client.lookup(cache, [1])  # a pooled connection to the first node
        session = client.session(cache, "py-failover", 0, 1, 5, 32)
        before = [next(session) for _ in range(3)]
        first.kill()
        values = client.lookup(cache, everything)
        after = [next(session) for _ in range(3)]
    for name, expected in ref.items():
        assert np.array_equal(bits(values[name]), bits(expected)), name
    assert [s.step for s in before + after] == list(range(6)), "no step skipped or repeated"
    with TensorCacheClient(second.endpoint, timeout=120) as client:
        fresh = client.session(cache, "py-failover-ref", 0, 1, 5, 32)
        for s in before + after:
            assert np.array_equal(next(fresh).indices, s.indices)
