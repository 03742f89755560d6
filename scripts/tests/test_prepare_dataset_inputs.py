"""scripts/prepare_dataset.py reads Parquet, Arrow (stream and file) and save_to_disk folders made
from a JSON lines file into the same prepared rows and the same rows_sha256 as the JSON lines
file itself, conversational and text, and records what it read in the header."""

import hashlib
import json
import shutil
import sys
from pathlib import Path

import pytest

datasets = pytest.importorskip("datasets")
pa = pytest.importorskip("pyarrow")
pytest.importorskip("transformers")

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "python"))
import dataset_source  # noqa: E402
import prepare_dataset  # noqa: E402
from tensorcache import digests  # noqa: E402

BYO = REPO / "model-runner" / "src" / "test" / "resources" / "byo"
MODEL = BYO / "llama"
DATA = {"text": BYO / "data" / "text.jsonl", "conversational": BYO / "data" / "conversational.jsonl"}
KINDS = ("parquet", "arrow-stream", "arrow-file", "dataset-folder", "dataset-dict-folder")


def _read(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _loaded(jsonl, tmp_path):
    """The JSON lines file as a user loads it with datasets (the cache kept in tmp_path)."""
    datasets.disable_progress_bars()
    return datasets.load_dataset("json", data_files=str(jsonl), split="train",
                                 cache_dir=str(tmp_path / "hf-cache"))


def make_input(kind, jsonl, tmp_path):
    """``jsonl`` turned into an input of ``kind``; returns (path, split argument)."""
    ds = _loaded(jsonl, tmp_path)
    if kind == "parquet":
        out = tmp_path / "prefs.parquet"
        ds.to_parquet(str(out))
        return out, None
    if kind == "arrow-stream":  # the cache file datasets itself wrote
        out = tmp_path / "prefs.arrow"
        shutil.copyfile(ds.cache_files[0]["filename"], out)
        assert out.read_bytes()[:4] == b"\xff\xff\xff\xff"
        return out, None
    if kind == "arrow-file":
        out = tmp_path / "prefs-file.arrow"
        table = ds.data.table
        with pa.OSFile(str(out), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        assert out.read_bytes()[:6] == b"ARROW1"
        return out, None
    if kind == "dataset-folder":
        out = tmp_path / "prefs-ds"
        ds.save_to_disk(str(out))
        return out, None
    out = tmp_path / "prefs-dict"
    other = ds.select([0])  # another split, so that --split has a choice to make
    datasets.DatasetDict({"train": other, "test": ds}).save_to_disk(str(out))
    return out, "test"


def _prepare(dataset, out, split=None, engine="trl"):
    args = ["--model-dir", str(MODEL), "--dataset", str(dataset), "--out", str(out),
            "--engine", engine]
    if split is not None:
        args += ["--split", split]
    assert prepare_dataset.main(args) == 0
    lines = _read(out)
    return lines[0]["tensorcache"], lines[1:]


@pytest.fixture(scope="module")
def from_jsonl(tmp_path_factory):
    """The prepared header and rows of each committed JSON lines file."""
    out = tmp_path_factory.mktemp("jsonl")
    return {fmt: _prepare(path, out / f"{fmt}.jsonl") for fmt, path in DATA.items()}


def test_jsonl_header_names_what_was_read(from_jsonl):
    for fmt, path in DATA.items():
        header, rows = from_jsonl[fmt]
        assert header["source"] == path.name
        assert header["source_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert header["rows_sha256"] == digests.rows_digest(_read(path))
        assert header["rows"] == len(rows) == len(_read(path))
        assert "split" not in header
    # the committed preparation of the conversational rows is what the script writes today
    assert from_jsonl["conversational"][1] == _read(BYO / "data" / "conversational.llama.jsonl")[1:]
    assert from_jsonl["text"][0]["rows_sha256"] != from_jsonl["conversational"][0]["rows_sha256"]


@pytest.mark.parametrize("fmt", sorted(DATA))
@pytest.mark.parametrize("kind", KINDS)
def test_every_input_kind_prepares_like_the_jsonl(tmp_path, from_jsonl, kind, fmt):
    dataset, split = make_input(kind, DATA[fmt], tmp_path)
    header, rows = _prepare(dataset, tmp_path / "out.jsonl", split)
    want_header, want_rows = from_jsonl[fmt]
    assert rows == want_rows
    assert header["rows_sha256"] == want_header["rows_sha256"]
    assert header["chat_template_sha256"] == want_header["chat_template_sha256"]
    assert header["tokenizer_sha256"] == want_header["tokenizer_sha256"]
    assert header["source"] == dataset.name
    if dataset.is_dir():
        assert header["source_sha256"] == dataset_source.folder_sha256(dataset)
    else:
        assert header["source_sha256"] == hashlib.sha256(dataset.read_bytes()).hexdigest()
    assert header["source_sha256"] != want_header["source_sha256"]
    assert header.get("split") == split


def test_text_rows_tokenize_alike_with_the_builtin_rules(tmp_path, from_jsonl):
    dataset, _ = make_input("parquet", DATA["text"], tmp_path)
    _, rows = _prepare(dataset, tmp_path / "out.jsonl", engine="builtin")
    assert rows == from_jsonl["text"][1]


def test_rows_sha256_of_a_parquet_file_is_the_documented_value(tmp_path):
    rows = [{"prompt": "Hi", "chosen": " yes", "rejected": " no"}]
    dataset = tmp_path / "one.parquet"
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(rows), str(dataset))
    header, _ = _prepare(dataset, tmp_path / "out.jsonl")
    assert header["rows_sha256"] == "52e23b337a161856e3aea1b7c39a6d5359d04a1113eb1455b2135e7f6c955b05"


TOOLS = [{"type": "function", "function": {"name": "weather", "description": "The weather.",
                                           "parameters": {"type": "object", "properties": {
                                               "city": {"type": "string"}}}}}]


def test_tools_that_only_a_later_row_has_reach_the_chat_template(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(MODEL / name, model / name)
    template = (MODEL / "chat_template.jinja").read_text(encoding="utf-8")
    (model / "chat_template.jinja").write_text(
        "{%- if tools %}{{ tools | tojson }}{%- endif %}" + template, encoding="utf-8")
    rows = _read(DATA["conversational"])[:2]
    with_tools = [rows[0], dict(rows[1], tools=TOOLS)]
    jsonl = tmp_path / "tools.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in with_tools), encoding="utf-8")
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    parquet, _ = make_input("parquet", jsonl, tmp_path)

    def prepared(dataset, name):
        out = tmp_path / name
        assert prepare_dataset.main(["--model-dir", str(model), "--dataset", str(dataset),
                                     "--out", str(out), "--engine", "trl"]) == 0
        lines = _read(out)
        return lines[0]["tensorcache"], lines[1:]

    tools_header, tools_rows = prepared(jsonl, "a.jsonl")
    plain_header, plain_rows = prepared(plain, "b.jsonl")
    assert tools_rows[0] == plain_rows[0]
    assert len(tools_rows[1]["prompt_ids"]) > len(plain_rows[1]["prompt_ids"])
    assert tools_header["rows_sha256"] != plain_header["rows_sha256"]
    parquet_header, parquet_rows = prepared(parquet, "c.jsonl")
    assert parquet_rows == tools_rows
    assert parquet_header["rows_sha256"] == tools_header["rows_sha256"]
