"""The notebook front end: the ``%%kernelopt`` magic, the live panel, Accept and the bridge.

The only layer that imports Jupyter packages (IPython, ipywidgets, plotly); it drives the
engine through ``kernelopt_jupyter.session`` and reads its event stream.
"""
