"""``spacy attn rank``: rank the candidate texts of a file for a query with a
pair classifier pipeline (``spacy_attn.rank_candidates``), or with a lexical
baseline such as BM25 to compare."""

from pathlib import Path
from typing import Optional

import typer
from typing_extensions import Annotated

from ..lexical import BM25_B, BM25_K1
from ..readers.candidates import MAX_CANDIDATE_CHARS
from .app import attn_cli
from .errors import user_errors
from .options import (
    Bm25BOpt,
    Bm25K1Opt,
    GpuIdOpt,
    ModelArg,
    Opt,
    PairBatchSizeOpt,
    argument,
    component_opt,
    json_output_opt,
)

QueryArg = Annotated[
    str,
    argument("QUERY", "The query: the first text of every pair"),
]
CandidatesArg = Annotated[
    Path,
    argument(
        "CANDIDATES",
        "Text file, one candidate per line (blank lines are skipped), or "
        "a jsonl / csv / tsv file with --column",
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
ComponentOpt = Annotated[Optional[str], component_opt("Pair classifier to use")]


@attn_cli.command("rank", no_args_is_help=True)
def rank_cli(
    model: ModelArg,
    query: QueryArg,
    candidates: CandidatesArg,
    top_k: TopKOpt = 10,
    label: RankLabelOpt = None,
    component: ComponentOpt = None,
    output: Annotated[Optional[Path], json_output_opt("Also write the ranking")] = None,
    batch_size: PairBatchSizeOpt = 256,
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
    from ..rank_file import RankSettings, rank_file

    settings = RankSettings(
        top_k=top_k, label=label, component=component, output=output,
        batch_size=batch_size, n_process=n_process, gpu_id=gpu_id,
        baseline=baseline, bm25_k1=bm25_k1, bm25_b=bm25_b, column=column,
        max_chars=max_chars,
    )  # fmt: skip
    with user_errors():
        ranking = rank_file(model, query, candidates, settings)
    typer.echo(ranking.read, err=True)
    for result in ranking.results:
        typer.echo(
            f"{result['rank']:>4}  {result['score']:.4f}  {result['index']:>6}  "
            f"{result['text']}"
        )


__all__ = ["rank_cli"]
