"""Graph rewrites at the FX level, applied to the reference before Inductor lowers it.

``canonical.py`` rewrites every spelling of an op into the one form the rules match,
``rules.py`` holds the named rewrites (each says why it is faster and how exact it is),
``graph.py`` the FX plumbing, ``render.py`` turns a rewritten graph into a problem source (for
the harvest) and a dispatch-only candidate, ``task.py`` finds the matching rewrites in a worker.
"""
