"""The book's chapters: where their sources live, which parameters they take, and how one is executed.

- :mod:`~probekit.chapters.project`: chapter names, source, notebook and result-file paths, placeholders;
- :mod:`~probekit.chapters.params`: parameters read from the study's dataclass (and written into the
  ``parameters`` cell), values checked;
- :mod:`~probekit.chapters.profiles`: named sets of values for every chapter (``book/profiles/*.yaml``);
- :mod:`~probekit.chapters.execute`: executing a chapter (or the summary page) for readers;
- :mod:`~probekit.chapters.same_outputs`: whether a rebuilt page's cells show what the previous page's show.
"""

from probekit.chapters.execute import drop_stderr, execute, execute_only, execute_summary, fold_code, rebuild
from probekit.chapters.params import (DEVICE_RE, PAPER_SUITE, Parameter, check_value, coerce, dataset_choices,
                                      model_names, parameters, read_params_file, resolve, write_parameters)
from probekit.chapters.profiles import Profile, load_profile, profile_names
from probekit.chapters.project import (CHAPTERS, SUMMARY, ChapterFailed, ParameterError, check_chapter, find_root,
                                       items_path, output_path, read_source, results_path, source_path, title,
                                       write_placeholder)

__all__ = ["drop_stderr", "execute", "execute_only", "execute_summary", "fold_code", "rebuild", "DEVICE_RE",
           "PAPER_SUITE", "Parameter", "check_value", "coerce", "dataset_choices", "model_names", "parameters",
           "read_params_file", "resolve", "write_parameters", "Profile", "load_profile", "profile_names", "CHAPTERS",
           "SUMMARY", "ChapterFailed", "ParameterError", "check_chapter", "find_root", "output_path", "read_source",
           "items_path", "results_path", "source_path", "title", "write_placeholder"]
