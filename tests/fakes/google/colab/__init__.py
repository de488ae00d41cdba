"""Stand-in for Colab's ``google.colab`` package, for tests only (put ``tests/fakes`` on PYTHONPATH).

It provides just what gymview and anywidget touch: ``google.colab.output.enable_custom_widget_manager()``
and ``google.colab.output._widgets._installed_url``. ``google`` stays a namespace package so that real
``google.*`` packages installed next to it still import.
"""
