"""The port engine, one module per stage (see ``pipeline`` for the order): ``line_ends``
(cells are read with LF line ends), ``ipython`` (masking), ``plan`` (the statement plan parity runs from), ``names`` (resolution),
``kinds`` (receiver kinds), ``imports`` (import planning), ``spec`` (mapping entries and
hooks), ``arguments`` (declarative argument binding), ``walk`` (the tree walk),
``context`` (what rules see), ``build`` (builder helpers for rules), ``edits`` (the edit
log with positions) and ``session`` (what earlier cells told the port)."""
