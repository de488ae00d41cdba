"""The live view's plumbing into the notebook kernels it runs in (ipykernel 6 and 7, marimo): clicks
heard while a cell runs, pages that load during a cell, the switch interval, views in forked children.

Every use of another project's private API in gymview's live view is in this package, each gated by
the versions tested and with a documented fallback (docs/architecture.md lists them).
"""
