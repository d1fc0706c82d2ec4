"""`aib import` stores configurations under the names the earlier implementation published."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_importer import FOLDER, OLD_FOLDER, write_run

from independence_bench.legacy.labels import PublishedModel, published_labels

MODELS_YAML = """
models:
- model_id: acme/parrot-2
  temperature: 0.7
  reasoning_effort: none
  provider: fastprov
  display_label: parrot-2 (fast host)
- model_id: acme/old-1
  temperature: 1.0
  reasoning_effort: low
  active: false
- model_id: acme/never-run
  temperature: 0.7
  reasoning_effort: none
"""


def _repo(tmp_path: Path) -> Path:
    """`<repo>/cache/<folders>` beside `<repo>/configs/models.yaml`, as the earlier repo had."""
    repo = tmp_path / "old-bench"
    write_run(repo / "cache", FOLDER, 1)
    write_run(repo / "cache", FOLDER, 2)
    write_run(repo / "cache", OLD_FOLDER, 1, v2=False)
    (repo / "configs").mkdir()
    (repo / "configs" / "models.yaml").write_text(MODELS_YAML, encoding="utf-8")
    return repo


def test_the_published_name_rule() -> None:
    entry = PublishedModel(model_id="google/gemini-3-flash-preview", temperature=0.7,
                           reasoning_effort="none")  # fmt: skip
    assert entry.label == "gemini-3-flash-preview@none-t0.7"
    assert entry.matches("google--gemini-3-flash-preview@none-t0.7")
    assert not entry.matches("google--gemini-3-flash-preview@low-t0.7")
    assert not entry.matches("google--gemini-3-flash-preview+x@none-t0.7")
    hot = PublishedModel(model_id="s/m:free", temperature=1.0, reasoning_effort="low")
    assert hot.label == "m:free@low-t1.0" and hot.matches("s--m:free@low-t1.0")


def test_import_reads_configs_models_yaml_beside_cache(tmp_path: Path, aib: Any) -> None:
    repo = _repo(tmp_path)
    imported = aib("import", str(repo / "cache"), "--data-dir", "store")
    assert imported.code == 0, imported.err
    assert f"labels from {repo / 'configs' / 'models.yaml'}: 2 of 2 configurations" in imported.out
    board = aib("leaderboard", "--data-dir", "store", "--suite", "legacy-v2", "--json")
    assert {row["model"] for row in board.json()} == {"parrot-2 (fast host)", "old-1@low-t1.0"}


def test_labels_file_option_and_imported_cost(tmp_path: Path, aib: Any) -> None:
    repo = _repo(tmp_path)
    names = tmp_path / "names.yaml"
    names.write_text(MODELS_YAML.replace("parrot-2 (fast host)", "Parrot Two"), encoding="utf-8")
    imported = aib("import", str(repo), "--labels", str(names), "--data-dir", "store")
    assert imported.code == 0, imported.err
    assert aib("report", "--data-dir", "store", "--no-charts", "--suite", "legacy-v2").code == 0
    document = json.loads(Path("store/report/results.json").read_text(encoding="utf-8"))
    models = {m["model"]: m for m in document["suites"][0]["models"]}
    model = models["Parrot Two"]
    turn_files = len(list((repo / "cache" / FOLDER).rglob("*.json"))) - 2  # names files
    assert model["cost_usd"] == round(0.001 * turn_files, 6)  # each turn file's gen_cost
    assert document["suites"][0]["judge_cost_usd"] is not None


def test_a_folder_the_file_does_not_name_keeps_its_folder_label(tmp_path: Path) -> None:
    names = tmp_path / "models.yaml"
    names.write_text(
        "models:\n- model_id: acme/other\n  temperature: 0.7\n  reasoning_effort: none\n"
    )
    assert published_labels(names, [FOLDER]) == {}


def test_an_unreadable_labels_file_is_one_line(tmp_path: Path, aib: Any) -> None:
    repo = _repo(tmp_path)
    bad = tmp_path / "bad.yaml"
    bad.write_text("models:\n- temperature: 0.7\n", encoding="utf-8")
    result = aib("import", str(repo), "--labels", str(bad), "--data-dir", "store")
    assert result.code == 2
    assert result.err.startswith(f"aib: error: {bad}: models.0.model_id: Field required")
    assert not Path("store").exists()
