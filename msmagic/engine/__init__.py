"""The port engine, one module per stage (see ``pipeline`` for the order): ``ipython``
(masking), ``names`` (resolution), ``kinds`` (receiver kinds), ``imports`` (import
planning), ``spec`` (mapping entries and hooks), ``walk`` (the tree walk), ``context``
(what rules see), ``build`` (builder helpers for rules), ``edits`` (the edit log with
positions), ``plan`` (the statement plan parity runs from) and ``session``."""
