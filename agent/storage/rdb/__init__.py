"""Relational storage (SQLAlchemy 2.0): SQLite by default, PostgreSQL for many workers."""
from agent.storage.rdb.storage import RDBStorage

__all__ = ["RDBStorage"]
