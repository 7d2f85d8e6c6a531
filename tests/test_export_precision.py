"""The data files a chapter's last call writes: every number as the study computed it, straight from its run (no
cell output read back), and only when the executor names the folder."""

import pandas as pd

from probekit.report import cell
from probekit.report.export import ITEMS_FILE, LAB_FILE, OUT, RESULTS_FILE, export
from probekit.results import frame, items_frame, load, row
from probekit.studies.prednoun import study as prednoun


def test_a_value_on_a_rounding_edge_is_written_as_computed(tmp_path, monkeypatch):
    r = row(study="s", probe="p", model="m", metric="acc", value=0.5, ci=(0.3333333333333333, 0.6674999999999992),
            n=30, chance=0.25)
    monkeypatch.delenv(OUT, raising=False)
    monkeypatch.chdir(tmp_path)              # where a stray write without a named folder would land
    export(frame([r]))                       # run by hand: no folder named, nothing written
    assert not list(tmp_path.iterdir())
    monkeypatch.setenv(OUT, str(tmp_path))
    export(frame([r]))
    back = load(tmp_path / RESULTS_FILE).iloc[0]
    assert back["ci_high"] == 0.6674999999999992 and back["ci_low"] == 1 / 3    # every bit, not 15 digits
    assert cell(back) == cell(r) == "50.0 [33.3, 66.7]"
    assert sorted(p.name for p in tmp_path.iterdir()) == [RESULTS_FILE]       # rows only: no lab, no items


def test_a_study_run_reaches_its_data_files(tmp_path, monkeypatch):
    result = prednoun.run(prednoun.Params(
        models=["toy-vilt"], clip_models=[], dataset="toy", data_dir=tmp_path / "data", limit=12, device="cpu",
        cache_dir=tmp_path / "scores", min_concept_count=4, n_resamples=10, lab_models=["toy-bert-blind"]))
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.setenv(OUT, str(out))
    export(result)
    pd.testing.assert_frame_equal(load(out / RESULTS_FILE), frame(result.rows))
    written = pd.read_parquet(out / LAB_FILE)
    found = result.lab_lines   # judged by the run
    assert len(written) == len(found) > 0 and list(written.columns) == list(found.columns)
    assert written["rows"].tolist() == found["rows"].tolist() and written["verdict"].tolist() == found["verdict"].tolist()
    items = pd.read_parquet(out / ITEMS_FILE)
    expected = items_frame(result.items)
    assert len(items) == len(expected) > 0 and list(items.columns) == list(expected.columns)
    assert items["item_id"].tolist() == expected["item_id"].tolist()
