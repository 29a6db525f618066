"""When: the days a prompt names and where notes are filed in time, so that a journal is found by
date ("what did I do on october 21st", "last week", "vom 3. bis 9. Mai").

The words of six languages (`words`) are read into mentions (`mentions`): dates in figures
(`figures`), spans (`spans`), days counted from today (`from_today`, `counted`), all gathered by
`prompt`; `filed` matches them to where the notes are filed. Part of the search stage: it imports
the index and the notes, and search imports it.
"""
