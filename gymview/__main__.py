"""``python -m gymview ...``: see :mod:`gymview.cli`."""

import sys

from gymview.cli import main

sys.exit(main())
