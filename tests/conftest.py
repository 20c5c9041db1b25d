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


# One headless Chromium for every browser test in the run (Debian's package; bin/test installs it).
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="session")
def browser(django_db_setup):
    """Playwright's sync API over Debian's chromium. Depends on the test database so it closes
    before that database is dropped."""
    import os

    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: bin/test installs it (apt-get install chromium)", pytrace=False)
    from django.db import connections
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop running in this thread; the tests' own ORM calls are
    # still plain synchronous calls, which Django would otherwise refuse inside a running loop.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_playwright() as p:
            chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            yield chromium
            chromium.close()
        # Connections opened while the loop ran are context-local: close them, or the test
        # database cannot be dropped at the end of the run.
        connections.close_all()
