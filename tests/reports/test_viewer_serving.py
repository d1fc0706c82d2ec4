"""The served viewer serves only its own files, and a stopped `aib view` leaves a whole folder.

`aib view --out . --serve` in a project folder served `.env` (its key) and followed symlinks
(`/etc/passwd`); an `aib view` killed by SIGTERM left `index.html` with no data behind it.
Real HTTP requests to the served port, and a real SIGTERM to a child `aib view` stopped while
it writes a model's data.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from independence_bench.reports.viewer import make_server
from independence_bench.workflows.view import ViewOptions, build_viewer
from support.child_process import env_with_this_package
from support.report_fixtures import FEW_RESAMPLES, build_store

SECRET = "sk-or-v1-NEVER-SERVED"


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A project folder with a key in `.env`, a note, a symlink out, and the viewer in it."""
    build_store(tmp_path / "store", {"a": 0.9, "b": 0.3}, runs=1).close()
    out = tmp_path / "project"
    out.mkdir()
    (out / ".env").write_text(f"OPENROUTER_API_KEY={SECRET}\n")
    (out / "notes.txt").write_text(SECRET)
    outside = tmp_path / "outside.txt"
    outside.write_text(SECRET)
    (out / "passwd").symlink_to(outside)
    build_viewer(ViewOptions(data_dir=tmp_path / "store", out=out, resampling=FEW_RESAMPLES))
    return out


@pytest.fixture()
def served(project: Path) -> Iterator[str]:
    server = make_server(project, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}"
    finally:
        server.shutdown()
        server.server_close()


def _status(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read()


def _model_files(out: Path) -> list[Path]:
    return sorted((out / "data" / "models").glob("m-*.js"))


def test_only_the_viewers_own_files_are_served(project: Path, served: str) -> None:
    model = _model_files(project)[0].name
    for path in ("/", "/index.html", "/app.js", "/data/index.js", f"/data/models/{model}"):
        assert _status(served + path)[0] == 200, path
    for path in ("/.env", "/%2eenv", "/notes.txt", "/passwd", "/data/../.env", "/.data-x/"):
        code, body = _status(served + path)
        assert code == 404 and SECRET.encode() not in body, path


def test_a_symlink_in_place_of_a_viewer_file_is_not_followed(
    project: Path, served: str, tmp_path: Path
) -> None:
    model = _model_files(project)[0]
    model.unlink()
    model.symlink_to(tmp_path / "outside.txt")
    code, body = _status(f"{served}/data/models/{model.name}")
    assert code == 404 and SECRET.encode() not in body
    (project / "app.js").unlink()
    (project / "app.js").symlink_to(tmp_path / "outside.txt")
    assert _status(served + "/app.js")[0] == 404


CHILD = """
import sys, time
import independence_bench.reports.viewer._write as write
real = write.model_data
def slow(*args, **kwargs):
    print("writing a model", flush=True)
    time.sleep(60)
    return real(*args, **kwargs)
write.model_data = slow
from independence_bench.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def _whole(out: Path) -> bool:
    """Whether the page, if there, has every data file its index names."""
    if not (out / "index.html").exists():
        return True
    index = (out / "data" / "index.js").read_text()
    slugs = set(re.findall(r"m-[0-9a-f]{20}", index))
    files = {path.stem for path in _model_files(out)}
    return bool(slugs) and slugs <= files and (out / "data" / "shared.js").exists()


@pytest.mark.parametrize("earlier", [False, True], ids=["first", "rebuild"])
def test_a_sigterm_while_writing_leaves_the_folder_whole(earlier: bool, tmp_path: Path) -> None:
    build_store(tmp_path / "store", {"a": 0.9, "b": 0.3}, runs=1).close()
    out = tmp_path / "viewer"
    if earlier:
        build_viewer(ViewOptions(data_dir=tmp_path / "store", out=out, resampling=FEW_RESAMPLES))
    args = ["view", "--data-dir", str(tmp_path / "store"), "--out", str(out)]
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, *args, "--resamples", "100"],
        env=env_with_this_package(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline() == "writing a model\n", child.stderr.read()
    child.send_signal(signal.SIGTERM)
    child.communicate(timeout=60)
    assert child.returncode == -signal.SIGTERM
    assert _whole(out)
    assert (out / "index.html").exists() is earlier
    assert [p.name for p in out.iterdir() if p.name.startswith(".data-staging-")] != []
    build_viewer(ViewOptions(data_dir=tmp_path / "store", out=out, resampling=FEW_RESAMPLES))
    assert _whole(out) and (out / "index.html").exists()
    leftovers = [p.name for p in out.iterdir() if p.name.startswith(".")]
    assert leftovers == [], "the dead process's staging folder was not removed"
    assert os.path.isdir(out / "data")
