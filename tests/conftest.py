import pytest


def pytest_configure(config):
    # Real password hashing costs about a second per account on these machines; tests create
    # hundreds of accounts (the demo alone makes five). Hashing itself is Django's, not ours to test.
    if config.pluginmanager.hasplugin("django"):
        from django.conf import settings

        settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


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
