"""Every knob of nanotile: the environment variables and debug switches, in one place.

``NANOTILE_RAISE_INTERNAL_ERRORS=1``
    A bug inside nanotile (an exception that is not a CompileError, raised by a pass or
    by the back end) normally becomes a one-line "internal error" diagnostic, located at
    the op being worked on, with the original exception chained as its ``__cause__``.
    With this knob set the original exception propagates unchanged, with its traceback:
    for debugging, and for tests that want to see the bug itself.

The knobs are read when asked for (not at import), so a test can set them with
``monkeypatch.setenv``.
"""

from __future__ import annotations

import os

RAISE_INTERNAL_ERRORS = "NANOTILE_RAISE_INTERNAL_ERRORS"


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


def raise_internal_errors() -> bool:
    """Let internal exceptions propagate instead of turning them into diagnostics."""
    return _flag(RAISE_INTERNAL_ERRORS)
