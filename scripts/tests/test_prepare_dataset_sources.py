"""scripts/prepare_dataset.py on tables and save_to_disk folders: --split where it applies and a
clear refusal elsewhere, bad rows named by row and field with nothing written, and the folder
digest the module documents."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

datasets = pytest.importorskip("datasets")
pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import dataset_source  # noqa: E402
import prepare_dataset  # noqa: E402

MODEL = (Path(__file__).resolve().parents[2] / "model-runner" / "src" / "test" / "resources"
         / "byo" / "llama")
TEXT = [{"prompt": "The cat sat on the", "chosen": " mat.", "rejected": " moon."},
        {"prompt": "Is the sky blue?", "chosen": " Yes.", "rejected": " No."},
        {"prompt": "2+2=", "chosen": " 4", "rejected": " 5"}]
GOOD = {"prompt": [{"role": "user", "content": "hi"}],
        "chosen": [{"role": "assistant", "content": "a"}],
        "rejected": [{"role": "assistant", "content": "b"}]}


def _run(tmp_path, dataset, *extra, model=MODEL):
    out = tmp_path / "out" / "prepared.jsonl"
    code = prepare_dataset.main(["--model-dir", str(model), "--dataset", str(dataset),
                                 "--out", str(out), *extra])
    return code, out


def _dataset_dict(tmp_path, splits):
    datasets.disable_progress_bars()
    folder = tmp_path / "prefs"
    datasets.DatasetDict({name: datasets.Dataset.from_list(rows) for name, rows in splits.items()}
                         ).save_to_disk(str(folder))
    return folder


def test_a_dataset_dict_with_several_splits_needs_split(tmp_path, capsys):
    folder = _dataset_dict(tmp_path, {"train": TEXT[:2], "test": TEXT[2:]})
    code, out = _run(tmp_path, folder)
    assert code == 2
    assert f"'{folder}' holds the splits train, test: choose one with --split" in \
        capsys.readouterr().err
    code, out = _run(tmp_path, folder, "--split", "validation")
    assert code == 2
    assert f"--split validation: '{folder}' has no such split; it holds train, test" in \
        capsys.readouterr().err
    assert not out.parent.exists()

    code, out = _run(tmp_path, folder, "--split", "test")
    assert code == 0
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["tensorcache"]["split"] == "test" and lines[0]["tensorcache"]["rows"] == 1
    assert lines[0]["tensorcache"]["source"] == "prefs"
    assert len(lines) == 2


def test_a_dataset_dict_with_one_split_needs_no_split(tmp_path):
    folder = _dataset_dict(tmp_path, {"train": TEXT})
    code, out = _run(tmp_path, folder)
    assert code == 0
    header = json.loads(out.read_text(encoding="utf-8").splitlines()[0])["tensorcache"]
    assert header["split"] == "train" and header["rows"] == 3


@pytest.mark.parametrize("kind", ["jsonl", "parquet", "dataset-folder"])
def test_split_is_refused_where_there_is_one_split(tmp_path, capsys, kind):
    if kind == "jsonl":
        dataset = tmp_path / "prefs.jsonl"
        dataset.write_text("".join(json.dumps(r) + "\n" for r in TEXT), encoding="utf-8")
        what = "is a single JSON lines file"
    elif kind == "parquet":
        dataset = tmp_path / "prefs.parquet"
        pq.write_table(pa.Table.from_pylist(TEXT), str(dataset))
        what = "is a single Parquet file"
    else:
        dataset = tmp_path / "prefs"
        datasets.Dataset.from_list(TEXT).save_to_disk(str(dataset))
        what = "holds a single Dataset"
    code, out = _run(tmp_path, dataset, "--split", "train")
    assert code == 2
    err = capsys.readouterr().err
    assert f"--split train: '{dataset}' {what}" in err, err
    assert "--split applies only to a folder written by DatasetDict.save_to_disk" in err
    assert not out.parent.exists()


def test_a_folder_that_save_to_disk_did_not_write_is_refused(tmp_path, capsys):
    folder = tmp_path / "prefs"
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist(TEXT), str(folder / "train.parquet"))
    code, out = _run(tmp_path, folder)
    assert code == 2
    assert "is a folder without dataset_dict.json or state.json" in capsys.readouterr().err
    assert not out.parent.exists()


def _with(field, value):
    row = dict(GOOD)
    row[field] = value
    return row


# the cases of test_prepare_dataset.py that a table can hold (a column has one type)
CASES = [
    (_with("chosen", []), "field 'chosen' is an empty message list"),
    (_with("prompt", [{"role": "user"}]), "field 'prompt' message 1 has no 'content'"),
    (_with("prompt", [{"content": "hi"}]), "field 'prompt' message 1 has no 'role'"),
    ({k: v for k, v in GOOD.items() if k != "rejected"}, "missing field 'rejected'"),
]


@pytest.mark.parametrize("bad,message", CASES)
def test_a_bad_row_in_a_parquet_file_is_named_by_row_and_field(tmp_path, capsys, bad, message):
    dataset = tmp_path / "prefs.parquet"
    pq.write_table(pa.Table.from_pylist([GOOD, bad, GOOD]), str(dataset))
    code, out = _run(tmp_path, dataset, model=tmp_path / "no-model")
    assert code == 2
    err = capsys.readouterr().err
    assert f"{dataset} row 2: {message}" in err, err
    assert not out.parent.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prefs.parquet"]


def test_a_bad_row_in_a_dataset_dict_names_the_split(tmp_path, capsys):
    folder = _dataset_dict(tmp_path, {"train": [GOOD], "test": [GOOD, GOOD, _with("chosen", [])]})
    code, out = _run(tmp_path, folder, "--split", "test", model=tmp_path / "no-model")
    assert code == 2
    assert f"{folder} split 'test' row 3: field 'chosen' is an empty message list" in \
        capsys.readouterr().err
    assert not out.parent.exists()


def test_a_text_column_of_another_type_is_named_by_row(tmp_path, capsys):
    dataset = tmp_path / "prefs.arrow"
    table = pa.table({"prompt": ["a", "b"], "chosen": [" x", " y"], "rejected": [1, 2]})
    with pa.OSFile(str(dataset), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    code, out = _run(tmp_path, dataset, model=tmp_path / "no-model")
    assert code == 2
    assert f"{dataset} row 1: field 'rejected' must be a string (as on row 1), got int" in \
        capsys.readouterr().err
    assert not out.parent.exists()


def test_a_value_the_rows_digest_cannot_take_is_named_by_row(tmp_path, capsys):
    dataset = tmp_path / "prefs.parquet"
    rows = [dict(TEXT[0], chat_template_kwargs={"x": None}),
            dict(TEXT[1], chat_template_kwargs={"x": b"\x00"})]
    pq.write_table(pa.Table.from_pylist(rows), str(dataset))
    code, out = _run(tmp_path, dataset, model=tmp_path / "no-model")
    assert code == 2
    assert f"{dataset} row 2: cannot digest a value of type bytes" in capsys.readouterr().err
    assert not out.parent.exists()


def test_a_file_that_is_not_what_its_name_says_is_refused(tmp_path, capsys):
    for name, what in (("prefs.parquet", "not a readable Parquet file"),
                       ("prefs.arrow", "not a readable Arrow file")):
        dataset = tmp_path / name
        dataset.write_text(json.dumps(TEXT[0]) + "\n", encoding="utf-8")
        code, out = _run(tmp_path, dataset)
        assert code == 2
        assert f"{dataset}: {what}" in capsys.readouterr().err
        assert not out.parent.exists()


def test_folder_digest_is_the_documented_sha256sum_listing(tmp_path):
    if not (shutil.which("find") and shutil.which("sha256sum") and shutil.which("xargs")):
        pytest.skip("needs find, sort, xargs and sha256sum")
    folder = _dataset_dict(tmp_path, {"train": TEXT[:2], "test": TEXT[2:]})
    (folder / "notes é.txt").write_text("a file of its own\n", encoding="utf-8")
    shell = subprocess.run(
        "find -L . -type f -printf '%P\\n' | LC_ALL=C sort | xargs -d '\\n' sha256sum | sha256sum",
        shell=True, cwd=folder, check=True, capture_output=True, text=True).stdout.split()[0]
    before = dataset_source.folder_sha256(folder)
    assert before == shell
    (folder / "test" / "dataset_info.json").write_text("{}", encoding="utf-8")
    assert dataset_source.folder_sha256(folder) != before
