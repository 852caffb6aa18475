"""Document outputs: a case whose product is a file (a PDF invoice, an HTML report, a DOCX letter, a Markdown page)
is scored on what a real parser reads out of it.

- ``_reader``: the in-jail reader (pypdf, lxml, python-docx, markdown-it-py), printing what it read as rows.

May import: nothing of this project (``_reader`` is copied into a jail and run on its own).
"""
