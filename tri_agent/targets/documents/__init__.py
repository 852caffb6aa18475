"""Document outputs: a case whose product is a file (a PDF invoice, an HTML report, a DOCX letter, a Markdown page)
is scored on what a real parser reads out of it.

- ``_reader``: the in-jail reader (pypdf, lxml, python-docx, markdown-it-py), printing what it read as rows; it
  imports nothing of this project (it is copied into a jail and run on its own);
- ``_extract``: its argv for a case, and the case's rows from what it printed.

May import: ``exam`` and ``sandbox`` (never another module of ``targets``).
"""
