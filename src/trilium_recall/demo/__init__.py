"""The demo: the built-in notebook (`notebook/`, set up by `mode`) served by a stand-in Trilium
(`standin/`, an ETAPI server on 127.0.0.1; `python -m trilium_recall.demo.standin`), so `serve`
and `demo` run without a Trilium.

May import: the top's foundation and `trilium` (the note id pattern). The engine uses none of it.
"""
