"""``python -m gymview ...``; see :mod:`gymview.cli`."""

from gymview.cli import main

raise SystemExit(main())
