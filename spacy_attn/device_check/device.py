"""``check_device``, the call of ``spacy attn device-check``: the options
checked, the data mirror found, every component x backbone checked
(``run``), the results written and the failures reported."""

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from ..file_safety import check_outputs
from ..usage import UsageError
from .checks import BACKBONES, COMPONENTS, DATA_FILES, run


class NoDeviceError(UsageError):
    """A GPU check on a machine without CUDA: exit code 2, so that a
    checklist tells "nothing to check here" from a check that failed."""

    exit_code = 2


@dataclass(frozen=True)
class DeviceCheckSettings:
    """What ``check_device`` checks, and where.

    gpu_id (int): The GPU to check, -1 for the CPU.
    steps (int): Training updates per component and backbone (>= 1).
    components (Optional[Sequence[str]]): Of ``COMPONENTS`` (None: all).
    backbones (Optional[Sequence[str]]): Of ``BACKBONES`` (None: all).
    output (Optional[Path]): Write the results as JSON here (None: don't).
    mirror (Optional[Path]): The data mirror folder (None: the one the
        ``project.yml`` of the working directory names, ``project_mirror``).
    """

    gpu_id: int = 0
    steps: int = 20
    components: Optional[Sequence[str]] = None
    backbones: Optional[Sequence[str]] = None
    output: Optional[Path] = None
    mirror: Optional[Path] = None


def check_device(
    settings: DeviceCheckSettings,
    *,
    log: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
) -> List[Dict[str, Any]]:
    """Check the settings and the data, then train, save, reload and compare
    every component x backbone on the device (``run``); write the results to
    ``settings.output`` and log the traceback of each failed check.

    settings (DeviceCheckSettings): What to check, and where.
    log (Callable[[str], None]): Progress and failures (default: stderr).
    RETURNS (List[Dict[str, Any]]): One result per combination; a failed
        one has ``"status": "failed"``.
    RAISES (UsageError): For an unknown component or backbone, no steps, an
        output that is the mirror, or a missing mirror or data file.
    RAISES (NoDeviceError): For a GPU check without a CUDA device.
    """
    components = list(settings.components or COMPONENTS)
    backbones = list(settings.backbones or BACKBONES)
    check_choices(components, backbones, settings.steps)
    check_outputs({"--output": settings.output}, {"--mirror": settings.mirror})
    data = data_mirror(settings.mirror, components)
    if settings.gpu_id >= 0:
        import torch

        if not torch.cuda.is_available():
            raise NoDeviceError(
                "No CUDA device: run with --gpu-id -1 for the CPU check."
            )
    results = run(
        data=data,
        gpu_id=settings.gpu_id,
        steps=settings.steps,
        components=components,
        backbones=backbones,
        log=log,
    )
    if settings.output:
        settings.output.write_text(json.dumps(results, indent=2) + "\n")
    for r in results:
        if r["status"] == "failed":
            log(
                f"\nFAILED {r['component']} / {r['backbone']}:\n{r.get('traceback', r)}"
            )
    return results


def check_choices(components: List[str], backbones: List[str], steps: int) -> None:
    """Refuse a component or backbone the check does not know, or no steps.

    RAISES (UsageError): Naming the choices there are.
    """
    unknown = [c for c in components if c not in COMPONENTS] + [
        b for b in backbones if b not in BACKBONES
    ]
    if unknown:
        raise UsageError(
            f"Unknown component or backbone {unknown}: components are "
            f"{', '.join(COMPONENTS)}; backbones {', '.join(BACKBONES)}."
        )
    if steps < 1:
        raise UsageError("--steps must be >= 1.")


def data_mirror(mirror: Optional[Path], components: List[str]) -> Path:
    """The data mirror folder to read: ``mirror``, else the project's.

    RETURNS (Path): The folder, which holds the components' ``DATA_FILES``.
    RAISES (UsageError): Naming what is missing.
    """
    if mirror is None:
        # The setting of the spaCy project the command runs in (its
        # project.yml's vars.mirror, relative to that folder), never a path
        # derived from where the package is installed.
        mirror = project_mirror(Path.cwd())
        if mirror is None:
            raise UsageError(
                "No data: pass --mirror DIR (a data mirror folder), set "
                "SPACY_ATTN_MIRROR, or run from a project folder whose "
                "project.yml sets vars.mirror."
            )
    if not mirror.is_dir():
        raise UsageError(f"--mirror {mirror}: no such folder.")
    missing = [
        DATA_FILES[c] for c in components if not (mirror / DATA_FILES[c]).exists()
    ]
    if missing:
        raise UsageError(f"The data mirror {mirror} lacks {', '.join(missing)}.")
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


__all__ = [
    "DeviceCheckSettings",
    "NoDeviceError",
    "check_choices",
    "check_device",
    "data_mirror",
    "project_mirror",
]
