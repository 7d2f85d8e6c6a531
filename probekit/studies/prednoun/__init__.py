"""The predicate–noun study (Nikolaus et al. 2022): ``params`` its parameters, ``study`` its run, ``claims``
the paper's claims judged, ``lab`` the toy lab's checks and claims, ``findings`` the findings its page opens
with and ``page`` its page's own tables and figures (both in the report layer).  ``STUDY`` declares it
(:class:`probekit.studies.declaration.Study`)."""

from probekit.studies.declaration import Study

STUDY = Study("prednoun", ("prednoun",), "probekit.studies.prednoun.study", "probekit.studies.prednoun.params:Params",
              lab="probekit.studies.prednoun.lab", paper="probekit.papers.prednoun",
              unit="the pair (its two triplets, mirrored, together)",
              findings="probekit.studies.prednoun.findings:findings")
