"""Growing a dataset: versions that keep their cases.

- :mod:`.diff` — ``agenteval dataset diff OLD NEW``: NEW keeps every item of OLD
  unchanged, or says why it changed (``change_reason`` and a new ``version``).

Each command's ``run`` returns its exit status; ``cli.py`` only wires the arguments.
"""
