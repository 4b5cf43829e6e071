"""Every figure as a file for a paper: SVG, PDF or PNG through kaleido (the ``export`` extra), in one batch, driving
Debian's Chromium (``$RAG_LAB_CHROMIUM``, else ``$BROWSER_PATH``, else ``/usr/bin/chromium``, installed by
``scripts/ensure_chromium.sh``); no browser is ever downloaded.

>>> export_figures({"cost_quality": fig}, "paper/figures", formats=("svg", "pdf"))   # doctest: +SKIP
[PosixPath('paper/figures/cost_quality.svg'), PosixPath('paper/figures/cost_quality.pdf')]"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import plotly.graph_objects as go

from rag_lab.errors import ConfigError

FORMATS = ("svg", "pdf", "png")
DEFAULT_CHROMIUM = "/usr/bin/chromium"
#: Size of exported figures (pixels for PNG at ``scale`` 1; the page size of SVG and PDF).
WIDTH, HEIGHT = 900, 560


def chromium_path() -> str:
    """The Chromium kaleido drives: ``$RAG_LAB_CHROMIUM``, ``$BROWSER_PATH`` or Debian's ``/usr/bin/chromium``."""
    path = os.environ.get("RAG_LAB_CHROMIUM") or os.environ.get("BROWSER_PATH") or DEFAULT_CHROMIUM
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise ConfigError(f"figure export needs Chromium at {path} (none there): install Debian's chromium "
                          "(bash scripts/ensure_chromium.sh, as root) or point RAG_LAB_CHROMIUM at one")
    return path


def parse_formats(formats: str | Iterable[str]) -> tuple[str, ...]:
    """``"svg,pdf"`` or ``["svg", "pdf"]`` as a checked tuple of formats."""
    items = [f.strip().lower() for f in (formats.split(",") if isinstance(formats, str) else formats) if f.strip()]
    bad = [f for f in items if f not in FORMATS]
    if bad or not items:
        raise ConfigError(f"export formats are {', '.join(FORMATS)} (comma-separated), got {formats!r}")
    return tuple(dict.fromkeys(items))


def _safe_name(name: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.")
    if not slug:
        raise ConfigError(f"a figure name must have letters or digits, got {name!r}")
    return slug


def export_figures(figures: Mapping[str, go.Figure], out_dir: str | os.PathLike[str],
                   formats: str | Iterable[str] = FORMATS, width: int = WIDTH, height: int = HEIGHT,
                   scale: float = 2.0) -> list[Path]:
    """Write each named figure to ``out_dir/<name>.<format>`` for every format; returns the paths written.
    ``scale`` multiplies PNG pixels (vector formats keep ``width`` × ``height``)."""
    try:
        import kaleido  # noqa: F401  (plotly's image engine)
        import plotly.io as pio
    except ImportError:
        raise ConfigError("figure export needs kaleido: pip install 'rag_lab[export]'") from None
    chosen = parse_formats(formats)
    if not figures:
        return []
    os.environ["BROWSER_PATH"] = chromium_path()  # choreographer's override: it never searches or fetches one
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    names = {name: _safe_name(name) for name in figures}
    if len(set(names.values())) != len(names):
        raise ConfigError(f"figure names collide once made file-safe: {sorted(names)}")
    figs, paths = [], []
    for name, fig in figures.items():
        if not isinstance(fig, go.Figure):
            raise ConfigError(f"figure {name!r} is a {type(fig).__name__}, not a plotly Figure")
        for fmt in chosen:
            figs.append(fig)
            paths.append(out / f"{names[name]}.{fmt}")
    tmp = [p.with_name(f".{p.name}.tmp.{p.suffix.lstrip('.')}") for p in paths]
    formats_ = [p.suffix.lstrip(".") for p in paths]
    pio.write_images(figs, tmp, format=formats_, width=width, height=height, scale=scale)
    for fig, t, fmt in zip(figs, tmp, formats_, strict=True):
        # a render that kaleido's batch dropped (seen once, on a cold browser) is retried on its own, once
        if not t.is_file() or not t.stat().st_size:
            pio.write_image(fig, t, format=fmt, width=width, height=height, scale=scale)
        if not t.is_file() or not t.stat().st_size:
            raise RuntimeError(f"kaleido wrote nothing for {t.name} (Chromium at {os.environ['BROWSER_PATH']})")
    for t, p in zip(tmp, paths, strict=True):  # replaced only once written whole
        t.replace(p)
    return paths

