"""scripts/make_bench_model.py: the layout and description it writes, the skewed lengths of its
rows as TRL tokenizes them, determinism from the seed, and its argument checks."""

import json
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_rows  # noqa: E402
import make_bench_model  # noqa: E402
from conftest import (  # noqa: E402
    TINY_BODY, TINY_LONG_ROWS, TINY_ROWS, TINY_SEED, TINY_TOKENIZER_VOCAB)


def _info(out):
    return json.loads((out / "bench-model.json").read_text(encoding="utf-8"))


def _lines(path):
    return path.read_text(encoding="utf-8").splitlines()


def test_both_models_are_saved_and_exported_both_ways(tiny_bench_model):
    out = tiny_bench_model
    info = _info(out)
    assert set(info["models"]) == {"small", "wide"}
    assert info["architecture"] == "Qwen2ForCausalLM"
    assert (info["hidden_size"], info["layers"], info["attention_heads"], info["key_value_heads"],
            info["intermediate_size"]) == TINY_BODY
    assert info["max_positions"] == 4096
    assert info["tokenizer_vocab_size"] == TINY_TOKENIZER_VOCAB
    small, wide = info["models"]["small"], info["models"]["wide"]
    assert small["vocab_size"] == TINY_TOKENIZER_VOCAB
    assert wide["vocab_size"] == 151936
    assert small["body_parameters"] == wide["body_parameters"]
    for name, m in info["models"].items():
        hf = json.loads((out / m["hf_dir"] / "config.json").read_text(encoding="utf-8"))
        assert hf["architectures"] == ["Qwen2ForCausalLM"]
        assert hf["vocab_size"] == m["vocab_size"]
        assert hf["max_position_embeddings"] == 4096
        assert (out / m["hf_dir"] / "tokenizer.json").is_file()
        assert m["model_dir"] == f"{name}/model"
        assert m["model_logits_dir"] == f"{name}/model-logits"
        split = json.loads((out / m["model_dir"] / "tensorcache-model.json").read_text("utf-8"))
        logits = json.loads(
            (out / m["model_logits_dir"] / "tensorcache-model.json").read_text("utf-8"))
        assert split["format_version"] == 2 and m["model"]["files"] == ["body.pt", "head.pt"]
        assert logits["format_version"] == 1 and m["model_logits"]["files"] == ["model.pt"]
        for meta in (split, logits):
            assert meta["vocab_size"] == m["vocab_size"]
            assert meta["tokenizer_vocab_size"] == TINY_TOKENIZER_VOCAB
    assert info["files"] == {"dataset": "prefs.jsonl", "long_dataset": "long.jsonl",
                             "model_dir": "small/model", "hf_dir": "small/hf"}
    assert not [p.name for p in out.parent.iterdir() if p.name.startswith(".")]


def test_lengths_are_measured_as_trl_tokenizes_the_rows(tiny_bench_model):
    from transformers import AutoTokenizer

    out = tiny_bench_model
    info = _info(out)
    tok = AutoTokenizer.from_pretrained(str(out / "small" / "hf"))
    for file, key, rows, low, high in (("prefs.jsonl", "sequence_tokens", TINY_ROWS, 2, 1000),
                                       ("long.jsonl", "long_sequence_tokens", TINY_LONG_ROWS,
                                        1500, 2048)):
        data = [json.loads(line) for line in _lines(out / file)]
        assert len(data) == rows
        lengths = []
        for r in data:
            assert set(r) == {"prompt", "chosen", "rejected"} and r["chosen"] != r["rejected"]
            prompt = tok(r["prompt"])["input_ids"]
            for k in ("chosen", "rejected"):
                ids = tok(r["prompt"] + r[k] + tok.eos_token)["input_ids"]
                assert ids[:len(prompt)] == prompt and ids[-1] == tok.eos_token_id
                lengths.append(len(ids))
        assert low <= min(lengths) and max(lengths) <= high
        assert info[key] == make_bench_model.percentiles(lengths)
        assert info[key]["count"] == 2 * rows


def test_drawn_lengths_are_skewed_with_a_long_tail():
    rng = random.Random(1)
    draws = [bench_rows.draw_lengths(rng) for _ in range(20000)]
    sequences = [p + c for p, chosen, rejected in draws for c in (chosen, rejected)]
    stats = bench_rows.percentiles(sequences)
    assert 110 <= stats["p50"] <= 130
    assert 260 <= stats["p90"] <= 300
    assert stats["max"] <= 1000 - bench_rows.SLACK
    assert sum(s > 560 for s in sequences) / len(sequences) > 0.005
    # chosen and rejected lengths are drawn independently
    same = sum(chosen == rejected for _, chosen, rejected in draws)
    assert same < 0.05 * len(draws)
    long = [bench_rows.draw_long_lengths(rng) for _ in range(1000)]
    assert all(1500 <= p + c <= 2048 for p, chosen, rejected in long for c in (chosen, rejected))


def test_the_same_seed_makes_the_same_rows_tokenizer_and_weights(tiny_bench_model, tmp_path):
    from safetensors.torch import load_file

    again = make_bench_model.make(tmp_path / "again", 5, TINY_SEED, models=["small"],
                                  body=TINY_BODY, tokenizer_vocab=TINY_TOKENIZER_VOCAB)
    # the first rows of a longer data set are the same rows; long rows do not change them
    assert _lines(again / "prefs.jsonl") == _lines(tiny_bench_model / "prefs.jsonl")[:5]
    assert not (again / "long.jsonl").exists()
    assert ((again / "small" / "hf" / "tokenizer.json").read_bytes()
            == (tiny_bench_model / "small" / "hf" / "tokenizer.json").read_bytes())
    a = load_file(str(again / "small" / "hf" / "model.safetensors"))
    b = load_file(str(tiny_bench_model / "small" / "hf" / "model.safetensors"))
    assert a.keys() == b.keys() and all(a[k].equal(b[k]) for k in a)
    assert set(_info(again)["models"]) == {"small"}


@pytest.mark.parametrize("args,message", [
    (["--rows", "0"], "--rows 0 invalid"),
    (["--long-rows", "-1"], "--long-rows -1 invalid"),
    (["--models", "small,huge"], "--models small,huge invalid"),
    (["--body", "30,2,4,2,64"], "--body 30,2,4,2,64 invalid"),
    (["--tokenizer-vocab", "100"], "--tokenizer-vocab 100 invalid"),
])
def test_bad_arguments_exit_2_and_write_nothing(tmp_path, capsys, args, message):
    out = tmp_path / "m"
    assert make_bench_model.main(["--out", str(out)] + args) == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_non_empty_out_directory_is_refused(tmp_path, capsys):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "x").write_text("x")
    assert make_bench_model.main(["--out", str(tmp_path / "m"), "--rows", "1"]) == 2
    assert "is not an empty directory" in capsys.readouterr().err
