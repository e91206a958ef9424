"""Generated code: its data structure (``code``), the passes over it
(``optimize``, ``peephole``), its text (``module``) and loading it
(``loader``)."""
