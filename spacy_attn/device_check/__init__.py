"""The device check (``python -m spacy attn device-check``): every component
trains, round-trips and agrees with the CPU on a device. ``check_device`` is
what the command calls; ``run`` and ``check`` do the checking."""

from .checks import BACKBONES, COMPONENTS, CPU_TOLERANCE, DATA_FILES, check, run
from .device import DeviceCheckSettings, NoDeviceError, check_device

__all__ = [
    "BACKBONES",
    "COMPONENTS",
    "CPU_TOLERANCE",
    "DATA_FILES",
    "DeviceCheckSettings",
    "NoDeviceError",
    "check",
    "check_device",
    "run",
]
