"""The guided-masking study (Beňová et al. 2024): ``params`` its parameters, ``study`` its run, ``claims`` the
paper's claims judged, ``lab`` the toy lab's checks and claims, ``findings`` the findings its page opens
with and ``page`` its page's own tables and figures (both in the report layer), ``scores`` what it asks the models.  ``STUDY``
declares it (:class:`probekit.studies.declaration.Study`)."""

from probekit.studies.declaration import Study

STUDY = Study("masking", ("masking",), "probekit.studies.masking.study", "probekit.studies.masking.params:Params",
              lab="probekit.studies.masking.lab", paper="probekit.papers.guided_masking",
              unit="the image (its captions together); ITM and verb-choice rows, the verbs table's draw",
              findings="probekit.studies.masking.findings:findings")
