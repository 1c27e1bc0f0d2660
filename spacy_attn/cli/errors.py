"""How a command ends on a mistake of its user: one line ``Error: ...`` on
stderr and exit code 1, not a traceback."""

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping, NoReturn

import typer


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``Error: message`` (one line) on stderr and exit with ``code``."""
    typer.echo(f"Error: {message}", err=True)
    raise typer.Exit(code)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the errors a user causes (bad input, options, pipeline, corpus
    files) into one line and exit code 1; anything else is a bug and keeps
    its traceback."""
    from ..batch import PredictError
    from ..errors import CorpusFormatError
    from ..file_safety import OutputPathError
    from ..loading import PipelineLoadError
    from ..pipeline.base import ComponentLoadError
    from ..pipeline.lookup import ComponentLookupError
    from ..usage import UsageError

    try:
        yield
    except (
        PredictError,
        PipelineLoadError,
        ComponentLoadError,
        ComponentLookupError,
        CorpusFormatError,
        OutputPathError,
        UsageError,
    ) as err:
        fail(" ".join(str(err).split()))
    except FileNotFoundError as err:
        fail(f"File not found: {err.filename or err}")
    except IsADirectoryError as err:
        fail(f"{err.filename}: a directory where a file was expected")


def refuse_overwrite(outputs: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    """Fail with one line when a path the command writes is one it reads:
    ``spacy_attn.file_safety.check_outputs``, called before anything is
    opened (``outputs`` and ``inputs`` by the names the user knows them by,
    e.g. {"OUTPUT": path}, {"INPUT": path, "MODEL": model})."""
    from ..file_safety import OutputPathError, check_outputs

    try:
        check_outputs(outputs, inputs)
    except OutputPathError as err:
        fail(str(err))


def existing_file(path: Path, what: str) -> None:
    """Fail unless ``path`` is a file; ``what`` names it (e.g. "DATA")."""
    if not path.exists():
        fail(f"{what} not found: {path}")
    if path.is_dir():
        fail(f"{what} {path} is a directory; pass a file.")


__all__ = ["existing_file", "fail", "refuse_overwrite", "user_errors"]
