"""Malformed preference rows stop scripts/prepare_dataset.py with an error naming file, line and
field, before any tokenizer is loaded, and nothing is written."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import prepare_dataset  # noqa: E402

GOOD = {
    "prompt": [{"role": "user", "content": "hi"}],
    "chosen": [{"role": "assistant", "content": "a"}],
    "rejected": [{"role": "assistant", "content": "b"}],
}


def _with(field, value):
    row = dict(GOOD)
    row[field] = value
    return row


CASES = [
    (_with("chosen", []), "field 'chosen' is an empty message list"),
    (_with("rejected", "b"), "field 'rejected' must be a list of messages"),
    (_with("prompt", [{"role": "user"}]), "field 'prompt' message 1 has no 'content'"),
    (_with("prompt", [{"content": "hi"}]), "field 'prompt' message 1 has no 'role'"),
    (_with("chosen", [{"role": "assistant", "content": 3}]),
     "field 'chosen' message 1 'content' is int, expected a string"),
    (_with("chosen", ["hello"]), "field 'chosen' message 1 is str"),
    ({k: v for k, v in GOOD.items() if k != "rejected"}, "missing field 'rejected'"),
]


@pytest.mark.parametrize("bad,message", CASES)
def test_a_malformed_row_names_file_line_and_field(tmp_path, capsys, bad, message):
    data = tmp_path / "prefs.jsonl"
    data.write_text(json.dumps(GOOD) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    code = prepare_dataset.main(
        ["--model-dir", str(tmp_path / "no-model"), "--dataset", str(data), "--out", str(out)])
    assert code == 2
    err = capsys.readouterr().err
    assert f"{data}:2: {message}" in err, err
    assert not out.exists()


def test_invalid_json_names_the_line(tmp_path, capsys):
    data = tmp_path / "prefs.jsonl"
    data.write_text(json.dumps(GOOD) + "\n{\"prompt\": [\n", encoding="utf-8")
    code = prepare_dataset.main(
        ["--model-dir", str(tmp_path), "--dataset", str(data), "--out", str(tmp_path / "o.jsonl")])
    assert code == 2
    assert f"{data}:2: not valid JSON" in capsys.readouterr().err


def test_help_has_no_side_effects(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as done:
        prepare_dataset.main(["--help"])
    assert done.value.code == 0
    assert "--model-dir" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []
