"""probekit: probes of what vision-and-language models understand.

Scorers (``probekit.scorers``) answer three questions of any registered model: do an image and a sentence
match, how similar are many images and many texts, and which word fills a masked position.  Probes
(``probekit.datasets``) yield item tables in one schema per study, from the real releases or from the
procedurally generated toy world.  Metrics (``probekit.metrics``) take score arrays and item tables, never a
model.
"""

__version__ = "0.1.0"
