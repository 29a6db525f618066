"""Reading Trilium: the async ETAPI client (`client`) over a transport that lets only GET through
(`getonly`).

May import: the top's foundation (`errors`, `textclean`). Nothing else of the package.
"""
