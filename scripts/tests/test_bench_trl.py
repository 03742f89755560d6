"""scripts/bench_trl.py: TRL's own precompute run and timed in a process of its own gives TRL's
values, row for row of the input file (rows TRL drops listed and left without a value), with the
timing and memory fields the benchmark reads; bad input exits 2 with a JSON error."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS))
import bench_trl  # noqa: E402

TOLERANCE = 1e-4


def _rows(model_dir, n):
    lines = (model_dir / "prefs.jsonl").read_text(encoding="utf-8").splitlines()[:n]
    return [json.loads(line) for line in lines]


def _write_rows(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _bench(tmp_path, *args):
    """bench_trl.py in a process of its own; (exit code, stdout JSON, --out JSON)."""
    out = tmp_path / "result.json"
    proc = subprocess.run([sys.executable, str(SCRIPTS / "bench_trl.py"), "--out", str(out),
                           *map(str, args)], capture_output=True, text=True, timeout=600)
    result = json.loads(proc.stdout)
    assert json.loads(out.read_text(encoding="utf-8")) == result
    return proc.returncode, result, proc.stderr


def _trl_directly(hf_dir, rows, max_length, tmp_path):
    """TRL's values as a user gets them: DPOTrainer with its defaults and precompute on."""
    import datasets
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import DPOConfig, DPOTrainer

    datasets.disable_caching()
    tokenizer = AutoTokenizer.from_pretrained(str(hf_dir))
    model = AutoModelForCausalLM.from_pretrained(str(hf_dir))
    args = DPOConfig(output_dir=str(tmp_path / "trl"), use_cpu=True, report_to="none",
                     precompute_ref_log_probs=True, max_length=max_length)
    trainer = DPOTrainer(model=model, args=args, train_dataset=datasets.Dataset.from_list(rows),
                         processing_class=tokenizer)
    data = trainer.train_dataset
    return data["ref_chosen_logps"], data["ref_rejected_logps"]


def _close(a, b):
    return len(a) == len(b) and all(abs(x - y) <= TOLERANCE for x, y in zip(a, b))


def test_values_are_trls_and_the_result_has_every_field(tiny_bench_model, tmp_path):
    pytest.importorskip("trl")
    hf = tiny_bench_model / "small" / "hf"
    rows = _rows(tiny_bench_model, 8)
    data = _write_rows(tmp_path / "rows.jsonl", rows)
    values = tmp_path / "values.json"
    code, r, err = _bench(tmp_path, "--hf-dir", hf, "--dataset", data, "--batch-size", 4,
                          "--threads", 1, "--max-length", 1024, "--warmup-rows", 3,
                          "--values", values)
    assert code == 0, err
    assert r["ok"] is True
    assert (r["rows"], r["computed_rows"], r["dropped_rows"], r["dropped"]) == (8, 8, 0, [])
    assert (r["batch_size"], r["threads"], r["torch_threads"], r["max_length"]) == (4, 1, 1, 1024)
    assert r["truncation_mode"] == "keep_start"
    assert (r["warmup_rows"], r["batches"], r["sequences"]) == (3, 2, 16)
    assert r["warmup_seconds"] > 0 and r["seconds"] > 0 and r["load_seconds"] > 0
    assert r["examples_per_s"] == pytest.approx(8 / r["seconds"])
    phases = r["phases"]
    assert set(phases) == {"hash_seconds", "loop_seconds", "forward_seconds", "write_seconds"}
    assert 0 < phases["forward_seconds"] <= phases["loop_seconds"] < r["seconds"]
    assert 0 < r["tokens"] <= r["padded_tokens"]
    assert r["max_padded_length"] <= 1024
    mem = r["memory"]
    assert mem["rss_before_bytes"] > 0
    assert mem["peak_rss_bytes"] >= max(mem["peak_rss_before_bytes"], mem["rss_before_bytes"])
    assert mem["precompute_peak_rss_bytes"] is None or (
        mem["rss_before_bytes"] * 0.9 <= mem["precompute_peak_rss_bytes"] <= mem["peak_rss_bytes"])
    import trl

    assert r["versions"]["trl"] == trl.__version__
    assert set(r["versions"]) == {"python", "torch", "trl", "transformers", "datasets", "accelerate"}
    assert r["model"]["architecture"] == "Qwen2ForCausalLM" and r["model"]["dtype"] == "float32"
    assert r["values"] == str(values)

    v = json.loads(values.read_text(encoding="utf-8"))
    assert (v["rows"], v["dropped"]) == (8, [])
    chosen, rejected = _trl_directly(hf, rows, 1024, tmp_path)
    assert _close(v["ref_chosen_logps"], chosen)
    assert _close(v["ref_rejected_logps"], rejected)


def test_rows_trl_drops_are_listed_and_get_no_value(tiny_bench_model, tmp_path):
    pytest.importorskip("trl")
    from transformers import AutoTokenizer

    hf = tiny_bench_model / "wide" / "hf"
    rows = _rows(tiny_bench_model, 8)
    tok = AutoTokenizer.from_pretrained(str(hf))
    prompt_lengths = [len(tok(r["prompt"])["input_ids"]) for r in rows]
    max_length = max(prompt_lengths)  # the longest prompt fills it; other rows are cut
    dropped = [i for i, n in enumerate(prompt_lengths) if n >= max_length]
    data = _write_rows(tmp_path / "rows.jsonl", rows)
    values = tmp_path / "values.json"
    code, r, err = _bench(tmp_path, "--hf-dir", hf, "--dataset", data, "--batch-size", 3,
                          "--threads", 1, "--max-length", max_length, "--values", values)
    assert code == 0, err
    assert r["dropped"] == dropped and r["dropped_rows"] == len(dropped)
    assert r["computed_rows"] == 8 - len(dropped)
    assert r["max_padded_length"] <= max_length
    assert r["model"]["vocab_size"] == 151936
    v = json.loads(values.read_text(encoding="utf-8"))
    assert v["dropped"] == dropped
    assert all(v["ref_chosen_logps"][i] is None and v["ref_rejected_logps"][i] is None
               for i in dropped)
    chosen, rejected = _trl_directly(hf, rows, max_length, tmp_path)
    kept = [i for i in range(8) if i not in dropped]
    assert _close([v["ref_chosen_logps"][i] for i in kept], chosen)
    assert _close([v["ref_rejected_logps"][i] for i in kept], rejected)


def test_a_data_set_trl_drops_entirely_exits_2(tiny_bench_model, tmp_path):
    pytest.importorskip("trl")
    data = _write_rows(tmp_path / "rows.jsonl", _rows(tiny_bench_model, 2))
    code, r, err = _bench(tmp_path, "--hf-dir", tiny_bench_model / "small" / "hf", "--dataset",
                          data, "--threads", 1, "--max-length", 2)
    assert code == 2
    assert r == {"ok": False, "exit_code": 2,
                 "error": "TRL dropped every row: each prompt fills max_length 2"}
    assert "error: TRL dropped every row" in err


GOOD = {"prompt": "a", "chosen": " b", "rejected": " c"}


@pytest.mark.parametrize("lines,extra,message", [
    ([json.dumps(GOOD), json.dumps({"prompt": "a", "chosen": " b"})], [],
     "line 2: field 'rejected' is missing"),
    ([json.dumps({**GOOD, "chosen": [{"role": "assistant", "content": "b"}]})], [],
     "line 1: field 'chosen' is list, expected a string (text rows)"),
    (["{not json"], [], "line 1: not JSON"),
    ([], [], "has no rows"),
    ([json.dumps(GOOD)], ["--batch-size", "0"], "--batch-size 0 invalid"),
    ([json.dumps(GOOD)], ["--warmup-rows", "-1"], "--warmup-rows -1 invalid"),
    ([json.dumps(GOOD)], ["--max-length", "1"], "--max-length 1 invalid"),
])
def test_bad_input_exits_2_with_a_json_error(tmp_path, capsys, lines, extra, message):
    hf = tmp_path / "hf"
    hf.mkdir()
    (hf / "config.json").write_text("{}")
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    out = tmp_path / "result.json"
    code = bench_trl.main(["--hf-dir", str(hf), "--dataset", str(data), "--threads", "1",
                           "--out", str(out), *extra])
    captured = capsys.readouterr()
    assert code == 2
    result = json.loads(captured.out)
    assert result["ok"] is False and result["exit_code"] == 2 and message in result["error"]
    assert json.loads(out.read_text(encoding="utf-8")) == result
    assert message in captured.err


def test_a_directory_without_a_model_exits_2(tmp_path, capsys):
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps(GOOD) + "\n", encoding="utf-8")
    code = bench_trl.main(["--hf-dir", str(tmp_path), "--dataset", str(data), "--threads", "1"])
    assert code == 2
    assert "is not a Hugging Face model directory" in json.loads(capsys.readouterr().out)["error"]
