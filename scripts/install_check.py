"""Install a packaged pipeline into a fresh virtual environment (no checkout
of this repo on its path), load it by package name and classify a new pair
(or, for a QA pipeline, answer a question).

    python scripts/install_check.py packages/<pipeline>.whl packages/spacy_attn-*.whl \
        --package en_attn_pair_sick --venv .venv-install-check

The venv gets CPU torch first (an unpinned torch would pull CUDA builds),
then the spacy-attn wheel and the pipeline wheel; pip resolves the
pipeline's declared requirements (spacy-attn, spacy, ...) itself.
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

CHECK = r"""
import json, sys, spacy
name = sys.argv[1]
nlp = spacy.load(name)
import spacy_attn
assert spacy_attn.__file__.find("site-packages") >= 0, spacy_attn.__file__
result = {"package": name, "pipeline": nlp.pipe_names, "spacy_attn": spacy_attn.__file__,
          "requirements": nlp.meta.get("requirements")}
if "attn_span_qa" in nlp.pipe_names:
    context = ("The Denver Broncos defeated the Carolina Panthers 24-10 in Super Bowl 50, "
               "played on February 7, 2016, at Levi's Stadium in Santa Clara, California.")
    question = "Which team won Super Bowl 50?"
    answers = next(spacy_attn.answer_questions(nlp, [(question, context)], top_k=3))
    result.update(question=question, answers=answers)
    qa = nlp.get_pipe("attn_span_qa")
    if getattr(qa, "no_answer_threshold", None) is not None:
        # The threshold chosen on held-out data travels with the package.
        unanswerable = "Who won the World Series in 2016?"
        result.update(
            no_answer_threshold=qa.no_answer_threshold,
            unanswerable_question=unanswerable,
            unanswerable_answers=next(
                spacy_attn.answer_questions(nlp, [(unanswerable, context)], top_k=3)
            ),
        )
    if hasattr(qa, "overlap_weight"):
        # The many-paragraph ranking's weight travels too: one question over
        # two paragraphs, the right one second.
        from spacy_attn.qa import answer_question
        other = "The Chicago Cubs won the 2016 World Series, their first since 1908."
        many = answer_question(nlp, question, [other, context], top_k=1)
        result.update(overlap_weight=qa.overlap_weight, many_contexts=many)
else:
    doc = nlp(spacy_attn.make_pair(nlp, "A man is playing a guitar on stage.",
                                   "A person is making music."))
    result["cats"] = doc.cats
print(json.dumps(result))
"""


def shown(answers):
    """(text or "no answer", score) of each answer, as printed."""
    return [
        ("no answer" if a.get("no_answer") else a["text"], round(a["score"], 3))
        for a in answers
    ]


def main(argv=None) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("pipeline_wheel")
    p.add_argument("spacy_attn_wheel")
    p.add_argument("--package", required=True, help="the pipeline's package name")
    p.add_argument(
        "--venv", default=None, help="venv folder (default: a temporary one)"
    )
    p.add_argument("--torch", default="torch==2.13.0")
    p.add_argument("--output", default=None, help="write the check result as JSON")
    args = p.parse_args(argv)
    pipeline_wheel = sorted(glob.glob(args.pipeline_wheel))[-1]
    attn_wheel = sorted(glob.glob(args.spacy_attn_wheel))[-1]
    # Absolute: the check runs from a neutral working directory.
    env_dir = Path(
        args.venv or tempfile.mkdtemp(prefix="attn-install-check-")
    ).resolve()
    if env_dir.exists():
        shutil.rmtree(env_dir)
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    python = str(env_dir / "bin" / "python")
    pip = [python, "-m", "pip", "install", "-q"]
    # Without PYTHONPATH, for pip too: a checkout on it made pip take
    # spacy-attn as installed and leave the wheel out.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    subprocess.check_call(pip + [args.torch], env=env)
    subprocess.check_call(pip + [attn_wheel, pipeline_wheel], env=env)
    # Run from a neutral folder so no checkout of spacy_attn can be imported.
    out = subprocess.run(
        [python, "-c", CHECK, args.package],
        cwd=tempfile.gettempdir(),
        env=env,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        print(out.stdout, out.stderr, file=sys.stderr)
        sys.exit(out.returncode)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    found = result.get("cats") or shown(result.get("answers", []))
    print("✔ installed and loaded", result["package"], "->", found)
    if "no_answer_threshold" in result:
        print(
            f"  no-answer threshold {result['no_answer_threshold']:.4f}; "
            f"{result['unanswerable_question']!r} ->",
            shown(result["unanswerable_answers"]),
        )
    if "many_contexts" in result:
        many = result["many_contexts"]
        top = many["answers"][0] if many["answers"] else None
        print(
            f"  overlap weight {result['overlap_weight']:g}; over two paragraphs ->",
            "no answer"
            if top is None
            else (top["text"], f"paragraph {top['context']}"),
        )
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
