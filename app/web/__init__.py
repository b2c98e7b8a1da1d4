"""The dashboard: pages at ``/`` and ``/ui/...`` served by the API's own app (see ``pages``)."""
from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

STATIC = Path(__file__).parent / "static"


def install(app: FastAPI) -> None:
    from app.web import answers, pages

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.include_router(pages.router)
    app.include_router(answers.router)
    app.state.error_page = pages.error_page  # errors on pages answer as pages (app.core.errors.answer)
