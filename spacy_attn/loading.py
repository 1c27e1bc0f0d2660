"""Loading a pipeline for our commands, with every foreseeable problem
reported as one line that names the file, the cause and the fix
(``PipelineLoadError``) instead of a traceback from deep inside spaCy."""

from pathlib import Path
from typing import Any, Dict, Union

from spacy.language import Language


class PipelineLoadError(ValueError):
    """A pipeline could not be loaded; the message is one line: the file, the
    cause, and what to do."""


def _first_line(err: BaseException) -> str:
    text = " ".join(str(err).split("\n")[:2]).strip() or type(err).__name__
    return text if len(text) <= 400 else text[:400] + "..."


def check_pipeline_path(model: Union[str, Path]) -> Dict[str, Any]:
    """Check that ``model`` names a pipeline directory or an installed
    package, before spaCy tries to load it.

    model (Union[str, Path]): The pipeline path or package name.
    RETURNS (Dict[str, Any]): The directory's ``meta.json`` ({} for a
        package or a directory without one).
    RAISES (PipelineLoadError): If it is missing, a file, not a pipeline
        directory, or has a damaged ``meta.json`` / ``config.cfg``.
    """
    import srsly
    from spacy.util import is_package

    path = Path(model)
    if not path.exists():
        if isinstance(model, str) and is_package(model):
            return {}
        raise PipelineLoadError(
            f"Pipeline not found: {model} is neither a directory nor an installed "
            "package. Pass the directory of a saved pipeline (e.g. training/model-best)."
        )
    if not path.is_dir():
        raise PipelineLoadError(
            f"{path} is a file, not a pipeline directory: pass the directory that "
            "holds its config.cfg and meta.json (e.g. training/model-best)."
        )
    if not (path / "config.cfg").is_file():
        raise PipelineLoadError(
            f"{path} is not a spaCy pipeline: it has no config.cfg. Pass the directory "
            "that nlp.to_disk wrote (e.g. training/model-best)."
        )
    meta = path / "meta.json"
    if meta.exists():
        try:
            data = srsly.read_json(meta)
        except ValueError as err:
            raise PipelineLoadError(
                f"{meta}: invalid JSON ({_first_line(err)}). Restore the file from a "
                "copy of the pipeline, or save the pipeline again."
            ) from None
        if not isinstance(data, dict):
            raise PipelineLoadError(
                f"{meta}: expected a JSON object, got {type(data).__name__}. Restore "
                "the file from a copy of the pipeline, or save the pipeline again."
            )
        return data
    return {}


def load_pipeline(model: Union[str, Path, Language], *, gpu_id: int = -1) -> Language:
    """Load a pipeline (``spacy.load``), on the GPU ``gpu_id`` if >= 0.

    model (Union[str, Path, Language]): A pipeline path or package name, or a
        loaded pipeline (returned as it is).
    gpu_id (int): GPU to allocate on (-1: CPU).
    RETURNS (Language): The pipeline.
    RAISES (PipelineLoadError): With one line naming the file, the cause and
        the fix, whatever went wrong.
    """
    if isinstance(model, Language):
        return model
    import spacy

    meta = check_pipeline_path(model)
    if gpu_id >= 0:
        try:
            spacy.require_gpu(gpu_id)
        except Exception as err:  # noqa: BLE001 - no GPU, no CuPy, bad id
            raise PipelineLoadError(
                f"--gpu-id {gpu_id}: cannot use the GPU ({_first_line(err)}); "
                "use --gpu-id -1 for the CPU."
            ) from None
    try:
        nlp = spacy.load(model)
    except Exception as err:  # noqa: BLE001 - every load failure, one line
        raise PipelineLoadError(
            f"Could not load the pipeline {model}: {_first_line(err)}"
        ) from err
    check_saved_vectors(nlp, meta, model)
    return nlp


def check_saved_vectors(
    nlp: Language, meta: Dict[str, Any], model: Union[str, Path]
) -> None:
    """Check that a pipeline directory still holds the word vectors its
    ``meta.json`` says it was saved with.

    Why: a pipeline copied without ``vocab/vectors`` (the vectors are the
    bulk of it: a device call brings back only the trained weights, and the
    vectors are rebuilt from their source) loads without complaint, and then
    fails at its first prediction, deep inside the model.

    nlp (Language): The loaded pipeline.
    meta (Dict[str, Any]): Its directory's ``meta.json`` as saved
        (``check_pipeline_path``; {} for a package, which carries its
        vectors: nothing to check). ``nlp.meta`` will not do: spaCy fills
        its vectors entry from the vocab as loaded.
    model (Union[str, Path]): What it was loaded from, for the message.
    RAISES (PipelineLoadError): If the vectors are missing, or not as many
        or as wide as saved (another table: the rows would not be the ones
        the model was trained on).
    """
    saved = meta.get("vectors")
    if not isinstance(saved, dict):  # no vectors recorded (or not by spaCy)
        return
    width, rows = int(saved.get("width") or 0), int(saved.get("vectors") or 0)
    if not width or not rows:
        return
    have_rows, have_width = nlp.vocab.vectors.shape
    if (have_rows, have_width) == (rows, width):
        return
    name = f" ({saved['name']})" if saved.get("name") else ""
    found = "has none" if not have_rows else f"has {have_rows:,} of width {have_width}"
    raise PipelineLoadError(
        f"{model} was saved with {rows:,} {width}-d word vectors{name}, but its "
        f"vocab {found}: copy the files vectors and vectors.cfg of the vocab it was "
        f'trained with into {Path(model) / "vocab"} (docs/span_qa.md, "On a GPU", '
        "says how for the project's GloVe)."
    )


__all__ = [
    "PipelineLoadError",
    "check_pipeline_path",
    "check_saved_vectors",
    "load_pipeline",
]
