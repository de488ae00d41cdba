"""Stand-in for ``google.colab.output._widgets``: the widget manager URL anywidget reads (None until enabled)."""

_installed_url = None
