"""rooflinec: roofline results and a static report site from YAML specs of accelerators
and kernels.

`rooflinec.roofline_chart` (a device's roofline as an altair chart, for notebooks) is
loaded on first use, so that `import rooflinec` stays cheap and needs no altair.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rooflinec.integrations.notebook import roofline_chart

__version__ = "0.1.0"
__all__ = ["__version__", "roofline_chart"]


def __getattr__(name: str) -> Any:
    if name == "roofline_chart":
        from rooflinec.integrations.notebook import roofline_chart

        return roofline_chart
    raise AttributeError(f"module 'rooflinec' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), "roofline_chart"])
