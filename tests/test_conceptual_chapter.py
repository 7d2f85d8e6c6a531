"""The conceptual-understanding chapter executed on the toy world (the session's executed book), and once more
with other parameters: asserted on the rows the chapter exports, never on its prose."""

from probekit import chapters as ch
from probekit.results import load, select
from probekit.studies.conceptual.study import HEADLINES
from conftest import notebook_text, notebook_images, copy_project, toy_params


def test_conceptual_chapter_shows_every_probe_the_paper_and_the_patching_sweep(executed_chapter, executed_book):
    nb = executed_chapter("conceptual")
    rows = load(executed_book / "conceptual.results.parquet")   # the file the chapter's last call wrote
    ours = rows[rows["source"] == "ours"]
    for headline in HEADLINES:
        assert set(select(ours, **headline)["model"]) == {"toy-vilt", "toy-clip"}, headline
    assert set(select(ours, probe="probe-r")["subset"]) == {"predicate_swap", "subject_swap", "subject_only"}
    assert set(select(ours, probe="probe-b", model="toy-clip")["condition"]) == {"black", "gray", "noise", "scene",
                                                                                 "all fillers"}
    assert {"text, α = 1", "both, α = 0.5 − original"} <= set(select(ours, probe="patching")["condition"])
    tables = {s.rsplit(", ", 1)[-1] for s in rows.loc[rows["source"] != "ours", "source"]}
    assert tables == {f"Table {k}" for k in (2, 3, 4, 6, 8, 9, 10)}
    text = notebook_text(nb)
    assert "Traceback" not in text and "Warning" not in text
    # the lab's two tables: the blind checks and every claim, each with a verdict (none "not run" on the defaults)
    assert "toy-bert-blind" in text and "Schiappa et al. 2023, section 4.4" in text
    assert ">not run<" not in text
    assert notebook_images(nb) >= 5
    html = (executed_book / "html" / "book" / "chapters" / "conceptual.html").read_text()
    assert "Probe-R" in html and "toy-clip" in html and "<img" in html


def test_conceptual_chapter_reruns_with_other_fillers_and_no_finetuning(tmp_path, executed_book):
    project = copy_project(tmp_path / "project")
    params, _ = toy_params(project, executed_book / "data")
    params = {**params["conceptual"], **ch.resolve("conceptual", {"fillers": "gray", "finetune_model": "",
                                                                            "limit": 24})}
    ch.execute(project, "conceptual", params, progress=False, log=lambda m: None)
    rows = load(ch.results_path(project, "conceptual"))
    ours = rows[rows["source"] == "ours"]
    assert set(select(ours, probe="probe-b")["condition"]) == {"gray", "all fillers"}
    assert not len(select(ours, probe="patching"))
    assert set(select(ours, probe="probe-r", metric="acc")["n"]) <= set(range(1, 25))
