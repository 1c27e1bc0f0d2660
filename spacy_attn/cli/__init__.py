"""spacy-attn's commands, the ``attn`` group of spaCy's command line
(``python -m spacy attn ...``, through setup.cfg's ``spacy_cli`` entry point):
one module per command."""

# isort: off
# Each command module adds its command to the group; the order of these
# imports is the order of the commands in --help.
from . import predict, evaluate, convert, benchmark_speed  # noqa: F401
from . import device_check, squad_eval, code_path  # noqa: F401
from . import rank, init_config, qa_threshold, distill  # noqa: F401

# isort: on
from .app import attn_cli, main, register_with_spacy

register_with_spacy()

__all__ = ["attn_cli", "main", "register_with_spacy"]
