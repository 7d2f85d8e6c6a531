"""A rebuilt page's cells compared with the published page's, images aside, and which page a rebuild keeps:
on hand-made notebooks (identical, a sentence changed, an image only, a stream, a number's last digit, a cell more)."""

from __future__ import annotations

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from probekit import results
from probekit.chapters import reproduce
from probekit.chapters.same_outputs import NOISE, compare, compare_paths

TABLE = '<table id="T_{id}"><td id="T_{id}_row0_col0">55.1{last} [40.0, 70.0]</td></table>'


SENTENCE = "toy-vilt is above chance: 55.12% [40.00, 70.00] (n = 60)."


def _page(sentence=SENTENCE, png="iVBORw0KGgo=", printed="3 models\n", table_id="0a1b2c3d", last="2"):
    """An executed page as a rebuild writes it: a title, a sentence (Markdown), a figure (a PNG and its plain-text
    repr), a printed line and a table (HTML with its content-hashed id)."""
    nb = new_notebook(cells=[
        new_markdown_cell("# Verbs"),
        new_code_cell("report.show_text(...)", outputs=[new_output("display_data", data={
            "text/markdown": sentence, "text/plain": "<IPython.core.display.Markdown object>"})]),
        new_code_cell("report.show_figure(...)", outputs=[new_output("display_data", data={"image/png": png})]),
        new_code_cell("print(...)", outputs=[new_output("stream", name="stdout", text=printed)]),
        new_code_cell("report.show_table(...)", outputs=[new_output("display_data", data={
            "text/html": TABLE.format(id=table_id, last=last), "text/plain": "<IPython.core.display.HTML object>"})]),
    ])
    reproduce.normalise(nb)
    return nb


def test_the_same_page_is_identical_cell_by_cell():
    cells = compare(_page(), _page())
    assert (cells.identical, cells.total, cells.differ, cells.keeps_page) == (4, 4, (), True)
    assert str(cells) == "4 of 4 cell outputs identical (images aside)"


def test_a_changed_sentence_is_named_and_rewrites_the_page():
    cells = compare(_page(), _page(sentence="toy-vilt is at chance: 55.12% [40.00, 70.00] (n = 60)."))
    assert cells.identical == 3 and [c for c, _ in cells.differ] == ["cell-1"] and not cells.keeps_page
    assert cells.differ[0][1] == ("text: 'toy-vilt is at chance: 55.12% [40.00, 70.00] (n = 60).', "
                                  "was 'toy-vilt is above chance: 55.12% [40.00, 70.00] (n = 60).'")
    assert str(cells).startswith("3 of 4 cell outputs identical (images aside) (differ: cell-1: text: ")


def test_an_images_bytes_are_aside_but_not_their_number():
    assert compare(_page(), _page(png="iVBORw0KGgoAAAANSUhEUg==")).differ == ()
    no_figure = _page()
    no_figure.cells[2].outputs = []
    cells = compare(_page(), no_figure)
    assert cells.differ == (("cell-2", "0 images, were 1"),) and not cells.keeps_page


def test_a_stream_is_compared():
    cells = compare(_page(), _page(printed="4 models\n"))
    assert [c for c, _ in cells.differ] == ["cell-3"] and not cells.keeps_page


def test_float_noise_in_a_last_digit_differs_but_keeps_the_page():
    """55.12 -> 55.13 (a rounding edge crossed by noise, its table id, a hash of its content, changed with it): not
    identical, named as noise, and the page kept; two digits off, a sentence's count, or one digit more are not."""
    cells = compare(_page(), _page(table_id="9f8e7d6c", last="3",
                                   sentence="toy-vilt is above chance: 55.13% [40.00, 70.00] (n = 60)."))
    assert cells.differ == (("cell-1", NOISE), ("cell-4", NOISE)) and cells.keeps_page
    assert "2 of 4 cell outputs identical" in str(cells)
    assert not compare(_page(), _page(sentence=SENTENCE.replace("[40", "[\u221240"))).keeps_page   # a sign
    assert not compare(_page(), _page(last="4")).keeps_page                        # 55.12 -> 55.14
    assert not compare(_page(), _page(printed="4 models\n")).keeps_page             # a whole number: a count
    assert not compare(_page(), _page(sentence="toy-vilt is above chance: 55.120% [40.00, 70.00] (n = 60).")
                       ).keeps_page                                                 # written to other digits
    signed = lambda low: _page(sentence=f"Δc {low} [\u22120.04, 0.01]")
    assert compare(signed("-0"), signed("0")).differ[0][1] == NOISE                  # "-0" is 0


def test_a_cell_more_or_fewer_differs():
    more = _page()
    more.cells.append(new_code_cell("print('done')", outputs=[new_output("stream", name="stdout", text="done\n")]))
    reproduce.normalise(more)
    cells = compare(_page(), more)
    assert (cells.identical, cells.total, cells.differ) == (4, 5, (("cell-5", "a cell not there before"),))
    assert compare(more, _page()).differ == (("cell-5", "a cell no longer there"),)
    assert not cells.keeps_page
    assert compare(None, _page()).identical == 0 and compare(None, _page()).total == 4   # no page before


def test_an_error_output_is_compared():
    failed = lambda value: new_notebook(cells=[new_code_cell("1/0", outputs=[new_output(
        "error", ename="ZeroDivisionError", evalue=value, traceback=["Traceback ...", value])])])
    assert compare(failed("division by zero"), failed("division by zero")).differ == ()
    assert not compare(failed("division by zero"), failed("float division by zero")).keeps_page


def test_two_chapter_folders_are_compared_page_by_page(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    for folder, page in ((old, _page()), (new, _page(printed="4 models\n"))):
        folder.mkdir()
        nbformat.write(page, folder / "verbs.ipynb")
        nbformat.write(_page(), folder / "masking.ipynb")
    nbformat.write(_page(), old / "prednoun.ipynb")
    lines = []
    assert not compare_paths(old, new, log=lines.append)
    assert lines[0] == "masking: 4 of 4 cell outputs identical (images aside)"
    assert lines[1] == ("verbs: 3 of 4 cell outputs identical (images aside) (differ: cell-3: text: '4 models', "
                        "was '3 models')")
    assert lines[2] == "prednoun: a page no longer there"
    assert compare_paths(old / "masking.ipynb", new / "masking.ipynb", log=lines.append)
    for folder, value in ((old, 0.61), (new, 0.62)):                      # the same cells, another value
        results.save(results.frame([results.row(study="masking", probe="p", model="m", metric="pairwise", value=value,
                                                ci=(0.5, 0.7), n=60)]), folder / "masking.results.parquet")
    assert not compare_paths(old / "masking.ipynb", new / "masking.ipynb", log=lines.append)
    assert lines[-1] == "masking: 3 of 4 result values equal; 4 of 4 cell outputs identical (images aside)"
