"""The local data mirror: one name for it across the package, scripts,
benchmarks and tests.

The project's data steps fetch the official files; a *mirror* is a local
folder in the same layout as the workplace's ``shared/data`` (one file per
dataset and a ``SHA256SUMS`` beside them) that replaces the downloads, for
offline machines and CI. It is found in one way everywhere: the environment
variable ``SPACY_ATTN_MIRROR`` if it is set, else ``shared/data`` beside the
checkout (``../shared/data`` from the repository root).
"""
import os
from pathlib import Path

MIRROR_ENV = "SPACY_ATTN_MIRROR"
"""The environment variable that names the data mirror folder."""

# The checkout that holds this package (for an editable or source install);
# for a wheel this is site-packages, where only the environment variable helps.
_CHECKOUT = Path(__file__).resolve().parent.parent


def mirror_dir() -> Path:
    """The data mirror folder: ``$SPACY_ATTN_MIRROR``, else ``../shared/data``
    beside the repository. The folder may not exist; callers say what is
    missing when they open a file in it.

    RETURNS (Path): The mirror folder.
    """
    return Path(os.environ.get(MIRROR_ENV) or _CHECKOUT.parent / "shared" / "data")
