"""Reading Trilium: the async ETAPI client (`client`) over a transport that lets only GET through
(`getonly`), the typed notes it hands out (`records`, data only), and what a server offers the
sync (`features`).

May import: the top's foundation (`errors`, `textclean`). Nothing else of the package.
"""
