"""``spacy attn code-path``: the file to pass to ``spacy train|evaluate
--code`` so that spaCy's own corpus keeps the pairs of pair docs."""

import typer

from .app import attn_cli


@attn_cli.command("code-path")
def code_path_cli() -> None:
    """Print the path of the file to pass to `spacy train|evaluate --code`
    so that spaCy's own corpus keeps the pairs of pair docs."""
    from ..corpus_patch import code_path

    typer.echo(code_path())


__all__ = ["code_path_cli"]
