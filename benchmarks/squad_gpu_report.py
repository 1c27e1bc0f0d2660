"""The results file of one ``benchmarks/squad_gpu.sh`` run: the timeline, the
learning curve (held-out F1 against minutes and epochs), the training speed
of ``spacy train`` beside the bare loop's, and the official SQuAD 1.1 dev
score beside the trivial baselines, from the files its device calls wrote.

    python benchmarks/squad_gpu_report.py RUN_DIR [RUN_DIR2] --commit COMMIT
        [--output benchmarks/results/squad_gpu_h200_COMMIT.md]

RUN_DIR is call 1's $OUT (run.log, train_log.jsonl so far), RUN_DIR2 call
2's (``squad_gpu.sh ... finish``: run.log, the whole train_log.jsonl,
squad_eval.json, speed_dcn_gpu.md, dcn_settings_gpu.md); a run whose training ended within call 1
has one folder. The run names its device in run.log (nvidia-smi); every
stamp counts from call 1's start.
"""

import argparse
import json
import re
from pathlib import Path
from typing import Any, Dict, List, Optional

from bench import machine
from thinc.api import Config

# The batch size the run trained at (squad_gpu.sh's BATCH, 256 unless a
# smoke run set another), read from its training command.
BATCH_RE = re.compile(r"--training\.batcher\.(?:batcher\.)?size (\d+)")
TRAIN_QUESTIONS_RE = re.compile(r"(\d+) questions \(\d+ articles")
# The held-out questions of the curve: the run config's [corpora.dev] limit
# unless the training command overrides it.
DEV_LIMIT_RE = re.compile(r"--corpora\.dev\.limit (\d+)")
CONFIG = machine.REPO / "configs" / "squad_glove_gpu.cfg"


def read_jsonl(path: Path) -> List[Dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def timeline(logs: List[str]) -> List[List[str]]:
    """(call, step, seconds, rc) of each step of the run, from the calls'
    stamps (one clock: call 1's start); a step kept from an earlier call,
    and spacy train's start (from its command to its step-0 record), get
    rows of their own. A step may end in a later call than it began."""
    rows: List[List[str]] = []
    starts: Dict[str, int] = {}
    for call, log in enumerate(logs, 1):
        for m in re.finditer(r"^== (\d+) s: (.*)$", log, re.M):
            t, text = int(m.group(1)), m.group(2)
            if text == "first evaluation logged":
                begun = starts.get("train", t)
                rows.append(
                    [str(call), "(start of spacy train, to its step-0 record)"]
                    + [f"{t - begun}", ""]
                )
                continue
            name, _, rest = text.partition(": ")
            if rest.startswith("rc="):
                rows.append([str(call), name, f"{t - starts.get(name, t)}", rest[3:]])
            elif rest.startswith("kept "):
                rows.append([str(call), name, "kept", ""])
            elif re.fullmatch(r"\w+", name):
                starts[name] = t
    return rows


def held_out_questions(log: str) -> int:
    """The held-out questions of the run's evaluations while training."""
    m = DEV_LIMIT_RE.search(log)
    if m:
        return int(m.group(1))
    return int(Config().from_disk(CONFIG, interpolate=False)["corpora"]["dev"]["limit"])


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


def table(header: List[str], rows: List[List[str]]) -> str:
    out = (
        "| "
        + " | ".join(header)
        + " |\n| "
        + " | ".join("---" for _ in header)
        + " |\n"
    )
    return out + "".join("| " + " | ".join(r) + " |\n" for r in rows)


DEADLINE_RE = re.compile(r"Deadline reached after ([\d,]+) steps")
TRAIN_END_RE = re.compile(r"^== \d+ s: train until (\d+) s", re.M)
FINISH_RE = re.compile(r"^== \d+ s: finish: this call may take (\d+) s", re.M)
FIRST_RE = re.compile(r"^== (\d+) s: first evaluation logged$", re.M)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("run_dirs", nargs="+", help="the calls' $OUT folders, in order")
    p.add_argument("--commit", required=True)
    p.add_argument("--output", default=None)
    args = p.parse_args(argv)
    md = report([Path(d) for d in args.run_dirs], args.commit)
    out = Path(args.output or f"benchmarks/results/squad_gpu_{args.commit}.md")
    out.write_text(md, encoding="utf8")
    print(md)


def read_call(run: Path) -> Dict[str, Any]:
    """One call's files: its log, training records, official score and speed."""
    log = (run / "run.log").read_text(encoding="utf8")
    ev = (
        json.loads((run / "squad_eval.json").read_text())
        if (run / "squad_eval.json").exists()
        else {}
    )
    speed, settings = run / "speed_dcn_gpu.md", run / "dcn_settings_gpu.md"
    return {
        "log": log,
        "records": read_jsonl(run / "train_log.jsonl"),
        "eval": ev,
        "speed": speed.read_text(encoding="utf8") if speed.exists() else "",
        "settings": settings.read_text(encoding="utf8") if settings.exists() else "",
    }


def final_row(log: str, train_questions: int, batch: int) -> Optional[List[str]]:
    """The curve's last row: the step at which the deadline stopped the
    batches and the minutes from the step-0 record to the deadline (no
    held-out score there: the official score is model-last's)."""
    m, end = DEADLINE_RE.search(log), TRAIN_END_RE.search(log)
    first = FIRST_RE.search(log)
    if not (m and end and first):
        return None
    steps = int(m.group(1).replace(",", ""))
    minutes = (int(end.group(1)) - int(first.group(1))) / 60
    epochs = f"{steps * batch / train_questions:.2f}" if train_questions else ""
    # The start-up (corpus, vectors, the step-0 evaluation) can outlast the
    # training time given: say so rather than print negative minutes.
    when = f"{minutes:.1f}" if minutes >= 0 else "before the step-0 record"
    return [f"{steps} (deadline)", epochs, when, "", "", ""]


def speed_section(
    records: List[Dict[str, Any]], bare: Optional[float], batch: int
) -> str:
    last = records[-1]
    if not last["train_steps"] or not last["train_seconds"]:
        # No evaluation after the first: the run ended (its deadline, or a
        # failure) before the steady state could be timed, and a 0 here
        # would read as a measured speed.
        why = (
            ", so the run has no steady-state steps to time (the bare loop: "
            f"{bare:,.0f} questions/s at batch {batch})"
            if bare
            else ""
        )
        return (
            "## Training speed\n\n`spacy train`: **not measured**: no evaluation "
            f"was logged after the step-0 record{why}.\n\n"
        )
    rate = last["train_steps"] * batch / last["train_seconds"]
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


def report(runs: List[Path], commit: str) -> str:
    """The results file's markdown from the calls' files."""
    calls = [read_call(run) for run in runs]
    logs = [c["log"] for c in calls]
    log = "\n".join(logs)
    # Each call copies the whole training log so far: the last is the longest.
    records = max((c["records"] for c in calls), key=len)
    ev = next((c["eval"] for c in reversed(calls) if c["eval"]), {})
    speed_md = next((c["speed"] for c in reversed(calls) if c["speed"]), "")
    device = logs[0].splitlines()[0].split(",")[0].strip()
    m = TRAIN_QUESTIONS_RE.search(log)
    train_q = int(m.group(1)) if m else 0
    md = f"# The paper-size DCN trained on one GPU ({device}, commit `{commit}`)\n\n"
    md += reproduce(log, len(runs), commit)
    md += (
        f"{'One device call' if len(runs) == 1 else f'{len(runs)} device calls'} at "
        f"commit `{commit}` on **{device}**; every number below was measured in that "
        "run (`benchmarks/squad_gpu.sh`: corpus, vectors, `spacy train "
        "configs/squad_glove_gpu.cfg` until a deadline, official evaluation of "
        "model-last, speed).\n\n"
    )
    md += "## Timeline (seconds from call 1's start)\n\n"
    md += table(["call", "step", "seconds", "exit"], timeline(logs)) + "\n"
    batch = batch_size(log)
    if records:
        md += speed_section(records, bare_rate(speed_md, batch), batch)
        header = ["step", "epochs", "minutes", "training minutes"]
        header += ["held-out EM", "held-out F1"]
        last = final_row(log, train_q, batch)
        # A corpus kept from an earlier call on the machine logs no count.
        corpus = (
            f"{train_q:,} training questions"
            if train_q
            else "training questions not logged: the corpus was kept, so no epochs"
        )
        md += (
            f"## Learning curve ({corpus}; held-out F1 on a fixed "
            f"{held_out_questions(log):,} questions of held-out train articles; "
            "minutes from the step-0 record)\n\n"
        )
        md += table(header, curve(records, train_q, batch) + ([last] if last else []))
        md += "\n"
    md += eval_section(ev, "model-last (the end of the decay)")
    if speed_md:
        md += "\n## Speed run of the same session (`benchmarks/speed_dcn.py`)\n\n"
        md += speed_md.split("## Training", 1)[-1].strip() + "\n"
    settings_md = next((c["settings"] for c in reversed(calls) if c["settings"]), "")
    if settings_md:
        # dcn_settings.py's own file, from its first paragraph after the header.
        md += "\n## Precision settings of the same session (`benchmarks/dcn_settings.py`)\n\n"
        md += settings_md.split("measured in that run.", 1)[-1].strip() + "\n"
    return md


def reproduce(log: str, calls: int, commit: str) -> str:
    """The commands that made the run, with its own deadline and seconds."""
    end, seconds = TRAIN_END_RE.search(log), FINISH_RE.search(log)
    return (
        "Reproduce on a machine with the data mirror and a GPU (from the repository "
        "root; call 2 on the same machine while call 1's training runs):\n\n"
        "```\nOUT=/tmp/squad-gpu bash benchmarks/squad_gpu.sh "
        f"{end.group(1) if end else 'TRAIN_END'} 0\n"
        + (
            f"OUT=/tmp/squad-gpu2 bash benchmarks/squad_gpu.sh {seconds.group(1)} 0 finish\n"
            if seconds
            else ""
        )
        + "python benchmarks/squad_gpu_report.py /tmp/squad-gpu"
        + (" /tmp/squad-gpu2" if calls > 1 else "")
        + f" --commit {commit}\n```\n\n"
    )


if __name__ == "__main__":
    main()
