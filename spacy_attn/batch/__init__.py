"""Batch prediction over a file (``python -m spacy attn predict``): rows in,
one JSON line per row out, on an engine (docs/batch.md)."""

from .driver import predict_file
from .engines import Engine, EngineInfo, InProcessEngine, LocalPoolEngine
from .errors import PredictError
from .output import PredictStats, finished_lines
from .predictor import Predictor, format_vector
from .rows import Columns, InputRow, RowReader, count_rows

__all__ = [
    "Columns",
    "Engine",
    "EngineInfo",
    "InProcessEngine",
    "InputRow",
    "LocalPoolEngine",
    "PredictError",
    "PredictStats",
    "Predictor",
    "RowReader",
    "count_rows",
    "finished_lines",
    "format_vector",
    "predict_file",
]
