"""tensorcache.trl against TRL 1.13 itself: the same DPO run, once with TRL's own precompute of the
reference log-probs and once with the values of a TensorCache cache; text rows through an export
file, conversational rows through a node's lookup port."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import pytest

if os.environ.get("CI") != "true":
    pytest.importorskip("trl")
    pytest.importorskip("transformers")

from conftest import Node  # noqa: E402
from trl_runs import MAX_LENGTH, STEPS, make_checkpoint, run_tool, train, write_jsonl  # noqa: E402

TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Dict[str, Any]:
    """The checkpoint, its TensorCache model directory and the rows, made once."""
    root = tmp_path_factory.mktemp("trl")
    rows = make_checkpoint(root / "hf")
    run_tool(["python3", "scripts/export_hf_model.py", "--model", str(root / "hf"), "--out",
              str(root / "model")])
    return {"root": root, "rows": rows, "hf": root / "hf", "model": root / "model"}


def job(work: Dict[str, Any], dataset: Path) -> List[str]:
    return ["--model-dir", str(work["model"]), "--dataset", str(dataset), "--max-length",
            str(MAX_LENGTH), "--range-size", "4", "--data-dir", str(work["root"] / "data")]


@pytest.fixture(scope="module")
def text_export(work) -> Path:
    """The text rows' cache, filled in one process and exported."""
    rows = write_jsonl(work["root"] / "text.jsonl", work["rows"]["text"])
    run_tool(["fill", "--local"] + job(work, rows))
    out = work["root"] / "text.safetensors"
    run_tool(["export"] + job(work, rows) + ["--out", str(out)])
    return out


def close(a: List[float], b: List[float]) -> bool:
    return len(a) == len(b) and all(abs(x - y) <= TOLERANCE * max(1.0, abs(x)) for x, y in zip(a, b))


def assert_same_run(trl: Any, cached: Any, dropped: int, rows: int) -> None:
    assert trl.rows == cached.rows == rows - dropped
    assert close(trl.ref_chosen, cached.ref_chosen), (trl.ref_chosen, cached.ref_chosen)
    assert close(trl.ref_rejected, cached.ref_rejected), (trl.ref_rejected, cached.ref_rejected)
    assert len(trl.losses) >= STEPS and close(trl.losses, cached.losses), (trl.losses, cached.losses)
    assert len(set(round(v, 6) for v in trl.losses)) > 1, "the losses move: the runs train"
    # TRL's own precompute runs the model without gradients; through the cache it never does
    assert trl.forwards_at_init[False] > 0
    assert cached.forwards_at_init[False] == 0 and cached.forwards[False] == 0
    assert cached.forwards[True] == trl.forwards[True]


def test_text_rows_from_an_export_train_as_trl_does(work, text_export):
    rows = work["rows"]["text"]
    trl = train(work["hf"], rows, work["root"] / "run-trl-text")
    cached = train(work["hf"], rows, work["root"] / "run-tc-text", tensorcache=str(text_export))
    assert_same_run(trl, cached, dropped=1, rows=len(rows))  # the long prompt fills max_length


def test_conversational_rows_from_a_lookup_port_train_as_trl_does(work):
    rows = work["rows"]["conversational"]
    raw = write_jsonl(work["root"] / "conversational.jsonl", rows)
    prepared = work["root"] / "conversational.prepared.jsonl"
    run_tool(["python3", "scripts/prepare_dataset.py", "--model-dir", str(work["model"]),
              "--dataset", str(raw), "--out", str(prepared)])
    (work["root"] / "data").mkdir(exist_ok=True)
    node = Node(work["root"] / "data", job=job(work, prepared)[:-2])
    try:
        trl = train(work["hf"], rows, work["root"] / "run-trl-conv")
        cached = train(work["hf"], rows, work["root"] / "run-tc-conv",
                       tensorcache=f"{node.endpoint}/{node.cache}")
    finally:
        node.stop()
    assert_same_run(trl, cached, dropped=0, rows=len(rows))


def test_text_rows_prepared_give_the_same_values_as_text_rows(work, text_export):
    from tensorcache import load_export

    prepared = work["root"] / "text.prepared.jsonl"
    run_tool(["python3", "scripts/prepare_dataset.py", "--model-dir", str(work["model"]),
              "--dataset", str(work["root"] / "text.jsonl"), "--out", str(prepared)])
    run_tool(["fill", "--local"] + job(work, prepared))
    out = work["root"] / "text-prepared.safetensors"
    run_tool(["export"] + job(work, prepared) + ["--out", str(out)])
    direct, via = load_export(text_export), load_export(out)
    assert direct.cache_id != via.cache_id  # two files, two caches
    for name, values in direct.values.items():
        assert np.array_equal(values, via.values[name]), name
    assert direct.inputs["rows_sha256"] == via.inputs["rows_sha256"]


def mismatch(work: Dict[str, Any], source: Path, rows: List[Dict[str, Any]], **change: Any) -> str:
    from tensorcache.trl import CacheMismatch

    with pytest.raises(CacheMismatch) as e:
        train(work["hf"], rows, work["root"] / "run-stale", tensorcache=str(source), **change)
    return str(e.value)


def test_a_stale_or_foreign_cache_is_refused_naming_each_input(work, text_export):
    import torch

    rows = [dict(r) for r in work["rows"]["text"]]
    rows[3]["chosen"] += " (edited)"
    message = mismatch(work, text_export, rows)
    assert "rows_sha256" in message and "./tensorcache fill --model-dir" in message, message
    message = mismatch(work, text_export, work["rows"]["text"], max_length=64)
    assert "DPOConfig.max_length (max_length): cache '128', given '64'" in message, message

    def perturbed(model: Any) -> None:
        with torch.no_grad():
            next(model.parameters()).view(-1)[0] += 1e-3

    message = mismatch(work, text_export, work["rows"]["text"], perturb=perturbed)
    assert "model weights (model_state_sha256)" in message, message


def test_an_eval_set_takes_the_values_of_its_own_cache(work, text_export):
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from tensorcache.trl import DPOTrainer
    from trl_runs import dpo_config

    rows = Dataset.from_list(work["rows"]["text"])
    model = AutoModelForCausalLM.from_pretrained(str(work["hf"]), dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(str(work["hf"]))
    args = dpo_config(work["root"] / "run-eval")
    with pytest.raises(TypeError, match="eval_tensorcache"):
        DPOTrainer(model, args=args, train_dataset=rows, eval_dataset=rows,
                   processing_class=tokenizer, tensorcache=str(text_export))
    trainer = DPOTrainer(model, args=args, train_dataset=rows, eval_dataset={"held": rows},
                         processing_class=tokenizer, tensorcache=str(text_export),
                         eval_tensorcache={"held": str(text_export)})
    held = trainer.eval_dataset["held"]
    assert held["ref_chosen_logps"] == trainer.train_dataset["ref_chosen_logps"]
    assert "tensorcache_chosen_tokens" not in held.column_names
    assert np.isfinite(trainer.evaluate()["eval_held_loss"])
