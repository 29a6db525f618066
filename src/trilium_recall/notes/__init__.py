"""A note as the index wants it: classified (`classify`), its HTML turned to text (`html_text`),
split into sections by headings (`sections`) and into snippets, the unit the meaning index embeds
(`snippets`), and the records the index stores (`records`). Pure functions, no I/O.

May import: the top's foundation and `trilium` (the note type).
"""
