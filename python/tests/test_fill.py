"""Lookups while a cache fills: every value is the computed one, never a missing one."""

from __future__ import annotations

import subprocess

import numpy as np

from conftest import RANGE_SIZE, Node, launcher, reference
from tensorcache import TensorCacheClient

EXAMPLES = 20000
JOB = ["--examples", str(EXAMPLES), "--range-size", str(RANGE_SIZE), "--data-seed", "43"]


def test_lookups_during_a_fill_return_computed_values(tmp_path):
    # what is checked is the values, not how fast: on a loaded machine a lookup of values still
    # being computed may wait longer than the default 30 s
    node = Node(tmp_path, job=JOB, java_opts="-Dtensorcache.lookup.timeout=180s")
    try:
        fill = launcher(["fill", "--seeds", node.address, "--host", "127.0.0.1", "--data-dir",
                         str(tmp_path)] + JOB,
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        rng = np.random.default_rng(4)
        answered = []
        during = 0
        with TensorCacheClient(node.endpoint, timeout=300) as client:
            while fill.poll() is None or len(answered) < 20:
                indices = rng.integers(0, EXAMPLES, 256)
                answered.append((indices, client.lookup(node.cache, indices)))
                during += fill.poll() is None
        out, _ = fill.communicate(timeout=600)
        assert fill.returncode == 0, out
        assert during > 0, "some lookups were answered while the fill ran"
        ref = reference(tmp_path, node.cache, EXAMPLES)
        for indices, values in answered:
            for name, expected in ref.items():
                assert np.array_equal(values[name].view(np.uint32), expected[indices].view(np.uint32)), name
    finally:
        node.stop()
