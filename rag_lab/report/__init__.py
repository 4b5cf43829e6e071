"""The HTML report of a sweep (``rag-lab report``): the figures and tables of a run directory in one self-contained file
(:mod:`rag_lab.report.page`), its figures for export, and the log of a sweep to a local MLflow folder
(:mod:`rag_lab.report.mlflow_log`, the ``mlflow`` extra). It sits in the figures layer: it is made of figures."""

from rag_lab.report.page import report_figures, results_table_html, write_report

__all__ = ["report_figures", "results_table_html", "write_report"]
