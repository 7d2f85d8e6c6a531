"""Where models run: ``resolve_device("auto")`` picks cuda, then mps, then cpu; any torch device string overrides.

Half precision is used on CUDA only (autocast to float16 around the forward, with scores returned as float32),
because fp16 kernels on CPU are slow or missing and MPS autocast is not reliable for every architecture.
"""

from __future__ import annotations

import contextlib

import torch


def resolve_device(device: str | torch.device | None = "auto") -> torch.device:
    """``"auto"``/None -> cuda if available, else mps if available, else cpu; otherwise ``torch.device(device)``."""
    if device is None or str(device) == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {str(device)!r} requested but CUDA is not available; use device='auto' or 'cpu'")
    return dev


def use_half(device: torch.device, half: bool | None = None) -> bool:
    """Whether to run the forward under float16 autocast: ``half=None`` means "on CUDA only"."""
    if half is None:
        return device.type == "cuda"
    if half and device.type != "cuda":
        raise ValueError(f"half precision is only supported on CUDA, not on {device.type}")
    return bool(half)


def autocast(device: torch.device, half: bool):
    """Context manager for one forward: float16 autocast on CUDA when ``half``, else a no-op."""
    if half and device.type == "cuda":
        return torch.autocast(device_type="cuda", dtype=torch.float16)
    return contextlib.nullcontext()
