"""``spacy attn device-check``: train, save, reload and compare every
component on a device (``spacy_attn.device_check.check_device``)."""

from pathlib import Path
from typing import List, Optional

import typer
from typing_extensions import Annotated

from .app import attn_cli
from .errors import user_errors
from .options import Opt, json_output_opt


@attn_cli.command("device-check")
def device_check_cli(
    gpu_id: Annotated[int, Opt("--gpu-id", help="GPU to check, -1 for the CPU")] = 0,
    steps: Annotated[
        int, Opt("--steps", help="Training updates per component and backbone")
    ] = 20,
    components: Annotated[
        Optional[List[str]],
        Opt(
            "--component",
            help="Component to check; repeat for several (default: all three)",
            show_default=False,
        ),
    ] = None,
    backbones: Annotated[
        Optional[List[str]],
        Opt(
            "--backbone",
            help=(
                "Backbone to check: vectors, tok2vec or transformer; repeat for "
                "several (default: all three)"
            ),
            show_default=False,
        ),
    ] = None,
    output: Annotated[Optional[Path], json_output_opt("Write the results")] = None,
    mirror: Annotated[
        Optional[Path],
        Opt(
            "--mirror",
            envvar="SPACY_ATTN_MIRROR",
            help=(
                "Data mirror folder with snli/dev.jsonl.gz, "
                "rotten_tomatoes/train.jsonl.gz and squad/dev-v1.1.json.gz "
                "(default: $SPACY_ATTN_MIRROR, else vars.mirror of the "
                "project.yml in the working directory)"
            ),
            show_default=False,
        ),
    ] = None,
) -> None:
    """Train, save, reload and compare every component on a device (data: a
    mirror folder); exit code 1 if a check failed."""
    from ..device_check import DeviceCheckSettings, check_device

    settings = DeviceCheckSettings(
        gpu_id=gpu_id, steps=steps, components=components, backbones=backbones,
        output=output, mirror=mirror,
    )  # fmt: skip
    with user_errors():
        results = check_device(settings)
    if any(r["status"] == "failed" for r in results):
        raise typer.Exit(1)


__all__ = ["device_check_cli"]
