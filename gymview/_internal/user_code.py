"""The user's code on its way to worker processes, and the errors it raises there, named as the user
knows it: ``my_script.py:3`` for a file, ``Cell In[4], line 3`` for a notebook cell (as IPython's own
tracebacks say), whichever cloudpickle is installed.

cloudpickle sends a function defined in ``__main__`` or a notebook cell by value, code object and all;
from 3.1.3 it replaces the code's file name with ``<dynamic-code>``. :func:`pickled` keeps a name in its
place: the cell's name where IPython knows the file as a cell, else the file's own name.

>>> def policy(observation):
...     return 1 // observation
>>> import pickle
>>> restored = pickle.loads(pickled(policy))
>>> try:
...     restored(0)
... except ZeroDivisionError as error:
...     print(error_text(error))  # doctest: +ELLIPSIS
ZeroDivisionError: integer division or modulo by zero (<doctest ...[0]>, line 2 in policy)
"""

from __future__ import annotations

import io
import os
import sysconfig
import traceback
import types
from collections import ChainMap
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

from gymview._internal.kernel import ipython_shell


def pickled(value: object) -> bytes:
    """``value`` pickled with cloudpickle, each code object sent by value keeping the name of its file
    (see :func:`file_label`). Load it with plain :func:`pickle.loads`."""
    pickler, protocol = _labelling_pickler()
    with io.BytesIO() as file:
        pickler(file, protocol=protocol).dump(value)
        return file.getvalue()


@cache
def _labelling_pickler() -> tuple[type, int]:
    import cloudpickle

    reduce_code = cloudpickle.Pickler.dispatch_table[types.CodeType]

    def labelled_code(code: types.CodeType) -> tuple[Any, tuple]:
        rebuild, arguments = reduce_code(code)
        return _with_file_name, (rebuild, arguments, file_label(code.co_filename))

    class LabellingPickler(cloudpickle.Pickler):
        dispatch_table: ClassVar[ChainMap] = ChainMap(
            {types.CodeType: labelled_code}, cloudpickle.Pickler.dispatch_table
        )

    return LabellingPickler, cloudpickle.DEFAULT_PROTOCOL


def _with_file_name(rebuild: Any, arguments: tuple, file_name: str) -> types.CodeType:
    return rebuild(*arguments).replace(co_filename=file_name)


def file_label(file_name: str) -> str:
    """``Cell In[4]`` for code IPython compiled from a cell (its file is a temporary path, or
    ``<ipython-input-...>``), else ``file_name`` unchanged."""
    shell = ipython_shell()
    if shell is not None:
        name_of = getattr(getattr(shell, "compile", None), "format_code_name", None)
        label = name_of(file_name) if name_of is not None else None
        if label is not None:
            return " ".join(label)
    return file_name


def place(file_name: str, line: int | None) -> str:
    """Where code is, as the user knows it: ``my_script.py:3`` for a file, ``Cell In[4], line 3`` for
    a notebook cell and ``<string>, line 3`` for other code that is not in a file.

    >>> place("/home/me/my_script.py", 3), place("Cell In[4]", 3)
    ('my_script.py:3', 'Cell In[4], line 3')
    """
    label = file_label(file_name)
    if label.endswith(".py") or os.sep in label:
        return f"{Path(label).name}:{line}"
    return f"{label}, line {line}"


def error_text(error: BaseException) -> str:
    """``Type: message (place in function)``, the place being the innermost frame of the user's own
    code (not the standard library's, an installed package's or gymview's), or the innermost frame
    when the traceback holds none of the user's.

    >>> error_text(ValueError("no traceback"))
    'ValueError: no traceback'
    """
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return f"{type(error).__name__}: {error}"
    theirs = [frame for frame in frames if not _is_library(frame.filename)]
    frame = (theirs or frames)[-1]
    return f"{type(error).__name__}: {error} ({place(frame.filename, frame.lineno)} in {frame.name})"


def _is_library(file_name: str) -> bool:
    if file_name.startswith("<"):  # not a file: <string>, or <frozen runpy> and numpy's <__array_function__ internals>
        return file_name.startswith("<frozen ") or file_name.endswith(" internals>")
    path = os.path.abspath(file_name)
    return any(path.startswith(folder) for folder in _library_folders())


@cache
def _library_folders() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    folders = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    folders.add(str(Path(__file__).resolve().parent))
    return tuple(os.path.join(os.path.abspath(folder), "") for folder in folders)
