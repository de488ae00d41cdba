"""Argument checks shared by every room, so each kind of bad input gets the same clear message.

>>> check_int("episodes", 3)
3
>>> check_int("episodes", True)
Traceback (most recent call last):
ValueError: episodes must be an integer of at least 1; got True
>>> check_int("crf", 60, minimum=0, maximum=51)
Traceback (most recent call last):
ValueError: crf must be an integer from 0 to 51; got 60
"""

from __future__ import annotations

import numbers


def check_int(name: str, value: object, minimum: int = 1, maximum: int | None = None, hint: str = "") -> int:
    """``value`` as an int if it is an integer (not a bool) in [minimum, maximum], else ValueError
    naming ``name`` and the range, followed by ``hint`` (say, what None would mean)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        number = int(value)  # exact for every Integral (numpy's integers too)
        if number >= minimum and (maximum is None or number <= maximum):
            return number
    allowed = f"from {minimum} to {maximum}" if maximum is not None else f"of at least {minimum}"
    raise ValueError(f"{name} must be an integer {allowed}{hint}; got {value!r}")


def check_optional_int(name: str, value: object, minimum: int = 1, meaning_of_none: str = "") -> int | None:
    """None, or ``value`` checked by :func:`check_int`; the message says what None means."""
    if value is None:
        return None
    return check_int(name, value, minimum, hint=f", or None ({meaning_of_none})" if meaning_of_none else ", or None")
