"""Quickstart training configs (``python -m spacy attn init-config``): one
per task, backbone, label setting and device, filled and validated by spaCy,
optionally starting from a trained pipeline. ``init_config`` is what the
command calls; ``quickstart`` builds a config without writing it.

* ``templates``: the configs before spaCy fills them (``base_config``);
* ``header``: the comment lines that say how to train;
* ``start``: starting from a trained pipeline (``--init-from``);
* ``build``: the settings, their checks, and writing the config.
"""

from .build import QuickstartSettings, init_config, quickstart, quickstart_config
from .templates import (
    BACKBONES,
    COMPONENTS,
    DEFAULT_POSITIVE_LABEL,
    TASKS,
    ConfigChoices,
    backbone_block,
    base_config,
)

__all__ = [
    "BACKBONES",
    "COMPONENTS",
    "DEFAULT_POSITIVE_LABEL",
    "TASKS",
    "ConfigChoices",
    "QuickstartSettings",
    "backbone_block",
    "base_config",
    "init_config",
    "quickstart",
    "quickstart_config",
]
