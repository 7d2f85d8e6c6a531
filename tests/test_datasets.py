import pytest

from probekit.datasets import DATASETS, SCHEMAS, load_dataset, sources


def test_every_registered_dataset_belongs_to_a_known_probe():
    assert {probe for probe, _ in DATASETS} == set(SCHEMAS)
    for probe in SCHEMAS:
        assert "toy" in sources(probe)


def test_unknown_probe_and_source_name_the_valid_choices():
    with pytest.raises(ValueError, match="valid probes: verbs"):
        load_dataset("verbz")
    with pytest.raises(ValueError, match=r"did you mean 'svo-probes'\?.*valid: toy, svo-probes"):
        load_dataset("verbs", "svo-probe")
