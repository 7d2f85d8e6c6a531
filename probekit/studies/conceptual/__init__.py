"""The conceptual-understanding study (Schiappa et al. 2023): ``params`` its parameters, ``study`` its run,
``claims`` the paper's claims judged (``pairs`` the rows it compares per model on Probe-R and Probe-C, with their
sentences), ``lab`` the toy lab's checks and claims, ``scores`` what it asks the models, ``facts`` what its page
states, ``sweep`` the patching sweep as the study runs it, ``finetune``, ``finetune_cache``, ``finetune_seeds`` and
``patching`` the fine-tuning and patching it runs, ``findings`` the findings its page opens with and ``page``
its page's own tables and figures (both in the report layer).  ``STUDY`` declares it (:class:`probekit.studies.declaration.Study`)."""

from probekit.studies.declaration import Study

STUDY = Study("conceptual", ("probe-r", "probe-c", "probe-b"), "probekit.studies.conceptual.study",
              "probekit.studies.conceptual.params:Params", lab="probekit.studies.conceptual.lab",
              paper="probekit.papers.conceptual",
              unit="the group (Probe-R's relation, Probe-C's 2x2 group; Probe-B's and the general task's images)",
              findings="probekit.studies.conceptual.findings:findings")
