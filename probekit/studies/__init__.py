"""The studies, one package per study and chapter (``probekit.studies.<study>``), each declaring itself once
(``STUDY``, a :class:`~probekit.studies.declaration.Study`), in one table (:data:`STUDIES`) read by the CLI, the
checks, the summary page, the lab's seed pooling and comparison.

A study's package holds its parameters (``params.py``, one frozen dataclass, :mod:`probekit.parameters`), its run
(``study.py``), its claims (``claims.py``), its lab (``lab.py``), what else only it uses, and in the report layer
the findings its page opens with (``findings.py``) and its page's own tables and figures (``page.py``); the lab's machinery
(``lab*.py``) and what several studies ask the models (``pair_scores.py``) sit beside the packages.  A package
imports no other study's.  A chapter notebook is its parameters cell, one ``run`` call, report calls and prose.
"""

from __future__ import annotations

from probekit.studies import conceptual, masking, prednoun, verbs
from probekit.studies.declaration import Study

#: the studies in reading order
STUDIES: dict[str, Study] = {s.name: s for s in [verbs.STUDY, prednoun.STUDY, masking.STUDY, conceptual.STUDY]}
