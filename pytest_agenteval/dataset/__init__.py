"""Growing a dataset: versions that keep their cases, variants, and the bad-case loop.

- :mod:`.diff` — ``agenteval dataset diff OLD NEW``: NEW keeps every item of OLD
  unchanged, or says why it changed (``change_reason`` and a new ``version``);
- :mod:`.expand` — ``agenteval expand FILES… --out FILE``: candidate variants of the
  clean cases (typo, ASR, colloquial, context noise, wrong premise), reproducibly;
- :mod:`.promote` — ``agenteval promote RUN CASE_ID --to FILE``: a failed item of a run
  becomes a regression case with its contrast group.

Each command's ``run`` returns its exit status; ``cli.py`` only wires the arguments.
"""
