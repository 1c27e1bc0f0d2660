"""How a command ends on a mistake of its user: one line ``Error: ...`` on
stderr and exit code 1, not a traceback."""

from contextlib import contextmanager
from typing import Iterator, NoReturn

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
    ) as err:
        fail(" ".join(str(err).split()))
    except UsageError as err:
        fail(" ".join(str(err).split()), code=err.exit_code)
    except FileNotFoundError as err:
        fail(f"File not found: {err.filename or err}")
    except IsADirectoryError as err:
        fail(f"{err.filename}: a directory where a file was expected")


__all__ = ["fail", "user_errors"]
