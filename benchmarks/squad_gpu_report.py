"""The results file of one ``benchmarks/squad_gpu.sh`` run: the timeline, the
learning curve (held-out F1 against minutes and epochs), the training speed
of ``spacy train`` beside the bare loop's, and the official SQuAD 1.1 dev
score beside the trivial baseline, from the files the run wrote.

    python benchmarks/squad_gpu_report.py RUN_DIR --commit COMMIT
        [--output benchmarks/results/squad_gpu_h200_COMMIT.md]

RUN_DIR holds run.log, train_log.jsonl, squad_eval.json and speed_dcn_gpu.md
(a device call's $OUT). The run names its device in run.log (nvidia-smi).
"""

import argparse
import json
import re
from pathlib import Path
from typing import Any, Dict, List, Optional

BATCH = 256
TRAIN_QUESTIONS_RE = re.compile(r"(\d+) questions \(\d+ articles")


def read_jsonl(path: Path) -> List[Dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def timeline(log: str) -> List[List[str]]:
    """(seconds, step, rc) of each step of the run, from its stamps."""
    rows, starts = [], {}
    for m in re.finditer(r"^== (\d+) s: (\w+): (.*)$", log, re.M):
        t, name, rest = int(m.group(1)), m.group(2), m.group(3)
        if rest.startswith("rc="):
            rows.append([name, f"{t - starts.get(name, t)}", rest[3:]])
        else:
            starts[name] = t
    return rows


def bare_rate(speed_md: str) -> Optional[float]:
    """The bare loop's training questions/s at batch 256 in speed_dcn_gpu.md."""
    for line in speed_md.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells and cells[0] == str(BATCH) and len(cells) > 2:
            try:
                return float(cells[2].replace(",", ""))
            except ValueError:
                return None
    return None


def curve(records: List[Dict[str, Any]], train_questions: int) -> List[List[str]]:
    rows = []
    for r in records:
        f1 = r["scores"].get("qa_f1")
        em = r["scores"].get("qa_exact_match")
        rows.append(
            [
                str(r["step"]),
                f"{r['step'] * BATCH / train_questions:.2f}" if train_questions else "",
                f"{r['seconds'] / 60:.1f}",
                f"{r['train_seconds'] / 60:.1f}",
                f"{100 * em:.1f}" if em is not None else "",
                f"{100 * f1:.1f}" if f1 is not None else "",
            ]
        )
    return rows


def table(header: List[str], rows: List[List[str]]) -> str:
    out = (
        "| "
        + " | ".join(header)
        + " |\n| "
        + " | ".join("---" for _ in header)
        + " |\n"
    )
    return out + "".join("| " + " | ".join(r) + " |\n" for r in rows)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("run_dir")
    p.add_argument("--commit", required=True)
    p.add_argument("--output", default=None)
    p.add_argument(
        "--deadline", type=int, default=545, help="the run's DEADLINE_SECONDS"
    )
    args = p.parse_args(argv)
    md = report(Path(args.run_dir), args)
    out = Path(args.output or f"benchmarks/results/squad_gpu_{args.commit}.md")
    out.write_text(md, encoding="utf8")
    print(md)


def report(run: Path, args) -> str:
    """The results file's markdown from a run's files."""
    log = (run / "run.log").read_text(encoding="utf8")
    device = log.splitlines()[0].split(",")[0].strip()
    records = read_jsonl(run / "train_log.jsonl")
    m = TRAIN_QUESTIONS_RE.search(log)
    train_q = int(m.group(1)) if m else 0
    speed_md = (
        (run / "speed_dcn_gpu.md").read_text()
        if (run / "speed_dcn_gpu.md").exists()
        else ""
    )
    bare = bare_rate(speed_md)
    ev: Dict[str, Any] = {}
    if (run / "squad_eval.json").exists():
        ev = json.loads((run / "squad_eval.json").read_text())
    md = f"# The paper-size DCN trained on one GPU ({device}, commit `{args.commit}`)\n\n"
    md += (
        "Reproduce on a machine with the data mirror and a GPU (from the repository root):\n\n"
        f"```\nOUT=/tmp/squad-gpu bash benchmarks/squad_gpu.sh {args.deadline} 0\n"
        f"python benchmarks/squad_gpu_report.py /tmp/squad-gpu --commit {args.commit}\n```\n\n"
        f"One device call at commit `{args.commit}` on **{device}**; every number below "
        "was measured in that run (`benchmarks/squad_gpu.sh`: corpus, vectors, speed, "
        "profile, `spacy train configs/squad_glove_gpu.cfg`, official evaluation).\n\n"
    )
    md += "## Timeline\n\n" + table(["step", "seconds", "exit"], timeline(log)) + "\n"
    if records:
        last = records[-1]
        rate = (
            last["train_steps"] * BATCH / last["train_seconds"]
            if last["train_seconds"]
            else 0
        )
        md += (
            "## Training speed\n\n"
            f"`spacy train`, steady state (the {last['train_steps']:,} steps without an "
            f"evaluation, after the first): **{rate:,.0f} questions/s** at batch {BATCH}"
            + (
                f", against the bare loop's {bare:,.0f} in the same call: **{rate / bare:.3f}x**"
                if bare
                else ""
            )
            + f". Evaluation and checkpoints took {last['eval_seconds']:.0f} s of "
            f"{last['seconds']:.0f} s after the first step.\n\n"
            f"## Learning curve ({train_q:,} training questions; held-out F1 on a fixed "
            "1,000 questions of held-out train articles)\n\n"
        )
        md += (
            table(
                [
                    "step",
                    "epochs",
                    "minutes",
                    "training minutes",
                    "held-out EM",
                    "held-out F1",
                ],
                curve(records, train_q),
            )
            + "\n"
        )
    for res in ev.get("sets", {}).values():
        base = res.get("baseline", {})
        md += (
            f"## Official SQuAD 1.1 dev ({res['questions']:,} questions), best checkpoint\n\n"
            "| | EM | F1 |\n| --- | ---: | ---: |\n"
            f"| model (`scripts/squad_eval.py`, {res['questions_per_s']:,.0f} questions/s) "
            f"| {res['exact_match']:.2f} | {res['f1']:.2f} |\n"
            f"| trivial baseline ({ev.get('baseline', '')}) "
            f"| {base.get('exact_match', 0):.2f} | {base.get('f1', 0):.2f} |\n\n"
            f"Trained on the {ev.get('train_source', '')} SQuAD v1.1 train file; "
            "the paper: EM 65.4 / F1 75.6 (cased GloVe 840B 300d).\n"
        )
    if speed_md:
        md += "\n## Speed run of the same call (`benchmarks/speed_dcn.py`)\n\n"
        md += speed_md.split("## Training", 1)[-1].strip() + "\n"
    return md


if __name__ == "__main__":
    main()
