"""Shape-safe, deployable output: shape sets, guarded dispatch, custom-op export, re-verify.

See docs/deploy.md. Importing this package is light (no torch): the modules load lazily.
"""
