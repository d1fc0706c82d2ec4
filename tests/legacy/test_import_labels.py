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


def test_a_folder_the_file_does_not_list_is_named_by_its_bare_model_id(tmp_path: Path) -> None:
    # That leaderboard named such a folder by its model id (the name before `@`, first `--` as
    # `/`), or by the label of the one entry with that model id.
    names = tmp_path / "models.yaml"
    names.write_text(
        "models:\n- model_id: acme/other\n  temperature: 0.7\n  reasoning_effort: none\n"
        "- model_id: acme/solo\n  temperature: 0.7\n  reasoning_effort: none\n"
        "  display_label: Solo\n"
    )
    folders = [FOLDER, "acme--other@low-t1.0", "acme--solo@high-t0.2", "acme--twin@low-t0.7",
               "acme--twin@low-t1.0"]  # fmt: skip
    assert published_labels(names, folders) == {
        FOLDER: "acme/parrot-2+fastprov",
        "acme--other@low-t1.0": "other@none-t0.7",
        "acme--solo@high-t0.2": "Solo",
        # Two folders of one model id: the name goes to the first, the second keeps its own.
        "acme--twin@low-t0.7": "acme/twin",
    }


def test_a_model_id_with_several_slashes_matches_its_folder() -> None:
    entry = PublishedModel(model_id="nvidia/moonshotai/kimi-k2.5", temperature=0.7,
                           reasoning_effort="none")  # fmt: skip
    assert entry.matches("nvidia--moonshotai--kimi-k2.5@none-t0.7")
    assert not entry.matches("nvidia--moonshotai-kimi-k2.5@none-t0.7")
    assert entry.label == "moonshotai/kimi-k2.5@none-t0.7"


def test_import_names_unlisted_and_several_slash_folders_as_published(
    tmp_path: Path, aib: Any
) -> None:
    repo = _repo(tmp_path)
    write_run(repo / "cache", "nvidia--moonshotai--kimi-k2.5@none-t0.7", 1)
    write_run(repo / "cache", "acme--unlisted@low-t0.7", 1)
    with (repo / "configs" / "models.yaml").open("a", encoding="utf-8") as names:
        names.write("- model_id: nvidia/moonshotai/kimi-k2.5\n  temperature: 0.7\n"
                    "  reasoning_effort: none\n")  # fmt: skip
    imported = aib("import", str(repo / "cache"), "--data-dir", "store")
    assert imported.code == 0, imported.err
    assert "4 of 4 configurations named as published (1 not in the file" in imported.out
    board = aib("leaderboard", "--data-dir", "store", "--suite", "legacy-v2", "--json")
    assert {row["model"] for row in board.json()} == {
        "parrot-2 (fast host)", "old-1@low-t1.0", "moonshotai/kimi-k2.5@none-t0.7",
        "acme/unlisted",
    }  # fmt: skip
