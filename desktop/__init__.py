"""Pi Desktop: a desktop coding agent whose inspector shows exactly what the model is told.

Layers (see docs/architecture.md): ``desktop.pi`` is the provider layer (pure, no I/O),
``desktop.host`` owns files, permissions and tool execution, ``desktop.session`` is the
runtime, and ``desktop.ui`` is the only package that imports Qt widgets.
"""

__version__ = "0.1.0"
