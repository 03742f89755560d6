"""scripts/make_test_models.py: argument checks of --only, and the committed split (format 2)
fixtures agree with expected.json and with the logits-only fixtures of the same models."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import make_test_models  # noqa: E402

BYO = Path(__file__).resolve().parents[2] / "model-runner" / "src" / "test" / "resources" / "byo"


def _json(path):
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("only", ["bogus", "split,bogus", ","])
def test_only_takes_a_subset_of_the_new_parts(tmp_path, capsys, only):
    assert make_test_models.main(["--out", str(tmp_path), "--only", only]) == 2
    assert "expected a comma-separated subset of split,wide" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_only_needs_an_existing_fixture_directory(tmp_path, capsys):
    out = tmp_path / "byo"
    out.mkdir()
    assert make_test_models.main(["--out", str(out), "--only", "split,wide"]) == 2
    assert "--only needs an existing fixture directory" in capsys.readouterr().err
    assert list(out.iterdir()) == [] and [p.name for p in tmp_path.iterdir()] == ["byo"]


def test_committed_split_fixtures_are_described_by_expected_json():
    expected = _json(BYO / "expected.json")
    assert expected["split_dirs"] == make_test_models.SPLIT_DIRS
    assert all(c["model"] != make_test_models.WIDE for c in expected["cases"])
    for name, split_dir in expected["split_dirs"].items():
        meta = _json(BYO / split_dir / "tensorcache-model.json")
        assert meta["format_version"] == 2 and meta["files"] == {"body": "body.pt", "head": "head.pt"}
        assert not (BYO / split_dir / "model.pt").exists()
        for f in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
            assert (BYO / split_dir / f).read_bytes() == (BYO / name / f).read_bytes()
        v1 = _json(BYO / name / "tensorcache-model.json")
        for key in ("vocab_size", "tokenizer_vocab_size", "hidden_size", "max_positions",
                    "pad_token_id", "bos_token_id", "eos_token_id", "eos_token"):
            assert meta[key] == v1[key], key

    wide = _json(BYO / "wide" / "tensorcache-model.json")
    assert wide["format_version"] == 2 and wide["architecture"] == "Qwen2ForCausalLM"
    assert wide["vocab_size"] == 32768 and wide["tokenizer_vocab_size"] >= 32000
    assert (wide["hidden_size"], wide["num_hidden_layers"], wide["num_attention_heads"],
            wide["num_key_value_heads"], wide["intermediate_size"], wide["max_positions"]) == (
        32, 2, 4, 2, 64, 4096)
    rows = [json.loads(line) for line in (BYO / "data" / "skewed.jsonl").read_text(
        encoding="utf-8").splitlines()]
    assert len(rows) == make_test_models.WIDE_ROWS
    cases = {c["name"]: c for c in expected["split_cases"]}
    assert {"wide-skewed-keep_start-1024", "wide-skewed-keep_end-512"} <= set(cases)
    for case in cases.values():
        assert case["model"] == "wide" and case["dataset"] == "data/skewed.jsonl"
        assert case["format"] == "text" and len(case["rows"]) == len(rows)
    totals = sorted(len(r["prompt_ids"]) + len(r["chosen_ids"])
                    for r in cases["wide-skewed-keep_start-1024"]["rows"])
    assert 90 <= totals[len(totals) // 2] <= 150
    assert sum(t > 560 for t in totals) >= 2 and totals[-1] > 1024


def test_committed_split_copies_equal_the_logits_only_models():
    pytest.importorskip("torch")
    for name, split_dir in make_test_models.SPLIT_DIRS.items():
        diff = make_test_models.check_same_model(BYO / split_dir, BYO / name,
                                                 make_test_models.TOKENIZER_FILES)
        assert diff <= 1e-4


def test_committed_split_values_match_body_and_head():
    pytest.importorskip("torch")
    expected = _json(BYO / "expected.json")
    llama = [c for c in expected["cases"] if c["name"] == "llama-text-keep_end-24"]
    wide = [c for c in expected["split_cases"] if c["name"] == "wide-skewed-keep_end-512"]
    assert llama and wide
    # a few rows of the wide case, the longest among them, keep this quick
    rows = sorted(wide[0]["rows"], key=lambda r: len(r["prompt_ids"]) + len(r["chosen_ids"]))
    wide = [dict(wide[0], rows=rows[:3] + rows[-2:])]
    worst = make_test_models.cross_check_split({"llama": BYO / "llama-split"}, llama)
    worst = max(worst, make_test_models.cross_check_split({"wide": BYO / "wide"}, wide))
    assert worst <= 1.0
