"""Keeping the index in step with one Trilium instance: the pure plan of a run (`plan`) and the
syncer that does it (`syncer`: full build, minute tick, full comparison).

May import: the top's foundation, `trilium`, `notes`, `index`.
"""
