"""Tools the Host runs for the model: core tools, ToolSearch, deferred MCP and extension tools.

Public surface: ``ToolCatalog``/``CatalogSnapshot`` (what exists), ``HostExecutor`` (hooks,
mode, confinement, approval, execution), ``McpHub`` and ``ExtensionRegistry`` (deferred
tool providers), ``ToolSpec``/``ToolOutcome`` (the plain data).
"""
