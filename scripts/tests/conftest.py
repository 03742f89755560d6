"""Shared fixtures of the script tests: a tiny bench model made once per session."""

import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS))

# hidden 32, 2 layers, 4 heads, 2 key/value heads, intermediate 64: exports and runs in seconds
TINY_BODY = (32, 2, 4, 2, 64)
TINY_TOKENIZER_VOCAB = 1024
TINY_ROWS = 12
TINY_LONG_ROWS = 2
TINY_SEED = 7


@pytest.fixture(scope="session")
def tiny_bench_model(tmp_path_factory):
    """``make_bench_model.make`` with a tiny body, both models, 12 rows and 2 long rows."""
    pytest.importorskip("transformers")
    import make_bench_model

    out = tmp_path_factory.mktemp("bench-model") / "m"
    return make_bench_model.make(out, TINY_ROWS, TINY_SEED, long_rows=TINY_LONG_ROWS,
                                 body=TINY_BODY, tokenizer_vocab=TINY_TOKENIZER_VOCAB)
