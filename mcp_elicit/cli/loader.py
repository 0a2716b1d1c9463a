"""Finding the ``Server`` a user's file or module defines.

Rules: a target is ``path/to/file.py`` or ``package.module``, optionally followed by
``:attribute``. A module is looked for in the current directory first, as ``python -m``
and uvicorn look (the console script's path lacks it). Without an attribute, the
module's ``app``, ``server`` or ``mcp`` is used, or its only ``Server`` instance. Every
failure says what was looked for and where; a name that is not a ``Server`` is said to be
what it is (a class, a function...), with the Servers the module does define. A module
that fails while it is imported (a syntax error, an exception, a missing import), or a
name whose reading raises (a module ``__getattr__``), is named with the error and the
line it came from (the user's own, when what raised is mcp_elicit or a library refusing
what that line gave it: a registration mistake), in one line, not a traceback.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import os
import sys
import sysconfig
import traceback
from pathlib import Path
from types import BuiltinFunctionType, FunctionType, ModuleType
from typing import Final, TypeGuard, TypeVar

from mcp_elicit.errors import CliError
from mcp_elicit.server.app import Server

__all__ = ["load_server"]

_NAMES = ("app", "server", "mcp")

_T = TypeVar("_T")


def _load_module(spec: str) -> ModuleType:
    if spec.endswith(".py") or "/" in spec or Path(spec).suffix == ".py":
        path = Path(spec).resolve()
        if not path.is_file():
            raise CliError(f"no such file: {spec}", exit_code=2)
        name = f"_mcp_elicit_app_{abs(hash(str(path)))}"
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:
            raise CliError(f"cannot import {spec}", exit_code=2)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        sys.path.insert(0, str(path.parent))
        try:
            module_spec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(name, None)
            raise _import_failed(spec, exc) from None
        return module
    if str(Path.cwd()) not in sys.path and "" not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as exc:
        if exc.name is not None and spec.split(".")[0] == exc.name.split(".")[0]:
            raise CliError(f"cannot import module {spec!r}: {exc}", exit_code=2) from None
        raise _import_failed(spec, exc) from None
    except Exception as exc:
        raise _import_failed(spec, exc) from None


#: Where code that is not the user's lives: mcp_elicit itself, the standard library and
#: installed packages. A registration mistake raised there is the user's line's doing.
_LIBRARIES: Final = tuple(
    {
        str(Path(__file__).resolve().parents[1]),
        *(sysconfig.get_path(k) for k in ("stdlib", "purelib", "platlib")),
    }
)


def _library(filename: str) -> bool:
    path = str(Path(filename).resolve())
    return any(path == root or path.startswith(root.rstrip("/\\") + os.sep) for root in _LIBRARIES if root)


def _import_failed(spec: str, exc: Exception, doing: str = "importing it") -> CliError:
    """What went wrong importing the user's module (or ``doing`` something else with it,
    such as reading a name a module ``__getattr__`` gives), and where, in one line."""
    if isinstance(exc, SyntaxError):
        where = f"{Path(exc.filename).name} line {exc.lineno}" if exc.filename else f"line {exc.lineno}"
        return CliError(f"cannot load {spec}: {exc.msg} ({where})", exit_code=2)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<frozen")]
    # the user's line, if it is there: not a library's, nor generated code's (a dataclass's
    # __init__ is "<string>", which names no file)
    own = [f for f in frames if not _library(f.filename) and not f.filename.startswith("<")] or frames
    at = f" (at {Path(own[-1].filename).name} line {own[-1].lineno})" if own else ""
    run = f"python {spec}" if spec.endswith(".py") or "/" in spec else f"python -c 'import {spec}'"
    return CliError(
        f"cannot load {spec}: {doing} raised {type(exc).__name__}: {exc}{at}; "
        f"run {run} to see the whole traceback",
        exit_code=2,
    )


def _what(obj: object) -> str:
    """What ``obj`` is, for a person who took it for a ``Server``."""
    if _is(obj, type):
        return "a class (a dataclass)" if dataclasses.is_dataclass(obj) else "a class"
    if _is(obj, FunctionType) or _is(obj, BuiltinFunctionType):
        return "a function"
    if _is(obj, ModuleType):
        return "a module"
    kind = type(obj).__name__
    return f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind} object"


def _is(obj: object, kind: type[_T]) -> TypeGuard[_T]:
    """``isinstance``, False when asking raises: an object whose ``__class__`` raises (a
    proxy to nothing yet, say) is not a ``Server``, and is said by its own type."""
    try:
        return isinstance(obj, kind)
    except Exception:
        return False


def _attribute(module: ModuleType, spec: str, name: str) -> object:
    """``module``'s ``name``, or None; what a module ``__getattr__`` raises is said as an
    import that fails is."""
    try:
        return getattr(module, name, None)
    except Exception as exc:
        raise _import_failed(spec, exc, f"reading {name!r}") from None


def load_server(target: str) -> Server:
    spec, _, attr = target.partition(":")
    if ":" in target and len(spec) == 1 and target[1:3] in (":\\", ":/"):  # a Windows drive letter
        spec, attr = target, ""
    module = _load_module(spec)
    if attr:
        obj = _attribute(module, spec, attr)
        if _is(obj, Server):
            return obj
        servers = [f"{spec}:{name}" for name, value in vars(module).items() if _is(value, Server)]
        others = f"; its Servers: {', '.join(servers)}" if servers else "; it defines no Server"
        if obj is None:
            raise CliError(f"{spec} has no Server named {attr!r}{others}", exit_code=2)
        raise CliError(f"{spec}:{attr} is {_what(obj)}, not an mcp_elicit.Server{others}", exit_code=2)
    looked: dict[str, object] = {}  # what the looked-for names hold, when not a Server
    for name in _NAMES:
        obj = _attribute(module, spec, name)
        if _is(obj, Server):
            return obj
        if obj is not None and not _is(obj, ModuleType):
            looked[name] = obj
    found = list(
        {id(v): v for v in vars(module).values() if _is(v, Server)}.values()
    )  # one under two names is one
    if len(found) == 1:
        return found[0]
    if not found:
        if not looked:
            raise CliError(
                f"{spec} defines no mcp_elicit.Server (name it app, or pass {spec}:NAME)", exit_code=2
            )
        held = ", ".join(f"its {name} is {_what(obj)}" for name, obj in looked.items())
        raise CliError(
            f"{spec} defines no mcp_elicit.Server: {held}. A server of another library is started its "
            "own way (mcp-elicit check -- COMMAND tests it); an mcp_elicit Server is named app, or given "
            f"as {spec}:NAME",
            exit_code=2,
        )
    named = [f"{spec}:{name}" for name, value in vars(module).items() if _is(value, Server)]
    raise CliError(
        f"{spec} defines several Servers; pass {spec}:NAME to choose one: {', '.join(dict.fromkeys(named))}",
        exit_code=2,
    )
