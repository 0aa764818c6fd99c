"""The notebook panel: ipywidgets views fed only by the event stream."""
