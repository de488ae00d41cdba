"""Stand-in for ``google.colab.output``: records that the custom widget manager was enabled."""

from google.colab.output import _widgets

custom_widget_manager_calls = 0


def enable_custom_widget_manager() -> None:
    global custom_widget_manager_calls
    custom_widget_manager_calls += 1
    _widgets._installed_url = "https://ssl.gstatic.com/colaboratory-static/widgets/colab-cdn-widget-manager/stand-in.js"
