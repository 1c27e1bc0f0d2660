"""A ``spacy train`` logger that keeps a checkpoint of the span-QA component
at every evaluation, for learning curves on the official SQuAD dev set.

``spacy train`` keeps only ``model-best`` and ``model-last``; a learning curve
(official dev EM/F1 against training questions seen) needs the weights at
every evaluation. Load with ``--code benchmarks/squad_checkpoints.py`` and
``--training.logger.@loggers spacy-attn-bench.CheckpointLogger.v1``
``--training.logger.directory DIR``. At each evaluation it writes
``DIR/step-<step>.bin`` (the component's ``to_bytes`` without the
vocabulary, which ``model-last`` holds: load it into that pipeline's
component with ``from_bytes``) and appends one JSON
line to ``DIR/log.jsonl``: step, epoch, seconds since the start, words seen,
the dev score and the component scores. The console output is spaCy's own
(``spacy.ConsoleLogger.v3``). ``benchmarks/squad_dcn.py --curve DIR`` scores
the checkpoints.
"""

import json
import time
from pathlib import Path
from typing import IO, Any, Callable, Dict, Optional, Tuple, Union

from spacy import registry
from spacy.language import Language


@registry.loggers("spacy-attn-bench.CheckpointLogger.v1")
def checkpoint_logger(
    directory: str,
    component: str = "attn_span_qa",
    progress_bar: Union[bool, str, None] = None,
) -> Callable[
    [Language, IO, IO],
    Tuple[Callable[[Optional[Dict[str, Any]]], None], Callable[[], None]],
]:
    # The configs say progress_bar = false (ConsoleLogger.v1); v3 takes None.
    console = registry.get("loggers", "spacy.ConsoleLogger.v3")(
        progress_bar=progress_bar or None
    )

    def setup(nlp: Language, stdout: IO, stderr: IO):
        log_step, finalize = console(nlp, stdout, stderr)
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        start = time.time()

        def log(info: Optional[Dict[str, Any]]) -> None:
            log_step(info)
            if info is None or info.get("score") is None:
                return
            step = int(info["step"])
            # Without the vocabulary: it is the same at every step and in
            # model-last, and with GloVe it is 42 of a checkpoint's 47 MB.
            pipe = nlp.get_pipe(component)
            (out / f"step-{step}.bin").write_bytes(pipe.to_bytes(exclude=["vocab"]))
            record = {
                "step": step,
                "epoch": info["epoch"],
                "seconds": round(time.time() - start, 1),
                "words": info["words"],
                "score": info["score"],
                "other_scores": info["other_scores"],
                "losses": info["losses"],
            }
            with open(out / "log.jsonl", "a", encoding="utf8") as f:
                f.write(json.dumps(record) + "\n")

        return log, finalize

    return setup
