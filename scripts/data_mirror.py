"""The local data mirror: one name for it across the checkout's scripts,
benchmarks and tests (not part of the installed package: the default below is
a path beside the checkout, which means nothing in site-packages).

The project's data steps fetch the official files; a *mirror* is a local
folder in the same layout as the workplace's ``shared/data`` (one file per
dataset and a ``SHA256SUMS`` beside them) that replaces the downloads, for
offline machines and CI. It is found in one way everywhere: the environment
variable ``SPACY_ATTN_MIRROR`` if it is set, else ``shared/data`` beside the
checkout (``../shared/data`` from the repository root).
"""

import hashlib
import os
from pathlib import Path
from typing import Dict, Optional, Union

MIRROR_ENV = "SPACY_ATTN_MIRROR"
"""The environment variable that names the data mirror folder."""

# The checkout that holds this file (scripts/ is one level below its root).
_CHECKOUT = Path(__file__).resolve().parent.parent


def mirror_dir() -> Path:
    """The data mirror folder: ``$SPACY_ATTN_MIRROR``, else ``../shared/data``
    beside the repository. The folder may not exist; callers say what is
    missing when they open a file in it.

    RETURNS (Path): The mirror folder.
    """
    return Path(os.environ.get(MIRROR_ENV) or _CHECKOUT.parent / "shared" / "data")


class DataError(RuntimeError):
    """A data file (an official download or a mirror copy) is missing, not
    listed in the mirror's ``SHA256SUMS`` or does not match its checksum. The
    message names the file and what to do."""


def sha256(path: Path) -> str:
    """The hex sha256 digest of a file, read in 1 MiB blocks.

    path (Path): The file.
    RETURNS (str): The digest.
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def checked_file(path: Path, expected_sha256: Optional[str]) -> Path:
    """``path`` (an official asset), after checking it against its published
    sha256 (when one is known).

    RAISES (DataError): The file's sha256 is not the published one.
    """
    if expected_sha256 and sha256(path) != expected_sha256:
        raise DataError(
            f"Checksum mismatch for {path}: sha256 is not the published "
            f"{expected_sha256}. Delete it and run `python -m spacy project assets` again."
        )
    return path


class Mirror:
    """A local mirror folder with a ``SHA256SUMS`` file (the shared/data
    layout). ``get`` returns a file only after checking it against its listed
    sha256, so a truncated or replaced copy never reaches a corpus.
    """

    def __init__(self, root: Optional[Union[str, Path]]):
        """root (Optional[Union[str, Path]]): The mirror folder; None or ""
        for no mirror (``get`` then says how to fetch the official files).
        """
        self.root = Path(root) if root else None
        self._sums: Optional[Dict[str, str]] = None

    @classmethod
    def from_setting(cls, value: Optional[str]) -> "Mirror":
        """The mirror a script's ``--mirror`` option names, with
        ``$SPACY_ATTN_MIRROR`` taking precedence when set; ``""`` or None
        (and no environment variable) means no mirror.

        value (Optional[str]): The option's value.
        RETURNS (Mirror): The mirror.
        """
        return cls(os.environ.get(MIRROR_ENV) or value or None)

    def sums(self) -> Dict[str, str]:
        """RETURNS (Dict[str, str]): The mirror's ``SHA256SUMS``, file -> sha256.
        RAISES (DataError): If the mirror has no ``SHA256SUMS``.
        """
        if self._sums is None:
            # Only a mirror with a folder has checksums (get() checks first).
            assert self.root is not None
            sums_file = self.root / "SHA256SUMS"
            if not sums_file.exists():
                raise DataError(
                    f"Mirror checksum file {sums_file} not found: is {self.root} a "
                    f"data mirror? Set vars.mirror in project.yml (or {MIRROR_ENV})."
                )
            self._sums = {}
            for line in sums_file.read_text().splitlines():
                if line.strip():
                    digest, name = line.split(maxsplit=1)
                    self._sums[name.strip().lstrip("*")] = digest
        return self._sums

    def get(self, rel: str) -> Path:
        """The verified path of a mirror file.

        rel (str): The file's path inside the mirror, e.g. "sick/train.jsonl.gz".
        RETURNS (Path): The file.
        RAISES (DataError): If no mirror is set, the file is missing, not
            listed in ``SHA256SUMS`` or its sha256 differs.
        """
        if self.root is None:
            raise DataError(
                f"Need {rel!r} but no official file was found under assets/ and no "
                f"mirror is set. Run `python -m spacy project assets`, or set "
                f"vars.mirror / {MIRROR_ENV} to a data mirror folder."
            )
        path = self.root / rel
        if not path.exists():
            raise DataError(
                f"Mirror file {path} is missing. Check vars.mirror (now {self.root}) "
                f"or fetch the official data with `python -m spacy project assets`."
            )
        expected = self.sums().get(rel)
        if expected is None:
            raise DataError(
                f"Mirror file {path} is not listed in {self.root / 'SHA256SUMS'}."
            )
        if sha256(path) != expected:
            raise DataError(
                f"Checksum mismatch for mirror file {path}: expected sha256 {expected} "
                f"(from {self.root / 'SHA256SUMS'}). Replace the file with a good copy."
            )
        return path


__all__ = ["MIRROR_ENV", "mirror_dir", "DataError", "Mirror", "sha256"]
