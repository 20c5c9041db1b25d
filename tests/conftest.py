import pytest


def pytest_collection_modifyitems(config, items):
    # tests/rules runs without Django at all (-p no:django); nothing here applies then.
    if not config.pluginmanager.hasplugin("django"):
        return
    from django.db import connection

    if connection.vendor == "postgresql":
        return
    skip = pytest.mark.skip(reason="needs PostgreSQL (row locks, concurrency); the suite is running on SQLite")
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(skip)
