"""The ``attn`` command group (a typer app), how spaCy's command line gets it,
and how ``python -m spacy_attn`` runs it."""

import sys
from typing import List, Optional

import typer

HELP = """spacy-attn: attention models as spaCy components. Batch prediction,
evaluation and conversion for pair, doc and QA pipelines.
"""

attn_cli = typer.Typer(
    name="attn",
    help=HELP,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def main(
    argv: Optional[List[str]] = None, *, prog_name: str = "python -m spacy_attn"
) -> None:
    """Run the ``attn`` commands (``python -m spacy_attn``, the group of
    ``python -m spacy attn``).

    argv (Optional[List[str]]): The arguments; None: ``sys.argv[1:]``.
    prog_name (str): The program name in help and usage messages.
    """
    command = typer.main.get_command(attn_cli)
    try:
        command.main(
            args=list(sys.argv[1:] if argv is None else argv),
            prog_name=prog_name,
            standalone_mode=True,
        )
    except SystemExit as exit:
        # Standalone mode always exits; a caller (a test, a script) can run
        # several commands, so only a failure leaves.
        if exit.code:
            raise


def register_with_spacy() -> None:
    """Add the ``attn`` group to spaCy's command line (``python -m spacy
    attn``); called when ``spacy_attn.cli`` is imported, once."""
    from spacy.cli import app

    if not any(group.typer_instance is attn_cli for group in app.registered_groups):
        app.add_typer(attn_cli)


__all__ = ["HELP", "attn_cli", "main", "register_with_spacy"]
