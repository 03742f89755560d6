"""Fields of F16, BF16 and I32 through a real node and the lookup port, bit for bit."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from conftest import ROOT, Node, launcher

torch = pytest.importorskip("torch")

BYO = ROOT / "model-runner" / "src" / "test" / "resources" / "byo"
ROWS = sum(1 for _ in open(BYO / "data" / "embedding.jsonl"))


def job(dtype: str):
    return ["--model-dir", str(BYO / "encoder"), "--dataset", str(BYO / "data" / "embedding.jsonl"),
            "--runner", "embedding", "--dtype", dtype, "--range-size", "4", "--batch-tokens", "64",
            "--cache-name", "features-" + dtype.lower()]


@pytest.fixture(scope="module", params=["BF16", "F16"])
def typed_node(request, tmp_path_factory):
    data = tmp_path_factory.mktemp("typed-" + request.param.lower())
    fill = launcher(["fill", "--local", "--data-dir", str(data)] + job(request.param),
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out, _ = fill.communicate(timeout=600)
    assert fill.returncode == 0, out
    node = Node(data, job=job(request.param))
    yield request.param, data, node
    node.stop()


def segment_bits(data, cache: str) -> np.ndarray:
    """The embedding's 16-bit patterns as the node's segment files hold them, read by safetensors."""
    from safetensors.torch import load_file

    files = sorted((data / cache / "segments").glob("range-*.safetensors"))
    parts = [load_file(str(f))["embedding"] for f in files]
    return torch.cat(parts).view(torch.int16).numpy().view(np.uint16)


def test_lookups_serve_the_stored_half_floats(typed_node):
    from tensorcache import TensorCacheClient, bf16_to_float32

    dtype, data, node = typed_node
    with TensorCacheClient(node.endpoint, timeout=120) as client:
        info = client.describe(node.cache)
        field = info.fields[0]
        assert (field.name, field.dtype) == ("embedding", dtype)
        rows = np.arange(ROWS)[::-1].copy()
        values = client.lookup(node.cache, rows)["embedding"]
        expected_dtype = np.dtype("<u2") if dtype == "BF16" else np.dtype("<f2")
        assert values.dtype == expected_dtype and values.shape == (ROWS,) + field.shape
        stored = segment_bits(data, node.cache)
        assert np.array_equal(values.view(np.uint16), stored[rows]), "bit for bit"

        out = np.empty((ROWS,) + field.shape, dtype=expected_dtype)
        client.lookup_into(node.cache, rows, {"embedding": out})
        assert np.array_equal(out, values)
        floats = bf16_to_float32(values) if dtype == "BF16" else values.astype(np.float32)
        assert np.all(np.isfinite(floats)) and np.abs(floats).max() > 0

        session = client.session(node.cache, "typed-run", 0, 1, 7, 4)
        step = next(session)
        assert step.values["embedding"].dtype == expected_dtype
        assert np.array_equal(step.values["embedding"].view(np.uint16), stored[step.indices])
