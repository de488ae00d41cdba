"""What to tell a user whose env could not render because no OpenGL backend works (MuJoCo on a server
without a display or ``MUJOCO_GL``), wherever the render ran: the live view's loop or a batch worker.

>>> opengl_failure(RuntimeError("an OpenGL platform library has not been loaded into this process"))
True
>>> opengl_failure(ValueError("bad action"))
False
"""

from __future__ import annotations

__all__ = ["OPENGL_ADVICE", "opengl_failure"]

_GL_WORDS = ("OpenGL", "GLFW", "EGL", "OSMesa")

OPENGL_ADVICE = (
    "run gymview.setup() (or %load_ext gymview) before making the env, or set MUJOCO_GL=osmesa or egl; "
    "python -m gymview doctor says which OpenGL backend works here"
)


def opengl_failure(error: BaseException) -> bool:
    """Whether ``error`` says that OpenGL could not be used (its message names a GL library)."""
    return any(word in str(error) for word in _GL_WORDS)
