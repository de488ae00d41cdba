"""What to tell a user whose env could not render because no OpenGL backend works (MuJoCo on a server
without a display or ``MUJOCO_GL``), wherever the render ran: the live view's loop or a batch worker.

>>> opengl_failure(RuntimeError("an OpenGL platform library has not been loaded into this process"))
True
>>> opengl_failure(ValueError("ILLEGAL action"))
False
"""

from __future__ import annotations

import re

__all__ = ["OPENGL_ADVICE", "opengl_failure"]

_GL_WORDS = re.compile(r"\b(OpenGL|GLFW|EGL|OSMesa)\b")  # words: not the EGL in ILLEGAL

OPENGL_ADVICE = (
    "run gymview.setup() (or %load_ext gymview) before making the env, or set MUJOCO_GL=osmesa or egl; "
    "python -m gymview doctor says which OpenGL backend works here"
)


def opengl_failure(error: BaseException) -> bool:
    """Whether ``error`` says that OpenGL could not be used (its message names a GL library)."""
    return _GL_WORDS.search(str(error)) is not None
