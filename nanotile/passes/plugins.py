"""--load-pass-plugin FILE.py (MLIR's flag): a user's passes, without editing nanotile.

The file is imported as a module of its own; it defines Pass subclasses
(nanotile.passes.base) and registers them (``nanotile.passes.registry.register``), so
that ``-p name`` runs them and --list-passes lists them. Everything that can go wrong is
a located error, never a traceback: the file is missing, it does not compile, it raises
while it is imported (at the line of the file that raised), it registers no pass, or it
registers a name nanotile already has (a built-in pass is never replaced). A file loaded
twice (``python -m nanotile.passes`` reads the flags, the worker processes of
``nanotile A B`` again) is imported once: it is kept in ``sys.modules`` under a name
made from its path.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import sys
import traceback

from ..diagnostics import CompileError, Diagnostic
from .base import Pass
from .registry import PASSES

FLAG = "--load-pass-plugin"


def load_pass_plugin(path: str) -> list[str]:
    """Import the plugin at ``path``; the names of the passes it registered."""
    real = os.path.realpath(path)
    name = "nanotile_plugin_" + hashlib.sha1(real.encode()).hexdigest()[:12]
    if name in sys.modules:
        return list(getattr(sys.modules[name], "__nanotile_passes__", []))
    try:
        open(path, "rb").close()  # (the import would say less: "No module named ...")
    except OSError as e:
        raise _error(f"cannot read pass plugin: {e.strerror}", path) from None
    known = dict(PASSES)
    spec = importlib.util.spec_from_file_location(name, real)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        added = _check_registered(known, path)
    except CompileError:
        _forget(name, known)
        raise
    except SyntaxError as e:  # in the plugin, or in a file it imports
        _forget(name, known)
        where = e.filename if e.filename and os.path.realpath(e.filename) != real else path
        raise _error(f"pass plugin does not compile: {e.msg}", where, e.lineno,
                     e.offset) from None
    except (Exception, SystemExit) as e:  # noqa: BLE001 - the user's code, located
        _forget(name, known)
        raise _error(f"pass plugin failed while loading: {type(e).__name__}: {e}", path,
                     _line_in(e, real)) from None
    if not added:
        _forget(name, known)
        raise _error("pass plugin registered no pass: define a Pass subclass (nanotile."
                     "passes.base) and call nanotile.passes.registry.register on it (see "
                     "examples/plugin_count_ops.py)", path)
    module.__nanotile_passes__ = added  # type: ignore[attr-defined]
    return added


def _check_registered(known: dict[str, type[Pass]], path: str) -> list[str]:
    """The names the plugin added; a name it took from nanotile, or a class that is not
    a pass, is an error (and nanotile's pass is put back)."""
    added = []
    for name, cls in list(PASSES.items()):
        if known.get(name) is cls:
            continue
        line = _class_line(cls)
        if name in known:
            PASSES[name] = known[name]
            owner = ("nanotile has" if known[name].__module__.startswith("nanotile.")
                     else "another plugin registered")
            raise _error(f"pass plugin registers '{name}', the name of a pass {owner}: "
                         "choose another name", path, line)
        if not (isinstance(cls, type) and issubclass(cls, Pass)) or not name:
            del PASSES[name]
            raise _error(f"pass plugin registers {cls!r} as '{name}': register a subclass "
                         "of nanotile.passes.base.Pass with a name", path, line)
        added.append(name)
    return added


def _forget(module_name: str, known: dict[str, type[Pass]]) -> None:
    """A plugin that failed leaves nothing behind."""
    sys.modules.pop(module_name, None)
    PASSES.clear()
    PASSES.update(known)


def _line_in(error: Exception, path: str) -> int | None:
    """The last line of the plugin file in the error's traceback."""
    line = None
    for frame in traceback.extract_tb(error.__traceback__):
        if os.path.realpath(frame.filename) == path:
            line = frame.lineno
    return line


def _class_line(cls: object) -> int | None:
    try:
        return inspect.getsourcelines(cls)[1]  # type: ignore[arg-type]
    except (OSError, TypeError):
        return None


def _error(message: str, path: str, line: int | None = None,
           column: int | None = None) -> CompileError:
    """One line: ``file:line:col: error: message``."""
    return CompileError(Diagnostic("error", message, path, line, column, own_text=""))
