"""Ranking the candidate texts of a file for a query with a pair classifier
pipeline (``spacy_attn.ranking.rank_candidates``), or with a lexical
baseline such as BM25 to compare: ``rank_file``, the call of ``spacy attn
rank``."""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from .file_safety import check_outputs
from .lexical import BM25_B, BM25_K1
from .readers.candidates import MAX_CANDIDATE_CHARS
from .usage import UsageError, require_file

if TYPE_CHECKING:  # the pipeline is loaded when a ranking runs
    from .ranking import RankedCandidate


@dataclass(frozen=True)
class RankSettings:
    """How ``rank_file`` reads, ranks and writes.

    top_k (int): Candidates to keep (0: all).
    label (Optional[str]): The label whose probability ranks (None: the only
        label of a binary classifier).
    component (Optional[str]): The pair classifier (None: the only one).
    output (Optional[Path]): Also write the ranking as JSON here.
    batch_size (int): Pairs per batch.
    n_process (int): Processes for ``nlp.pipe`` (CPU).
    gpu_id (int): The GPU (-1: the CPU).
    baseline (Optional[str]): Rank by this lexical baseline instead of the
        model (``spacy_attn.ranking``'s names, e.g. "BM25").
    bm25_k1, bm25_b (float): BM25's settings.
    column (Optional[str]): The column of the candidates in a jsonl / csv /
        tsv file (None: a text file of one candidate per line).
    max_chars (int): The longest candidate (characters).
    """

    top_k: int = 10
    label: Optional[str] = None
    component: Optional[str] = None
    output: Optional[Path] = None
    batch_size: int = 256
    n_process: int = 1
    gpu_id: int = -1
    baseline: Optional[str] = None
    bm25_k1: float = BM25_K1
    bm25_b: float = BM25_B
    column: Optional[str] = None
    max_chars: int = MAX_CANDIDATE_CHARS


@dataclass(frozen=True)
class FileRanking:
    """What ``rank_file`` found.

    read (str): The line saying where the file's lines went.
    label (Optional[str]): The label that ranked (None for a baseline).
    results (List[Dict[str, Any]]): Best first: ``rank`` (1-based),
        ``score``, ``index`` (the candidate's line, 0-based) and ``text``.
    """

    read: str
    label: Optional[str]
    results: List[Dict[str, Any]]


def rank_file(
    model: str, query: str, candidates: Path, settings: RankSettings
) -> FileRanking:
    """Check the paths and settings, read the candidates of a file and rank
    them for ``query`` (``rank_lines``), and write the ranking to
    ``settings.output`` if given.

    model (str): A pipeline directory or package name.
    query (str): The query: the first text of every pair.
    candidates (Path): A text file of one candidate per line, or a jsonl /
        csv / tsv file with ``settings.column``.
    settings (RankSettings): How to read, rank and write.
    RETURNS (FileRanking): The ranking and what was read.
    RAISES (UsageError): For a missing or empty CANDIDATES file, a negative
        --top-k, or a component, label or baseline that cannot rank.
    RAISES (OutputPathError): If --output is one of the inputs.
    """
    from .readers.candidates import read_candidates

    require_file(candidates, "CANDIDATES")
    check_outputs(
        {"--output": settings.output}, {"CANDIDATES": candidates, "MODEL": model}
    )
    if settings.top_k < 0:
        raise UsageError(f"--top-k must be 0 (all) or more, got {settings.top_k}.")
    lines, counts = read_candidates(
        candidates, column=settings.column, max_chars=settings.max_chars
    )
    if not lines:
        raise UsageError(
            f"{candidates}: no candidates ({counts.describe()}); write one "
            f"candidate text per line, or per row with --column."
        )
    label, ranked = rank_lines(
        model, query, [text for _, text in lines], top_k=settings.top_k,
        label=settings.label, component=settings.component,
        batch_size=settings.batch_size, n_process=settings.n_process,
        gpu_id=settings.gpu_id, baseline=settings.baseline,
        bm25=(settings.bm25_k1, settings.bm25_b),
    )  # fmt: skip
    results: List[Dict[str, Any]] = [
        {
            "rank": r + 1,
            "score": item.score,
            "index": lines[item.index][0] - 1,
            "text": item.text,
        }
        for r, item in enumerate(ranked)
    ]
    if settings.output:
        _write_ranking(settings, model=model, query=query, label=label, results=results)
    return FileRanking(f"Read {candidates}: {counts.describe()}", label, results)


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
    (``bm25``: its k1 and b).

    RETURNS (Tuple[Optional[str], List[RankedCandidate]]): The label that
        ranked (None for a baseline), and the ranking.
    RAISES (UsageError): For a component, label or baseline that cannot rank.
    """
    from .loading import load_pipeline
    from .pairs import PairError
    from .pipeline import PairClassifier
    from .pipeline.lookup import ComponentLookupError, find_component
    from .ranking import PairScoreError, rank_candidates, ranking_label

    nlp = load_pipeline(model, gpu_id=gpu_id)
    if baseline is not None:
        try:
            k1, b = bm25
            ranked = rank_candidates(
                nlp, query, texts, top_k=top_k or None, label=label,
                baseline=baseline, k1=k1, b=b,
            )  # fmt: skip
        except PairScoreError as err:
            raise UsageError(str(err)) from err
        return None, ranked
    try:
        name, _ = find_component(nlp, component, tasks=("pair",), option="--component")
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
        raise UsageError(str(err)) from err
    return label, ranked


def _write_ranking(
    settings: RankSettings,
    *,
    model: str,
    query: str,
    label: Optional[str],
    results: List[Dict[str, Any]],
) -> None:
    # The JSON record of a ranking: the settings that shape it, then the results.
    assert settings.output is not None
    baseline = settings.baseline
    record = {
        "model": str(model),
        "query": query,
        "label": label,
        "baseline": baseline,
        **(
            {"bm25_k1": settings.bm25_k1, "bm25_b": settings.bm25_b} if baseline else {}
        ),
        "results": results,
    }
    settings.output.parent.mkdir(parents=True, exist_ok=True)
    settings.output.write_text(json.dumps(record, indent=2) + "\n", encoding="utf8")


__all__ = ["FileRanking", "RankSettings", "rank_file", "rank_lines"]
