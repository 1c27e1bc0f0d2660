"""``spacy attn predict``: batch prediction over a file, on the engine that
its options build (``spacy_attn.batch``)."""

import typer

from .app import attn_cli
from .errors import user_errors
from .options import (
    BatchesPerTaskOpt,
    BatchSizeOpt,
    ComponentOpt,
    DelimiterOpt,
    EngineOpt,
    FormatOpt,
    GroupColOpt,
    IdColOpt,
    InputArg,
    LabelColOpt,
    MaxCharsOpt,
    MaxInFlightOpt,
    MaxRejectsOpt,
    NoProgressOpt,
    NProcessOpt,
    NWorkersOpt,
    OutputArg,
    OverwriteOpt,
    PredictGpuIdOpt,
    PredictModelArg,
    QuotingOpt,
    RejectsOpt,
    ResourcesOpt,
    ResumeOpt,
    SchedulerOpt,
    ScoreThresholdOpt,
    StartupTimeoutOpt,
    TextColsOpt,
    ThreadsOpt,
    parse_resources,
    parse_text_cols,
)


@attn_cli.command("predict", no_args_is_help=True)
def predict_cli(
    model: PredictModelArg,
    input_path: InputArg,
    output_path: OutputArg,
    engine: EngineOpt = "local",
    n_process: NProcessOpt = 1,
    batch_size: BatchSizeOpt = 64,
    gpu_id: PredictGpuIdOpt = -1,
    threads: ThreadsOpt = None,
    text_cols: TextColsOpt = None,
    id_col: IdColOpt = None,
    label_col: LabelColOpt = None,
    group_col: GroupColOpt = None,
    rejects: RejectsOpt = None,
    max_rejects: MaxRejectsOpt = 100,
    resume: ResumeOpt = False,
    overwrite: OverwriteOpt = False,
    input_format: FormatOpt = "auto",
    delimiter: DelimiterOpt = None,
    quoting: QuotingOpt = "auto",
    component: ComponentOpt = None,
    max_chars: MaxCharsOpt = None,
    score_threshold: ScoreThresholdOpt = None,
    no_progress: NoProgressOpt = False,
    scheduler: SchedulerOpt = None,
    n_workers: NWorkersOpt = 2,
    batches_per_task: BatchesPerTaskOpt = 4,
    max_in_flight: MaxInFlightOpt = None,
    resources: ResourcesOpt = None,
    startup_timeout: StartupTimeoutOpt = 300.0,
) -> None:
    """Predict every row of INPUT with the pipeline's spacy-attn component
    (pairs -> cats; docs -> embedding and cats; QA -> answers) and write one
    JSON line per row, in input order, to OUTPUT. Streaming, resumable, on
    local worker processes or a Dask cluster."""
    from ..batch.settings import (
        EngineSettings,
        PredictSettings,
        describe_run,
        predict_with_settings,
    )

    engine_settings = EngineSettings(
        engine, n_process=n_process, gpu_id=gpu_id, threads=threads,
        score_threshold=score_threshold, scheduler=scheduler, n_workers=n_workers,
        batches_per_task=batches_per_task, max_in_flight=max_in_flight,
        resources=parse_resources(resources), startup_timeout=startup_timeout,
    )  # fmt: skip
    settings = PredictSettings(
        engine_settings, batch_size=batch_size, text_cols=parse_text_cols(text_cols),
        id_col=id_col, label_col=label_col, group_col=group_col, rejects_path=rejects,
        max_rejects=max_rejects, resume=resume, overwrite=overwrite,
        input_format=input_format, delimiter=delimiter, quoting=quoting,
        component=component, max_chars=max_chars, progress=not no_progress,
    )  # fmt: skip
    with user_errors():
        stats = predict_with_settings(model, input_path, output_path, settings)
    typer.echo(describe_run(stats, output_path, rejects), err=True)


__all__ = ["predict_cli"]
