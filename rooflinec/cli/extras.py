"""Which optional dependencies a command needs, and the one line that says how to get them.

`pip install rooflinec` checks and compiles; the site (`build`, `serve`, `publish`) and the
symbolic formulas (`explain --symbolic`) come with extras. A command
whose extra is missing stops before doing anything, with exit 2 and the `pip install` that
fixes it, instead of a traceback from deep inside mkdocs or sympy.
"""

from __future__ import annotations

import importlib.util

from rooflinec.errors import UsageError

__all__ = ["EXTRA_OF_MODULE", "missing_extra_message", "require_extra"]

# The top-level module each extra brings, by the extra that brings it. The site extra
# includes the symbolic one.
_MODULES = {
    "symbolic": ("sympy",),
    "site": ("sympy", "jinja2", "mkdocs", "material", "vl_convert", "nh3", "mike"),
    "notebook": ("altair",),
}

# What to install when a module is missing: the smallest extra that brings it.
EXTRA_OF_MODULE: dict[str, str] = {
    module: extra
    for extra in sorted(_MODULES, key=lambda e: len(_MODULES[e]), reverse=True)
    for module in _MODULES[extra]
}


def missing_extra_message(what: str, extra: str, missing: list[str]) -> str:
    """One line: what needs the extra, the command that installs it, and what is missing."""
    return (
        f"{what} needs {', '.join(missing)}: install rooflinec[{extra}]"
        f" (pip install 'rooflinec[{extra}]')"
    )


def require_extra(what: str, extra: str) -> None:
    """Raise `UsageError` when a module of `extra` cannot be imported.

    Looks the modules up without importing them, so a command that has them pays nothing.
    """
    missing = [m for m in _MODULES[extra] if importlib.util.find_spec(m) is None]
    if missing:
        raise UsageError(missing_extra_message(what, extra, missing))
