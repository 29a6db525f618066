"""The running engine (`engine`: index, embedder, syncers, timed recalls; `index_file`: its file
opened, or moved aside and begun again; `bank`: the generic bank as the index keeps it) and its
HTTP surfaces: the app (`app`: /health, /recall), the MCP server (`mcp`), the status page (`web`,
`static/`), who may call (`auth`), JSON bodies (`request_body`), the activity log (`activity`)
and what the index covers (`overview`).

May import: every subpackage but `demo`, and the top's foundation.
"""
