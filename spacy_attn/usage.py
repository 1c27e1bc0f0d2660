"""The mistakes a user makes in a command's files and options, found by the
library functions that the ``attn`` commands call (each command prints the
message as one line and exits 1, or the error's own ``exit_code``)."""

from pathlib import Path
from typing import Union


class UsageError(ValueError):
    """A file or option of a command that cannot be used; the message names
    it as the command's user knows it (e.g. "DATA", "--top-k"). The command
    exits with ``exit_code``, which a subclass may change."""

    exit_code: int = 1


def require_file(path: Union[str, Path], what: str) -> None:
    """Refuse a path that is not an existing file.

    path (Union[str, Path]): The path given.
    what (str): Its name for the user (e.g. "DATA", "--idf-data").
    RAISES (UsageError): If it does not exist, or is a directory.
    """
    path = Path(path)
    if not path.exists():
        raise UsageError(f"{what} not found: {path}")
    if path.is_dir():
        raise UsageError(f"{what} {path} is a directory; pass a file.")


__all__ = ["UsageError", "require_file"]
