"""Seams to the tools people run rooflinec from: a notebook and pytest.

This package owns `notebook` (a device's roofline as an altair chart, the same data as the
site's charts) and `pytest_plugin` (reference examples as test items, registered by the
`pytest11` entry point). It may import the engine, the site's chart data and the core
values; nothing imports it except through those entry points and `rooflinec.roofline_chart`.
"""
