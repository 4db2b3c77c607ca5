"""Every kernel meets every device at one memory level at least.

A result's memory ceilings are the levels where the kernel counts bytes and the device
gives a bandwidth. With none in common (bytes only at `l1`, a device with only `dram`)
the result has no memory ceiling at all and comes out compute bound at the peak: a
wrong figure with nothing to show it. That is an error at the kernel's `bytes`.
"""

from __future__ import annotations

from rooflinec.assemble.builder import Builder
from rooflinec.catalog import LEVELS, Catalog

_SHOWN = 4
"""Devices named in one message; the rest are counted."""


def memory_ceilings(builder: Builder, catalog: Catalog) -> None:
    """One error per kernel that shares no memory level with some device."""
    for kernel in catalog.kernels.values():
        if not kernel.bytes or kernel.collective is not None:
            # refused already, or a collective's: its ceiling is the fabric, its rows a model's
            continue
        levels = [lv for lv in LEVELS if lv in kernel.bytes]
        apart = [
            device.id
            for device in catalog.devices.values()
            if not any(lv in device.memory for lv in levels)
        ]
        if not apart:
            continue
        shown = ", ".join(f"'{d}'" for d in apart[:_SHOWN])
        if len(apart) > _SHOWN:
            shown += f" and {len(apart) - _SHOWN} more"
        noun = "device" if len(apart) == 1 else "devices"
        builder.out.add(
            kernel.document.error(
                ("bytes",),
                f"kernel '{kernel.id}' counts bytes only at {', '.join(levels)}, which {noun}"
                f" {shown} {'gives' if len(apart) == 1 else 'give'} no bandwidth for:"
                " its results there would have no memory ceiling; count the bytes at dram"
                " too (every device gives it)",
                key=True,
                code="refs",
            )
        )


__all__ = ["memory_ceilings"]
