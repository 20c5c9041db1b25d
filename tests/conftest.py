import pytest
from django.db import connection


def pytest_collection_modifyitems(config, items):
    if connection.vendor == "postgresql":
        return
    skip = pytest.mark.skip(reason="needs PostgreSQL (row locks, concurrency); the suite is running on SQLite")
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(skip)
