"""The table of ``benchmarks/qa_domains.py`` and the targets it checks."""

from typing import Any, Dict, List, Optional

from bench import tables

# The targets: fine-tuned on this many questions, at its recalibrated
# threshold, F1 at least the packaged model's forced F1 + MIN_GAIN, refusing
# fewer than MAX_REFUSED of the answerable questions.
TARGET_SIZE, MIN_GAIN, MAX_REFUSED = "500", 5.0, 0.10

HEAD = [
    "system", "train questions", "EM", "F1", "refuses answerable %",
    "forced F1", "refuses unanswerable copies %", "10 paragraphs: right %",
    "threshold", "overlap weight", "minutes",
]  # fmt: skip


def system_row(r: Dict[str, Any]) -> List[str]:
    t, m = r["test"], r["many"]
    calibration = r.get("calibration") or {}
    weight = calibration.get("overlap_weight")
    return [
        r["system"],
        str(r.get("train_questions", "")),
        tables.pct(t["em"]),
        tables.pct(t["f1"]),
        tables.pct(t["refused"]),
        tables.pct(t["forced_f1"]),
        tables.pct(t["no_answer_refused"]),
        tables.pct(m["top1_paragraph"]),
        f"{t['threshold']:.4g}",
        "" if weight is None else f"{weight:g}",
        tables.minutes(r.get("seconds")),
    ]


def baseline_rows(first: Dict[str, Any]) -> List[List[str]]:
    m = first["many"]
    no_answer = ["", "0.0", "0.0", "100.0", "", "100.0", "0.0", "", "", ""]

    def ten_paragraphs_only(share: float) -> List[str]:
        return [""] * 6 + [tables.pct(share)] + [""] * 3

    return [
        ["always no answer (trivial)", *no_answer],
        [
            "word overlap: the paragraph with most question words (trivial)",
            *ten_paragraphs_only(m["word_overlap"]),
        ],
        ["chance", *ten_paragraphs_only(m["chance"])],
    ]


def domain_text(domain: str, rows: List[Dict[str, Any]]) -> str:
    split = rows[0]["split"]
    test = rows[0]["test"]
    sizes = ", ".join(
        f"{s}: {split[s]['articles']:,} {split['split_by']}s / "
        f"{split[s]['questions']:,} questions"
        for s in ("train", "dev", "test")
    )
    text = (
        f"## {domain}\n\n`{split['source']}` split by {split['split_by']} ({sizes}); "
    )
    text += (
        f"scored on {test['answerable']:,} seeded test questions and "
        f"{test['unanswerable']:,} unanswerable copies; ten paragraphs: "
        f"{rows[0]['many']['questions']} questions.\n\n"
    )
    body = [system_row(r) for r in rows] + baseline_rows(rows[0])
    return text + tables.md_table(HEAD, body) + "\n"


def in_domain_text(reference: Optional[Dict[str, Any]]) -> str:
    """The start in its own domain, the yardstick of the domains' gaps."""
    if not reference:
        return ""
    t = reference["test"]
    by = "an earlier run of this command" if reference.get("cached") else "this run"
    return (
        f"In its own domain (the reference, measured by {by}): on "
        f"{t['answerable']:,} seeded SQuAD "
        f"v1.1 dev questions and {t['unanswerable']:,} unanswerable copies, the "
        f"start as packaged has forced F1 {tables.pct(t['forced_f1'])}, F1 "
        f"{tables.pct(t['f1'])} at its threshold, refusing "
        f"{tables.pct(t['refused'])}% of answerable questions and "
        f"{tables.pct(t['no_answer_refused'])}% of the copies. A domain's gap is "
        "this forced F1 minus its own.\n\n"
    )


def render(meta: Dict[str, Any], results: Dict[str, Any], *, doc: str) -> str:
    """The results table; ``doc``: the benchmark's docstring (its third
    paragraph on is the protocol)."""
    cached = sum(1 for r in results["rows"] if r.get("cached"))
    title = "Span QA on new domains: as packaged, recalibrated, fine-tuned"
    text = tables.header(title, meta, measured=not cached)
    text += doc.split("\n\n", 2)[2].strip() + "\n\n"
    if cached:
        text += (
            f"{cached} of the {len(results['rows'])} system rows were measured by "
            "earlier runs of this command (kept under `benchmarks/runs/`), the "
            "others by this one.\n\n"
        )
    text += f"Start: `{results['start']}`.\n\n"
    text += in_domain_text(results.get("in_domain"))
    by_domain: Dict[str, List[Dict[str, Any]]] = {}
    for r in results["rows"]:
        by_domain.setdefault(r["domain"], []).append(r)
    for domain, rows in by_domain.items():
        text += domain_text(domain, rows) + "\n"
    commands = [r["training"]["command"] for r in results["rows"] if "training" in r]
    text += (
        "Fine-tuning runs the config `init-config --task qa --no-answer "
        "--init-from START` writes (its training settings unless a command "
        "below overrides them and its readers, with unanswerable questions "
        "built from the answerable ones as it sets them, unless "
        "`--train-unanswerable` / `--dev-unanswerable` say otherwise).\n\n"
        "Training commands:\n\n"
    ) + "".join(f"- `{c}`\n" for c in commands)
    return text


def failures(results: Dict[str, Any]) -> Optional[str]:
    """One line per missed target (None when every domain meets them)."""
    by_domain: Dict[str, Dict[str, Dict[str, Any]]] = {}
    for r in results["rows"]:
        by_domain.setdefault(r["domain"], {})[r["system"]] = r
    lines = []
    for domain, systems in by_domain.items():
        packaged = systems.get("as packaged")
        tuned = systems.get(f"fine-tuned {TARGET_SIZE}")
        for name, r in systems.items():
            if name == "as packaged":  # the before; what the path makes must beat it
                continue
            m = r["many"]
            if m["top1_paragraph"] <= m["word_overlap"]:
                lines.append(
                    f"{domain}, {name}: ten paragraphs {100 * m['top1_paragraph']:.1f}% "
                    f"right, not above word overlap's {100 * m['word_overlap']:.1f}%."
                )
        if tuned is None:
            continue
        t = tuned["test"]
        forced = packaged["test"]["forced_f1"] if packaged else None
        if forced is not None and 100 * t["f1"] < 100 * forced + MIN_GAIN:
            lines.append(
                f"{domain}: fine-tuned on {TARGET_SIZE}, F1 {100 * t['f1']:.1f} < the "
                f"packaged model's forced F1 {100 * forced:.1f} + {MIN_GAIN:g}."
            )
        if t["refused"] >= MAX_REFUSED:
            lines.append(
                f"{domain}: fine-tuned on {TARGET_SIZE}, refuses "
                f"{100 * t['refused']:.1f}% of answerable questions (target < "
                f"{100 * MAX_REFUSED:.0f}%)."
            )
    return "\n".join(lines) or None
