"""Thin adapters for the libraries people train with; each imports its library only when used.

* :mod:`gymview.integrations.sb3`: stable-baselines3 (``pip install "gymview[sb3]"``).
"""
