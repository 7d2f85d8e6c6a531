"""Verb understanding on SVO-Probes (Hendricks & Nematzadeh 2021): ``params`` its parameters, ``study`` its
run, ``claims`` the paper's claims judged, ``lab`` the toy lab's checks and claims, ``findings`` the findings its page opens
with and ``page`` its page's own tables and figures (both in the report layer).  ``STUDY`` declares it
(:class:`probekit.studies.declaration.Study`)."""

from probekit.studies.declaration import Study

STUDY = Study("verbs", ("verbs",), "probekit.studies.verbs.study", "probekit.studies.verbs.params:Params",
              lab="probekit.studies.verbs.lab", paper="probekit.papers.svo_probes",
              unit="the draw of one positive image (a verb negative with its mirror, the same two images, and the "
                   "sentence's other negatives; on SVO-Probes the sentence)",
              findings="probekit.studies.verbs.findings:findings")
