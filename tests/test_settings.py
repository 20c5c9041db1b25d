"""Settings come from the environment, and a bad one stops Redoubt with one clear line."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": "k" * 20 + "-production-secret-for-the-deploy-check-" + "z" * 20,
    "ALLOWED_HOSTS": "redoubt.example.org",
}


def fresh_env(**env):
    """This environment without the settings under test, plus `env`. The browser tests'
    DJANGO_ALLOW_ASYNC_UNSAFE goes too: the deploy check rightly refuses it."""
    unset = {"DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "TIME_ZONE", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    return {**{k: v for k, v in os.environ.items() if k not in unset}, **env}


def manage(*args, **env):
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=fresh_env(**env), capture_output=True,
                          text=True, timeout=60)


def one_line_error(result):
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def test_production_refuses_the_default_secret():
    line = one_line_error(manage("check", DEBUG="0", ALLOWED_HOSTS="x.org"))
    assert "SECRET_KEY" in line and "default secret" in line


def test_production_needs_allowed_hosts():
    line = one_line_error(manage("check", DEBUG="0", SECRET_KEY=PRODUCTION["SECRET_KEY"]))
    assert "ALLOWED_HOSTS" in line


def test_malformed_boolean_names_the_setting():
    assert "DEBUG='perhaps'" in one_line_error(manage("check", DEBUG="perhaps"))


def test_an_unknown_time_zone_names_the_setting():
    line = one_line_error(manage("check", TIME_ZONE="Europe/Atlantis"))
    assert "TIME_ZONE='Europe/Atlantis' is not a time zone" in line
    assert manage("check", TIME_ZONE="America/Chicago").returncode == 0


def test_malformed_database_url_names_the_setting():
    assert "DATABASE_URL" in one_line_error(manage("check", DATABASE_URL="nosuchdb://x/y"))


def test_unreachable_database_is_one_line():
    line = one_line_error(manage("migrate", "--check", DATABASE_URL="postgres://postgres@127.0.0.1:1/redoubt"))
    assert line.startswith("redoubt: Database unreachable")


def test_deploy_check_is_clean_with_production_settings():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr


def test_database_url_selects_postgresql_and_sqlite_is_the_default():
    probe = "from django.conf import settings; print(settings.DATABASES['default']['ENGINE'])"
    pg = manage("shell", "--no-imports", "-c", probe, DATABASE_URL="postgres://u@db.example:5432/r")
    assert pg.stdout.strip() == "django.db.backends.postgresql", pg.stderr
    local = manage("shell", "--no-imports", "-c", probe)
    assert local.stdout.strip() == "django.db.backends.sqlite3", local.stderr
    # On SQLite a writer takes the lock when its transaction begins, and waits for it: two at once
    # queue instead of one failing with "database is locked".
    options = "from django.conf import settings; print(sorted(settings.DATABASES['default']['OPTIONS'].items()))"
    for env in ({}, {"DATABASE_URL": "sqlite:////tmp/redoubt-settings-probe.sqlite3"}):
        result = manage("shell", "--no-imports", "-c", options, **env)
        assert result.stdout.strip() == "[('timeout', 20), ('transaction_mode', 'IMMEDIATE')]", result.stderr


@pytest.mark.parametrize("module", ["config.settings", "config.wsgi"])
def test_wsgi_and_settings_import_under_production_env(module):
    result = subprocess.run(
        [sys.executable, "-c", f"import os; os.environ.setdefault('DJANGO_SETTINGS_MODULE','config.settings'); import {module}"],
        cwd=ROOT, env={**os.environ, **PRODUCTION}, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
