"""The results file of one ``benchmarks/squad_gpu.sh`` run: the timeline, the
learning curve (held-out F1 against minutes and epochs), the training speed
of ``spacy train`` beside the bare loop's, and the official SQuAD 1.1 dev
score beside the trivial baseline, from the files the run wrote.

    python benchmarks/squad_gpu_report.py RUN_DIR --commit COMMIT
        [--continued RUN_DIR2] [--output benchmarks/results/squad_gpu_h200_COMMIT.md]

RUN_DIR holds run.log, train_log.jsonl, squad_eval.json and speed_dcn_gpu.md
(a device call's $OUT). The run names its device in run.log (nvidia-smi).
RUN_DIR2 is the $OUT of a second call (``squad_gpu.sh ... continue``): its
curve goes on from the first's last step and training minutes, and its
official score is the run's result.
"""

import argparse
import json
import re
from pathlib import Path
from typing import Any, Dict, List, Optional

# The batch size the run trained at (squad_gpu.sh's BATCH, 256 unless a
# smoke run set another), read from its training command.
BATCH_RE = re.compile(r"--training\.batcher\.size (\d+)")
TRAIN_QUESTIONS_RE = re.compile(r"(\d+) questions \(\d+ articles")


def read_jsonl(path: Path) -> List[Dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def timeline(log: str) -> List[List[str]]:
    """(step, seconds, rc) of each step of the run, from its stamps; a step
    kept from an earlier call, and spacy train's start (from its command to
    its first evaluation's record), get rows of their own."""
    rows, starts = [], {}
    for m in re.finditer(r"^== (\d+) s: (.*)$", log, re.M):
        t, text = int(m.group(1)), m.group(2)
        if text == "first evaluation logged":
            begun = starts.get("train", starts.get("continue", t))
            rows.append(
                ["(start of spacy train, to its step-0 record)", f"{t - begun}", ""]
            )
            continue
        name, _, rest = text.partition(": ")
        if rest.startswith("rc="):
            rows.append([name, f"{t - starts.get(name, t)}", rest[3:]])
        elif rest.startswith("kept "):
            rows.append([name, "kept", ""])
        elif re.fullmatch(r"\w+", name):
            starts[name] = t
    return rows


def batch_size(log: str) -> int:
    """The batch size of the run's training command (256 if none is logged)."""
    m = BATCH_RE.search(log)
    return int(m.group(1)) if m else 256


def bare_rate(speed_md: str, batch: int) -> Optional[float]:
    """The bare loop's training questions/s at ``batch`` in speed_dcn_gpu.md."""
    for line in speed_md.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells and cells[0] == str(batch) and len(cells) > 2:
            try:
                return float(cells[2].replace(",", ""))
            except ValueError:
                return None
    return None


def curve(
    records: List[Dict[str, Any]], train_questions: int, batch: int
) -> List[List[str]]:
    rows = []
    for r in records:
        f1 = r["scores"].get("qa_f1")
        em = r["scores"].get("qa_exact_match")
        rows.append(
            [
                str(r["step"]),
                f"{r['step'] * batch / train_questions:.2f}" if train_questions else "",
                f"{r['seconds'] / 60:.1f}",
                f"{r['train_seconds'] / 60:.1f}",
                f"{100 * em:.1f}" if em is not None else "",
                f"{100 * f1:.1f}" if f1 is not None else "",
            ]
        )
    return rows


MAX_STEPS_RE = re.compile(r"-> max_steps (\d+)")


def trained_steps(log: str, records: List[Dict[str, Any]]) -> int:
    """The steps a call's training ran: its max_steps when it ended by
    itself (rc=0), else its last logged step (the start of a continuation is
    then its model-best, i.e. that step)."""
    m = MAX_STEPS_RE.search(log)
    ended = re.search(r"^== \d+ s: (train|continue): rc=0$", log, re.M)
    if m and ended:
        return int(m.group(1))
    return records[-1]["step"] if records else 0


def shifted(
    records: List[Dict[str, Any]], steps: int, seconds: float, train_seconds: float
) -> List[Dict[str, Any]]:
    """A continuation's records on the first call's clock: steps, wall and
    training seconds counted on from where the first call stopped."""
    out = []
    for r in records:
        out.append(
            {
                **r,
                "step": r["step"] + steps,
                "seconds": r["seconds"] + seconds,
                "train_seconds": r["train_seconds"] + train_seconds,
            }
        )
    return out


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
    p.add_argument(
        "--continued", default=None, help="the second call's folder (continue)"
    )
    p.add_argument(
        "--continued-deadline", type=int, default=200, help="its DEADLINE_SECONDS"
    )
    args = p.parse_args(argv)
    md = report(Path(args.run_dir), args)
    out = Path(args.output or f"benchmarks/results/squad_gpu_{args.commit}.md")
    out.write_text(md, encoding="utf8")
    print(md)


def read_call(run: Path) -> Dict[str, Any]:
    """One call's files: its log, training records and official score."""
    log = (run / "run.log").read_text(encoding="utf8")
    ev = (
        json.loads((run / "squad_eval.json").read_text())
        if (run / "squad_eval.json").exists()
        else {}
    )
    return {"log": log, "records": read_jsonl(run / "train_log.jsonl"), "eval": ev}


def continued_records(first: Dict[str, Any], second: Dict[str, Any]) -> List:
    """The second call's records on the first call's clock. The first call's
    minutes after its last record (when it ran on to max_steps) are counted
    at its own rate up to that record."""
    records = first["records"]
    steps = trained_steps(first["log"], records)
    last = records[-1] if records else {"step": 0, "seconds": 0, "train_seconds": 0}
    scale = steps / last["step"] if last["step"] else 1.0
    return shifted(
        second["records"],
        steps,
        last["seconds"] * scale,
        last["train_seconds"] * scale,
    )


def speed_section(
    records: List[Dict[str, Any]], bare: Optional[float], batch: int
) -> str:
    last = records[-1]
    rate = (
        last["train_steps"] * batch / last["train_seconds"]
        if last["train_seconds"]
        else 0
    )
    return (
        "## Training speed\n\n"
        f"`spacy train`, steady state (the {last['train_steps']:,} steps without an "
        f"evaluation, after the first): **{rate:,.0f} questions/s** at batch {batch}"
        + (
            f", against the bare loop's {bare:,.0f} in the same call: **{rate / bare:.3f}x**"
            if bare
            else ""
        )
        + f". Evaluation and checkpoints took {last['eval_seconds']:.0f} s of "
        f"{last['seconds']:.0f} s after the first step.\n\n"
    )


def eval_section(ev: Dict[str, Any], title: str) -> str:
    md = ""
    for res in ev.get("sets", {}).values():
        base = res.get("baseline", {})
        md += (
            f"## Official SQuAD 1.1 dev ({res['questions']:,} questions), {title}\n\n"
            "| | EM | F1 |\n| --- | ---: | ---: |\n"
            f"| model (`scripts/squad_eval.py`, {res['questions_per_s']:,.0f} questions/s) "
            f"| {res['exact_match']:.2f} | {res['f1']:.2f} |\n"
            f"| trivial baseline ({ev.get('baseline', '')}) "
            f"| {base.get('exact_match', 0):.2f} | {base.get('f1', 0):.2f} |\n"
            + (
                f"| word overlap ({ev.get('word_overlap', '')}) "
                f"| {res['word_overlap']['exact_match']:.2f} "
                f"| {res['word_overlap']['f1']:.2f} |\n"
                if "word_overlap" in res
                else ""
            )
            + "\n"
            f"Trained on the {ev.get('train_source', '')} SQuAD v1.1 train file; "
            "the paper: EM 65.4 / F1 75.6 (cased GloVe 840B 300d).\n\n"
        )
    return md


def report(run: Path, args) -> str:
    """The results file's markdown from a run's files."""
    first = read_call(run)
    second = read_call(Path(args.continued)) if args.continued else None
    log, records = first["log"], first["records"]
    device = log.splitlines()[0].split(",")[0].strip()
    m = TRAIN_QUESTIONS_RE.search(log)
    train_q = int(m.group(1)) if m else 0
    speed_md = (
        (run / "speed_dcn_gpu.md").read_text()
        if (run / "speed_dcn_gpu.md").exists()
        else ""
    )
    calls = "One device call" if second is None else "Two device calls"
    md = f"# The paper-size DCN trained on one GPU ({device}, commit `{args.commit}`)\n\n"
    md += (
        "Reproduce on a machine with the data mirror and a GPU (from the repository root):\n\n"
        f"```\nOUT=/tmp/squad-gpu bash benchmarks/squad_gpu.sh {args.deadline} 0\n"
        + (
            "OUT=/tmp/squad-gpu2 bash benchmarks/squad_gpu.sh "
            f"{args.continued_deadline} 0 continue\n"
            if second
            else ""
        )
        + f"python benchmarks/squad_gpu_report.py /tmp/squad-gpu --commit {args.commit}"
        + (" --continued /tmp/squad-gpu2" if second else "")
        + "\n```\n\n"
        f"{calls} at commit `{args.commit}` on **{device}**; every number below "
        "was measured in that run (`benchmarks/squad_gpu.sh`: corpus, vectors, speed, "
        "`spacy train configs/squad_glove_gpu.cfg`, official evaluation"
        + ("; then a second cycle from its weights" if second else "")
        + ").\n\n"
    )
    md += "## Timeline\n\n" + table(["step", "seconds", "exit"], timeline(log)) + "\n"
    if second:
        md += "Second call:\n\n"
        md += table(["step", "seconds", "exit"], timeline(second["log"])) + "\n"
    batch = batch_size(log)
    if records:
        md += speed_section(records, bare_rate(speed_md, batch), batch)
        header = ["step", "epochs", "minutes", "training minutes"]
        header += ["held-out EM", "held-out F1"]
        rows = [["1", *row] for row in curve(records, train_q, batch)]
        if second:
            more = continued_records(first, second)
            rows += [["2", *row] for row in curve(more, train_q, batch)]
        md += (
            f"## Learning curve ({train_q:,} training questions; held-out F1 on a fixed "
            "1,000 questions of held-out train articles)\n\n"
        )
        md += table(["call", *header], rows) + "\n"
    md += eval_section(first["eval"], "the first call's best checkpoint")
    if second:
        md += eval_section(second["eval"], "the second call's best checkpoint")
    if speed_md:
        md += "\n## Speed run of the same call (`benchmarks/speed_dcn.py`)\n\n"
        md += speed_md.split("## Training", 1)[-1].strip() + "\n"
    return md


if __name__ == "__main__":
    main()
