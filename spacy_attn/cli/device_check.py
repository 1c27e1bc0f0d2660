"""``spacy attn device-check``: train, save, reload and compare every
component on a device (``spacy_attn.device_check``)."""

import json
from pathlib import Path
from typing import List, Optional

import typer
from typing_extensions import Annotated

from .app import attn_cli
from .errors import fail, refuse_overwrite, user_errors
from .options import Opt


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
    output: Annotated[
        Optional[Path],
        Opt(
            "--output",
            help="Write the results as JSON here (default: print only)",
            show_default=False,
        ),
    ] = None,
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
    from ..device_check import BACKBONES, COMPONENTS, run

    components = list(components or COMPONENTS)
    backbones = list(backbones or BACKBONES)
    check_choices(components, backbones, steps)
    refuse_overwrite({"--output": output}, {"--mirror": mirror})
    data = data_mirror(mirror, components)
    if gpu_id >= 0:
        import torch

        if not torch.cuda.is_available():
            fail("No CUDA device: run with --gpu-id -1 for the CPU check.", code=2)
    with user_errors():
        results = run(
            data=data,
            gpu_id=gpu_id,
            steps=steps,
            components=components,
            backbones=backbones,
        )
    if output:
        output.write_text(json.dumps(results, indent=2) + "\n")
    failed = [r for r in results if r["status"] == "failed"]
    for r in failed:
        typer.echo(
            f"\nFAILED {r['component']} / {r['backbone']}:\n{r.get('traceback', r)}",
            err=True,
        )
    if failed:
        raise typer.Exit(1)


def check_choices(components: List[str], backbones: List[str], steps: int) -> None:
    """Fail on a component or backbone the check does not know, or no steps."""
    from ..device_check import BACKBONES, COMPONENTS

    unknown = [c for c in components if c not in COMPONENTS] + [
        b for b in backbones if b not in BACKBONES
    ]
    if unknown:
        fail(
            f"Unknown component or backbone {unknown}: components are "
            f"{', '.join(COMPONENTS)}; backbones {', '.join(BACKBONES)}."
        )
    if steps < 1:
        fail("--steps must be >= 1.")


def data_mirror(mirror: Optional[Path], components: List[str]) -> Path:
    """The data mirror folder to read (``--mirror``, else the project's), or
    fail naming what is missing."""
    from ..device_check import DATA_FILES

    if mirror is None:
        # The setting of the spaCy project the command runs in (its
        # project.yml's vars.mirror, relative to that folder), never a path
        # derived from where the package is installed.
        mirror = project_mirror(Path.cwd())
        if mirror is None:
            fail(
                "No data: pass --mirror DIR (a data mirror folder), set "
                "SPACY_ATTN_MIRROR, or run from a project folder whose "
                "project.yml sets vars.mirror."
            )
    if not mirror.is_dir():
        fail(f"--mirror {mirror}: no such folder.")
    missing = [
        DATA_FILES[c] for c in components if not (mirror / DATA_FILES[c]).exists()
    ]
    if missing:
        fail(f"The data mirror {mirror} lacks {', '.join(missing)}.")
    return mirror


def project_mirror(folder: Path) -> Optional[Path]:
    """The data mirror a spaCy project folder names (``vars.mirror`` of its
    ``project.yml``, relative to the folder), or None."""
    import srsly

    config = folder / "project.yml"
    if not config.exists():
        return None
    value = (srsly.read_yaml(config).get("vars") or {}).get("mirror")
    return folder / value if value else None


__all__ = ["check_choices", "data_mirror", "device_check_cli", "project_mirror"]
