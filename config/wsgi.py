"""WSGI entry point for gunicorn: `gunicorn config.wsgi`."""

import os
import sys

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

try:
    application = get_wsgi_application()
except Exception as exc:
    from config.startup import explain

    line = explain(exc)
    if line is None:
        raise
    # gunicorn would otherwise print a traceback per worker; one line says what to fix.
    print(f"redoubt: {line}", file=sys.stderr)
    sys.exit(2)
