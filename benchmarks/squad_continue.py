"""Continue a span-QA training run from its ``model-last`` with ``spacy train``.

A session on this machine ends every few hours, and a DCN needs more than one
session on CPU. ``spacy train`` has no resume flag, but it does continue a
*sourced* component (``[components.X] source = ...``: the component is not
re-initialised, ``nlp.resume_training`` keeps its weights). This script writes
``OUTPUT/config.cfg`` -- the given config with the QA component sourced from
the previous run's ``model-last`` -- and runs ``spacy train`` on it with the
checkpoint logger, so ``benchmarks/squad_curve.py --run PREV --continued
OUTPUT`` draws one learning curve across both runs.

What does not carry over, and is stated in the results: Adam's moments (the
optimizer starts afresh) and the position in the shuffled epoch (the new run
shuffles with ``--seed``, so some questions come round again before others
were seen once).

    python benchmarks/squad_continue.py training/squad_cpu training/squad_cpu_2 \\
        --seed 1 -- --paths.train corpus/squad/train.json \\
        --paths.dev corpus/squad/dev.json --paths.vectors training/vectors \\
        --training.max_steps 2000

Overrides after ``--`` may switch the training reader, e.g. to the streamed
``--corpora.train.@readers spacy-attn.SquadCorpus.v2 --corpora.train.limit 0
--training.max_epochs -1``.

``--checkpoint PREVIOUS/checkpoints/step-N.bin`` starts from that checkpoint's
weights instead of model-last (a run stopped by hand after an evaluation may
not have written model-last yet).
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

from spacy.util import load_config

BENCH = Path(__file__).parent


def continued_config(
    previous: Path, component: str, output: Path, checkpoint: Optional[Path] = None
) -> Path:
    """Write OUTPUT/config.cfg: PREVIOUS's config with COMPONENT sourced from
    PREVIOUS/model-last (initialize settings kept for the vocab's vectors).

    With ``checkpoint`` (a ``step-N.bin`` of the checkpoint logger), the
    component's weights are that checkpoint's instead: PREVIOUS/model-last
    with them is saved as OUTPUT/start and sourced from there. Why: a run
    stopped by hand may have written its last checkpoint but not model-last.
    """
    model = previous / "model-last"
    if not (model / component).is_dir():
        sys.exit(f"Error: {model} has no component {component!r}")
    if checkpoint is not None:
        import spacy
        from spacy.pipeline import TrainablePipe

        nlp = spacy.load(model)
        pipe = nlp.get_pipe(component)
        assert isinstance(pipe, TrainablePipe), component
        pipe.from_bytes(checkpoint.read_bytes())
        model = output / "start"
        output.mkdir(parents=True, exist_ok=True)
        nlp.to_disk(model)
    config = load_config(model / "config.cfg")
    config["components"][component] = {
        "source": str(model),
        "component": component,
    }
    # A filled v1 SquadCorpus section carries its deprecated alias as
    # `span_key = null` (unset); dropped, so an override can switch to a
    # reader version without it (--corpora.train.@readers ...SquadCorpus.v2).
    for section in config.get("corpora", {}).values():
        if isinstance(section, dict) and section.get("span_key", 0) is None:
            del section["span_key"]
    output.mkdir(parents=True, exist_ok=True)
    path = output / "config.cfg"
    config.to_disk(path)
    return path


def train_command(
    config: Path,
    output: Path,
    seed: int,
    overrides: List[str],
    *,
    keep_logger: bool = False,
) -> List[str]:
    """The ``spacy train`` command of the continued run. Without
    ``keep_logger`` it logs with the checkpoint logger (each evaluation's
    weights kept, for squad_curve.py); with it, the earlier run's own logger
    goes on (a TimedLogger whose ``output_file`` an override moves)."""
    logger = [
        "--code", str(BENCH / "squad_checkpoints.py"),
        "--training.logger.@loggers", "spacy-attn-bench.CheckpointLogger.v1",
        "--training.logger.directory", str(output / "checkpoints"),
    ]  # fmt: skip
    return [
        sys.executable, "-m", "spacy", "train", str(config),
        "--output", str(output),
        *([] if keep_logger else logger),
        "--system.seed", str(seed),
        *overrides,
    ]  # fmt: skip


def main(argv: Optional[List[str]] = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("previous", type=Path, help="the earlier spacy train output")
    p.add_argument("output", type=Path)
    p.add_argument("--component", default="attn_span_qa")
    p.add_argument("--seed", type=int, default=1, help="a new shuffle order")
    p.add_argument(
        "--checkpoint",
        type=Path,
        default=None,
        help="start from this step-N.bin of PREVIOUS instead of its model-last",
    )
    p.add_argument(
        "--keep-logger",
        action="store_true",
        help="keep PREVIOUS's logger instead of the checkpoint logger",
    )
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after "--" goes to spacy train unchanged.
    split = argv.index("--") if "--" in argv else len(argv)
    args = p.parse_args(argv[:split])
    overrides = argv[split + 1 :]
    config = continued_config(
        args.previous, args.component, args.output, args.checkpoint
    )
    origin = {"previous": str(args.previous), "seed": args.seed}
    if args.checkpoint is not None:
        origin["checkpoint"] = str(args.checkpoint)
    (args.output / "continued_from.json").write_text(json.dumps(origin) + "\n")
    cmd = train_command(
        config, args.output, args.seed, overrides, keep_logger=args.keep_logger
    )
    print(" ".join(cmd), flush=True)
    sys.exit(subprocess.call(cmd))


if __name__ == "__main__":
    main()
