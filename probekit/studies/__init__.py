"""One module per chapter: ``run(**params) -> probekit.results.StudyResult``; no display code.

A chapter notebook is its parameters cell, one ``run`` call, report calls and prose.
"""

STUDIES = ("verbs", "prednoun", "masking", "conceptual")
