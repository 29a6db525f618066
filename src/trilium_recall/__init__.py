"""trilium-recall: the right few passages from your Trilium Notes, at the moment they are needed."""

__version__ = "0.1.0"
