"""The PyTorch adapters and the DPO example, on a node serving a user's model's cache."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, Node, launcher

torch = pytest.importorskip("torch")

BYO = ROOT / "model-runner" / "src" / "test" / "resources" / "byo"
JOB = ["--model-dir", str(BYO / "llama"), "--dataset", str(BYO / "data" / "tokens.jsonl"),
       "--format", "tokens", "--range-size", "4", "--batch-tokens", "64"]


@pytest.fixture(scope="module")
def byo_node(tmp_path_factory):
    data = tmp_path_factory.mktemp("byo")
    fill = launcher(["fill", "--local", "--data-dir", str(data)] + JOB,
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out, _ = fill.communicate(timeout=600)
    assert fill.returncode == 0, out
    node = Node(data, job=JOB)
    yield node
    node.stop()


def test_session_dataset_yields_the_sessions_steps_as_tensors(byo_node):
    from tensorcache import TensorCacheClient
    from tensorcache.pytorch import SessionDataset

    with TensorCacheClient(byo_node.endpoint, timeout=120) as client:
        session = client.session(byo_node.cache, "torch-a", 0, 2, 3, 4)
        items = list(torch.utils.data.DataLoader(SessionDataset(session, steps=5), batch_size=None))
        same = client.session(byo_node.cache, "torch-b", 0, 2, 3, 4)
        assert len(items) == 5
        for item in items:
            step = next(same)
            assert int(item["step"]) == step.step and int(item["epoch"]) == step.epoch
            assert item["indices"].dtype == torch.int64
            assert item["chosen_tokens"].dtype == torch.int32, "token counts are I32"
            assert torch.equal(item["indices"], torch.from_numpy(step.indices))
            for name in ("chosen_logp", "rejected_logp", "chosen_tokens", "rejected_tokens"):
                assert torch.equal(item[name], torch.from_numpy(step.values[name])), name


def test_ref_logps_are_trls_columns_for_the_rows(byo_node):
    from tensorcache import TensorCacheClient
    from tensorcache.pytorch import ref_logps

    rows = torch.tensor([11, 0, 5, 5])
    with TensorCacheClient(byo_node.endpoint, timeout=120) as client:
        columns = ref_logps(client, byo_node.cache, rows)
        values = client.lookup(byo_node.cache, rows.numpy())
    assert sorted(columns) == ["ref_chosen_logps", "ref_rejected_logps"]
    assert np.array_equal(columns["ref_chosen_logps"].numpy(), values["chosen_logp"])
    assert np.array_equal(columns["ref_rejected_logps"].numpy(), values["rejected_logp"])
    with TensorCacheClient(byo_node.endpoint, timeout=120) as client:
        with pytest.raises(KeyError, match="no field 'nope'"):
            ref_logps(client, byo_node.cache, rows, chosen="nope")


def test_the_dpo_example_starts_at_log_2_and_trains(byo_node):
    done = subprocess.run(
        [sys.executable, str(ROOT / "python" / "examples" / "dpo_loop.py"),
         "--endpoint", byo_node.endpoint, "--cache", byo_node.cache,
         "--model-dir", str(BYO / "llama"), "--dataset", str(BYO / "data" / "tokens.jsonl"),
         "--steps", "6"],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    losses = [float(line.split()[-1]) for line in done.stdout.splitlines() if line.startswith("step ")]
    assert len(losses) == 6, done.stdout
    # the policy starts as the reference: the cache holds what this model computes, so log 2
    assert abs(losses[0] - math.log(2)) < 1e-5, losses
    assert min(losses[1:]) < losses[0], f"training moved the loss: {losses}"
