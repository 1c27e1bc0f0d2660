"""``spacy attn rank``: rank the candidate texts of a file for a query with a
pair classifier pipeline (``spacy_attn.rank_candidates``), or with a lexical
baseline such as BM25 to compare."""

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import typer
from typing_extensions import Annotated

from ..lexical import BM25_B, BM25_K1
from ..readers.candidates import MAX_CANDIDATE_CHARS, read_candidates
from .app import attn_cli
from .errors import existing_file, fail, refuse_overwrite, user_errors
from .options import Arg, Bm25BOpt, Bm25K1Opt, GpuIdOpt, ModelArg, Opt

if TYPE_CHECKING:  # the pipeline is loaded when the command runs
    from ..ranking import RankedCandidate

QueryArg = Annotated[
    str,
    Arg(
        metavar="QUERY",
        help="The query: the first text of every pair",
        show_default=False,
    ),
]
CandidatesArg = Annotated[
    Path,
    Arg(
        metavar="CANDIDATES",
        help=(
            "Text file, one candidate per line (blank lines are skipped), or "
            "a jsonl / csv / tsv file with --column"
        ),
        show_default=False,
    ),
]
ColumnOpt = Annotated[
    Optional[str],
    Opt(
        "--column",
        help=(
            "The column of the candidates, in a jsonl / csv / tsv file "
            "(default: none, a text file of one candidate per line)"
        ),
        show_default=False,
    ),
]
RankMaxCharsOpt = Annotated[
    int, Opt("--max-chars", help="The longest candidate (characters)")
]
TopKOpt = Annotated[int, Opt("--top-k", help="Candidates to print (0: all)")]
RankLabelOpt = Annotated[
    Optional[str],
    Opt(
        "--label",
        help=(
            "Label whose probability ranks (default: the only label of a "
            "binary classifier)"
        ),
        show_default=False,
    ),
]
BaselineOpt = Annotated[
    Optional[str],
    Opt(
        "--baseline",
        help=(
            "Rank by this lexical baseline, IDF from the candidates, instead of "
            "the model (the pipeline only tokenizes): 'BM25', 'IDF shared "
            "words', 'shared words' or 'word overlap' (default: the model)"
        ),
        show_default=False,
    ),
]
ComponentOpt = Annotated[
    Optional[str],
    Opt(
        "--component",
        help="Pair classifier to use (default: the only one)",
        show_default=False,
    ),
]


@attn_cli.command("rank", no_args_is_help=True)
def rank_cli(
    model: ModelArg,
    query: QueryArg,
    candidates: CandidatesArg,
    top_k: TopKOpt = 10,
    label: RankLabelOpt = None,
    component: ComponentOpt = None,
    output: Annotated[
        Optional[Path],
        Opt(
            "--output",
            help="Also write the ranking as JSON here (default: print only)",
            show_default=False,
        ),
    ] = None,
    batch_size: Annotated[int, Opt("--batch-size", help="Pairs per batch")] = 256,
    n_process: Annotated[
        int, Opt("--n-process", help="Processes for nlp.pipe (CPU)")
    ] = 1,
    gpu_id: GpuIdOpt = -1,
    baseline: BaselineOpt = None,
    bm25_k1: Bm25K1Opt = BM25_K1,
    bm25_b: Bm25BOpt = BM25_B,
    column: ColumnOpt = None,
    max_chars: RankMaxCharsOpt = MAX_CANDIDATE_CHARS,
) -> None:
    """Rank the candidates of a file for a query, best first: each line is
    paired with the query (query first) and scored by the pipeline's pair
    classifier (with --baseline, by a lexical baseline: BM25 with its IDF
    from the file's candidates, ...). Prints rank, score, the candidate's
    line index (0-based) and its text.
    """
    existing_file(candidates, "CANDIDATES")
    refuse_overwrite({"--output": output}, {"CANDIDATES": candidates, "MODEL": model})
    if top_k < 0:
        fail(f"--top-k must be 0 (all) or more, got {top_k}.")
    lines, read = candidate_lines(candidates, column=column, max_chars=max_chars)
    label, ranked = rank_lines(
        model,
        query,
        [text for _, text in lines],
        top_k=top_k,
        label=label,
        component=component,
        batch_size=batch_size,
        n_process=n_process,
        gpu_id=gpu_id,
        baseline=baseline,
        bm25=(bm25_k1, bm25_b),
    )
    typer.echo(read, err=True)
    results: List[Dict[str, Any]] = [
        {
            "rank": r + 1,
            "score": item.score,
            "index": lines[item.index][0] - 1,
            "text": item.text,
        }
        for r, item in enumerate(ranked)
    ]
    for result in results:
        typer.echo(
            f"{result['rank']:>4}  {result['score']:.4f}  {result['index']:>6}  "
            f"{result['text']}"
        )
    if output:
        record = {
            "model": str(model),
            "query": query,
            "label": label,
            "baseline": baseline,
            **({"bm25_k1": bm25_k1, "bm25_b": bm25_b} if baseline else {}),
            "results": results,
        }
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(record, indent=2) + "\n", encoding="utf8")


def candidate_lines(
    path: Path, *, column: Optional[str], max_chars: int
) -> Tuple[List[Tuple[int, str]], str]:
    """The candidates of ``path`` (``spacy_attn.readers.candidates``), and
    the line saying where its lines went; a mistake ends the command."""
    with user_errors():
        lines, counts = read_candidates(path, column=column, max_chars=max_chars)
    if not lines:
        fail(
            f"{path}: no candidates ({counts.describe()}); write one candidate "
            f"text per line, or per row with --column."
        )
    return lines, f"Read {path}: {counts.describe()}"


def rank_lines(
    model: str,
    query: str,
    texts: List[str],
    *,
    top_k: int,
    label: Optional[str],
    component: Optional[str],
    batch_size: int,
    n_process: int,
    gpu_id: int,
    baseline: Optional[str] = None,
    bm25: Tuple[float, float] = (BM25_K1, BM25_B),
) -> Tuple[Optional[str], List["RankedCandidate"]]:
    """Load the pipeline and rank ``texts`` for ``query`` (``top_k`` 0: all),
    with its pair classifier or, with ``baseline``, that lexical baseline
    (``bm25``: its k1 and b); a user's mistake ends the command with one line.

    RETURNS (Tuple[Optional[str], List[RankedCandidate]]): The label that
        ranked (None for a baseline), and the ranking.
    """
    from ..loading import load_pipeline
    from ..pairs import PairError
    from ..pipeline import PairClassifier
    from ..pipeline.lookup import ComponentLookupError, find_component
    from ..ranking import PairScoreError, rank_candidates, ranking_label

    with user_errors():
        nlp = load_pipeline(model, gpu_id=gpu_id)
        if baseline is not None:
            try:
                k1, b = bm25
                ranked = rank_candidates(
                    nlp, query, texts, top_k=top_k or None, label=label,
                    baseline=baseline, k1=k1, b=b,
                )  # fmt: skip
            except PairScoreError as err:
                fail(" ".join(str(err).split()))
            return None, ranked
        try:
            name, _ = find_component(
                nlp, component, tasks=("pair",), option="--component"
            )
            pipe = nlp.get_pipe(name)
            assert isinstance(pipe, PairClassifier)  # what find_component checked
            label = ranking_label(pipe, label)
            ranked = rank_candidates(
                nlp,
                query,
                texts,
                top_k=top_k or None,
                label=label,
                component=name,
                batch_size=batch_size,
                n_process=n_process,
            )
        except (ComponentLookupError, PairScoreError, PairError) as err:
            fail(" ".join(str(err).split()))
    return label, ranked


__all__ = ["candidate_lines", "rank_cli", "rank_lines"]
