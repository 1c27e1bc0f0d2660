"""The one check that a command writes nothing but its output: before a
command opens anything, every path it will write is compared with every path
it reads (the model directory included), so that ``predict pairs.csv
pairs.csv --overwrite`` is refused instead of emptying the input.

Two paths are the same file when ``os.path.samefile`` says so (a symlink or a
hard link to the input is the input: same device and inode), else when they
resolve to the same path (an output that does not exist yet). A written path
inside an input directory (the model's) or an input inside a written
directory is refused too: writing there changes or replaces the input.
"""

import os
from pathlib import Path
from typing import Any, List, Mapping, Optional, Sequence, Tuple


class OutputPathError(ValueError):
    """An output path that would write over an input, or over another output
    of the same run (the message names both paths and what to do)."""


def check_outputs(
    outputs: Mapping[str, Any],
    inputs: Mapping[str, Any],
    *,
    entries: Optional[Mapping[str, Sequence[str]]] = None,
) -> None:
    """Refuse, before anything is opened, an output that is an input.

    outputs (Mapping[str, Any]): What the command writes, by the name the
        user knows it by: {"OUTPUT": "preds.jsonl", "--rejects": None}.
    inputs (Mapping[str, Any]): What it reads, the same way: {"INPUT":
        "pairs.csv", "MODEL": "training/model-best"}.
    entries (Optional[Mapping[str, Sequence[str]]]): For a directory
        output, the names written inside it ({"--output": ["model-best"]});
        without: the path itself (a file, or a directory written as a whole,
        as ``nlp.to_disk`` does).
    RAISES (OutputPathError): Naming the output, the input, how they are
        the same and what to do.

    A value that is not a path (None, "-" for stdout, a loaded pipeline) is
    skipped, and so is an input that does not exist (a package name, a
    missing file): there is nothing to destroy, and its reader reports it.
    """
    written = _written(outputs, entries or {})
    read = [
        (what, Path(path))
        for what, path in inputs.items()
        if _is_path(path) and Path(path).exists()
    ]
    for out_what, out_path in written:
        for what, path in read:
            how = _overlap(out_path, path)
            if how is not None:
                raise OutputPathError(_message(out_what, out_path, what, path, how))
    for i, (first, a) in enumerate(written):
        for second, b in written[i + 1 :]:
            if first != second and _overlap(a, b) is not None:
                raise OutputPathError(
                    f"{second} {b} and {first} {a} are the same file: one would "
                    f"overwrite the other; pass two different paths."
                )


def _is_path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike)) and str(value) not in ("", "-")


def _written(
    outputs: Mapping[str, Any], entries: Mapping[str, Sequence[str]]
) -> List[Tuple[str, Path]]:
    """(name, path) of every path written: an output, or its entries."""
    found: List[Tuple[str, Path]] = []
    for what, path in outputs.items():
        if not _is_path(path):
            continue
        inside = entries.get(what)
        if inside is None:
            found.append((what, Path(path)))
        else:
            found.extend((what, Path(path) / name) for name in inside)
    return found


def _overlap(written: Path, read: Path) -> Optional[str]:
    """How writing ``written`` touches ``read`` (None: it does not)."""
    if written.exists() and read.exists():
        if os.path.samefile(written, read):
            if written.is_symlink() or read.is_symlink():
                return "symlink"
            if _resolved(written) != _resolved(read):
                return "hard link" if written.is_file() else "symlink"
            return "same"
    out, src = _resolved(written), _resolved(read)
    if out == src:
        return "same"
    if src in out.parents:
        return "inside input"
    if out in src.parents:
        return "inside output"
    return None


def _resolved(path: Path) -> Path:
    # Symlinks of the parts that exist are followed; the rest is kept as
    # written (an output that does not exist yet).
    return Path(os.path.abspath(path)).resolve()


def _message(output: str, written: Path, what: str, read: Path, how: str) -> str:
    fix = f"pass another {output} path"
    if how == "same":
        return (
            f"{output} {written} is {what} {read}: writing it would destroy "
            f"{what}; {fix}."
        )
    if how in ("symlink", "hard link"):
        return (
            f"{output} {written} is the same file as {what} {read} (a {how} "
            f"to it): writing it would destroy {what}; {fix}."
        )
    if how == "inside input":
        return (
            f"{output} {written} lies inside the {what} directory {read}: "
            f"writing it would change {what}; {fix}, outside that directory."
        )
    return (
        f"{what} {read} lies inside {output} {written}, which this command "
        f"writes: {what} could be overwritten; {fix}, or move {what} out of it."
    )


__all__ = ["OutputPathError", "check_outputs"]
