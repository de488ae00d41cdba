"""Natural order of file names: ``episode-2`` before ``episode-10``.

>>> from pathlib import Path
>>> [p.name for p in sorted(map(Path, ["episode-10.mp4", "episode-2.mp4"]), key=natural_key)]
['episode-2.mp4', 'episode-10.mp4']
"""

from __future__ import annotations

import re
from pathlib import Path


def natural_key(path: Path) -> list[object]:
    """The sort key of ``path``'s name: its runs of digits compared as numbers, the rest without case."""
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", path.name)]
