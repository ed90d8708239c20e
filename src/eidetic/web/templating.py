"""The viewer's Jinja2 environment: autoescaped templates, undefined names an error, and the
few helpers the templates share (dates, counts, links, marked text, markdown)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from starlette.datastructures import QueryParams
from starlette.templating import Jinja2Templates

from ..clocks import interval_text
from ..records import Record
from ..timeutil import DATE_UNKNOWN
from .highlight import highlight
from .markdown_text import to_html

HERE = Path(__file__).resolve().parent


def templates() -> Jinja2Templates:
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True, undefined=StrictUndefined)
    found = Jinja2Templates(env=env)
    found.env.filters.update(when=when, count=count, markdown=to_html)
    found.env.globals.update(highlight=highlight, record_url=record_url, url_with=url_with, validity=validity)
    return found


def validity(record: Record) -> str:
    """When what the record says holds (``clocks.interval_text``); empty when always."""
    return interval_text(record.valid_from, record.valid_until, record.lifecycle, record.history)


def when(stamp: str | None) -> str:
    """An ISO time to the minute (the record page shows it in full)."""
    return "-" if not stamp or stamp == DATE_UNKNOWN else stamp[:16].replace("T", " ")


def count(value: float) -> str:
    """A recall count: whole, or with one decimal (a linked record counts a fraction)."""
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def record_url(rid: str, page: str = "/record") -> str:
    """A record's page: the id in the query string (an id may hold ``/``, ``..``, spaces)."""
    return f"{page}?{urlencode({'id': rid})}"


def url_with(path: str, params: QueryParams, **changes: Any) -> str:
    """``path`` with ``params``, some replaced (None drops one): the next page, a wider search."""
    kept = [(k, v) for k, v in params.multi_items() if k not in changes]
    kept += [(k, str(v)) for k, v in changes.items() if v is not None]
    return f"{path}?{urlencode(kept)}" if kept else path
