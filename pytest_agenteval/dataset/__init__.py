"""Growing a dataset: versions that keep their cases, and variants.

- :mod:`.diff` — ``agenteval dataset diff OLD NEW``: NEW keeps every item of OLD
  unchanged, or says why it changed (``change_reason`` and a new ``version``);
- :mod:`.expand` — ``agenteval expand FILES… --out FILE``: candidate variants of the
  clean cases (typo, ASR, colloquial, context noise, wrong premise), reproducibly.

Each command's ``run`` returns its exit status; ``cli.py`` only wires the arguments.
"""
