"""Rows carried out of a notebook read back so that they print as the page printed them."""

import nbformat

from probekit.report import cell
from probekit.report.export import MIME, export, rows_from_notebook
from probekit.results import frame, row


def test_a_value_on_a_rounding_edge_reads_back_as_shown(monkeypatch):
    r = row(study="s", probe="p", model="m", metric="acc", value=0.5, ci=(0.3333333333333333, 0.6674999999999992),
            n=30, chance=0.25)
    shown = []
    import sys
    monkeypatch.setattr(sys.modules["probekit.report.export"], "display", lambda data, raw: shown.append(data))
    export(frame([r]))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=[
        nbformat.v4.new_output("display_data", data=shown[0])])])
    back = rows_from_notebook(nb).iloc[0]
    assert cell(back) == cell(r) == "50.0 [33.3, 66.7]"      # 10 digits would give 0.6675 and print 66.8
    assert MIME in shown[0]
