"""Write the package meta (name, version, description, data, measured
accuracy) for `spacy package --meta-path`.

    python scripts/make_meta.py metrics/sick.json corpus/sick/stats.json packages/meta.json \
        --name attn_pair_sick --version 0.1.0
"""

import argparse
import json
from pathlib import Path


def main(argv=None) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("metrics")
    p.add_argument("stats")
    p.add_argument("output")
    p.add_argument("--name", required=True)
    p.add_argument("--version", required=True)
    p.add_argument("--task", default="sick")
    p.add_argument("--vectors", default="GloVe 6B 100d")
    args = p.parse_args(argv)
    metrics = json.loads(Path(args.metrics).read_text())
    stats = json.loads(Path(args.stats).read_text())
    acc = metrics["pair_acc"]
    counts = stats["counts"]
    meta = {
        "name": args.name,
        "version": args.version,
        "description": (
            f"Text-pair classifier (Decomposable Attention, Parikh et al. 2016) trained with "
            f"spacy-attn on {args.task.upper()} ({counts['train']} training pairs), "
            f"{args.vectors} vectors. Labels: {', '.join(stats['labels'])}. Measured accuracy "
            f"{acc * 100:.1f}% on the {args.task.upper()} test split ({counts['test']} pairs). "
            f"Make inputs with spacy_attn.make_pair(nlp, first, second); scores are in doc.cats."
        ),
        "sources": [
            {"name": args.task.upper(), "url": "see project.yml assets"},
            {"name": args.vectors, "url": "https://nlp.stanford.edu/projects/glove/"},
        ],
        "performance": {
            "pair_acc": acc,
            "pair_macro_f": metrics.get("pair_macro_f"),
            "pair_f_per_type": metrics.get("pair_f_per_type"),
        },
        "notes": (
            "Test accuracy measured with `python -m spacy_attn evaluate` on "
            f"{counts['test']} held-out pairs."
        ),
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(meta, indent=2))
    print(f"✔ wrote {args.output}: accuracy {acc:.4f}")


if __name__ == "__main__":
    main()
