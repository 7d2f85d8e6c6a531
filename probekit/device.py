"""Where models run: ``resolve_device("auto")`` picks cuda, then mps, then cpu; any torch device string overrides.

Mixed precision is on by default on CUDA only (autocast to float16 around the forward, with scores returned as
float32), because fp16 kernels on CPU are slow or missing and MPS autocast is not reliable for every architecture;
bfloat16 can be asked for on CUDA and on the CPU (``precision_for``).
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


#: autocast dtypes by name; "fp32" runs without autocast
PRECISIONS = {"fp32": None, "fp16": torch.float16, "bf16": torch.bfloat16}


def precision_for(device: torch.device, half: bool | str | None = None) -> str:
    """The forward's precision: "fp32", "fp16" or "bf16" (autocast; scores always come back as float32).

    ``half=None``: fp16 on CUDA, fp32 elsewhere; ``False`` or "fp32": fp32 (the flag that turns autocast off);
    ``True`` or "fp16": fp16 (CUDA only: fp16 kernels on CPU are slow or missing); "bf16": bfloat16 (CUDA or CPU).
    """
    if half is None:
        return "fp16" if device.type == "cuda" else "fp32"
    name = {True: "fp16", False: "fp32"}.get(half, half) if isinstance(half, bool) else str(half)
    if name not in PRECISIONS:
        raise ValueError(f"half must be None, True, False or one of {sorted(PRECISIONS)}, not {half!r}")
    if (name == "fp16" and device.type != "cuda") or (name == "bf16" and device.type not in ("cuda", "cpu")):
        raise ValueError(f"{name} autocast is not supported on {device.type}; use half=False"
                         + (" or half='bf16'" if device.type == "cpu" else ""))
    return name


def autocast(device: torch.device, precision: str):
    """Context manager for one forward: autocast to ``precision`` (fp16/bf16), or a no-op for fp32."""
    dtype = PRECISIONS[precision]
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)
