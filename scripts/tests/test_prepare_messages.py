"""Messages rows prepared by scripts/prepare_dataset.py carry exactly the ids and the trained tokens
of TRL's own DataCollatorForChatML (the GKD trainer's collator), with TRL's code and with the
built-in copy of its rules, truncated or not; rows TRL cannot take are refused by row."""

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import prepare_dataset  # noqa: E402

BYO = Path(__file__).resolve().parents[2] / "model-runner/src/test/resources/byo"
LONG_PROMPT = [
    {"role": "system", "content": "You answer briefly. " * 6},
    {"role": "user", "content": "Décris la ville de Kyoto, 京都, en une phrase 🙂."},
    {"role": "assistant", "content": "Une ancienne capitale pleine de temples."},
    {"role": "user", "content": "Et Osaka ?"},
    {"role": "assistant", "content": "Une ville de cuisine."},
]


def conversations():
    rows = [json.loads(line) for line in (BYO / "data/conversational.jsonl").read_text().splitlines()]
    return [r["prompt"] + r["chosen"] for r in rows] + [LONG_PROMPT]


def trl_labels(tokenizer, messages, max_length):
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl.experimental.utils import DataCollatorForChatML

    batch = DataCollatorForChatML(tokenizer=tokenizer, max_length=max_length)([{"messages": messages}])
    return [int(x) for x in batch["input_ids"][0]], [int(x) for x in batch["labels"][0]]


def prepared(tmp_path, model, rows, engine, max_length=None):
    data = tmp_path / f"{model}-{engine}-in.jsonl"
    data.write_text("".join(json.dumps({"messages": m}, ensure_ascii=False) + "\n" for m in rows),
                    encoding="utf-8")
    out = tmp_path / f"{model}-{engine}-out.jsonl"
    prepare_dataset.prepare(BYO / model, data, out, engine=engine, log=lambda m: None,
                            max_length=max_length)
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return lines[0]["tensorcache"], lines[1:]


@pytest.mark.parametrize("model", ["llama", "gpt2"])
@pytest.mark.parametrize("engine", ["trl", "builtin"])
@pytest.mark.parametrize("max_length", [None, 24])
def test_rows_carry_trl_collator_ids_and_labels(tmp_path, model, engine, max_length):
    pytest.importorskip("trl")
    from transformers import AutoTokenizer

    rows = conversations() if max_length is None else [LONG_PROMPT]
    header, lines = prepared(tmp_path, model, rows, engine, max_length)
    tokenizer = AutoTokenizer.from_pretrained(str(BYO / model))
    expected_length = max_length if max_length is not None else min(tokenizer.model_max_length, 1024)
    assert header["max_length"] == expected_length
    assert len(lines) == len(rows)
    for messages, line in zip(rows, lines):
        ids, labels = trl_labels(tokenizer, messages, expected_length)
        assert line["input_ids"] == ids
        assert line["completion_mask"] == [0 if label == -100 else 1 for label in labels]
        assert 0 < sum(line["completion_mask"]) < len(ids)
    if max_length is not None:
        assert len(lines[0]["input_ids"]) == max_length, "the long conversation must be cut"


@pytest.mark.parametrize("engine", ["trl", "builtin"])
def test_a_row_whose_prompt_is_cut_away_is_refused_by_row(tmp_path, engine):
    pytest.importorskip("trl")
    long_answer = [{"role": "user", "content": "Hi"},
                   {"role": "assistant", "content": "A long answer that fills the window. " * 4}]
    with pytest.raises(prepare_dataset.PrepareError, match=r"jsonl:2: .*prompt token"):
        prepared(tmp_path, "llama", [LONG_PROMPT, long_answer], engine, max_length=24)


def test_a_single_message_and_a_max_length_for_preference_rows_are_refused(tmp_path):
    with pytest.raises(prepare_dataset.PrepareError, match=r"jsonl:1: .*1 message, expected at least 2"):
        prepared(tmp_path, "llama", [[{"role": "user", "content": "Hi"}]], "builtin")
    prefs = tmp_path / "prefs.jsonl"
    prefs.write_text(json.dumps({"prompt": "a", "chosen": "b", "rejected": "c"}) + "\n")
    with pytest.raises(prepare_dataset.PrepareError, match="--max-length 8 is for messages rows"):
        prepare_dataset.prepare(BYO / "llama", prefs, tmp_path / "o.jsonl", max_length=8)
