"""Turn configuration and connection failures into one readable line instead of a traceback."""

import sys


def explain(exc):
    """The one line a person needs when Redoubt cannot start, or None for a genuine bug."""
    from django.core.exceptions import ImproperlyConfigured
    from django.db.utils import OperationalError

    if isinstance(exc, ImproperlyConfigured):
        return f"Configuration problem: {exc}"
    if isinstance(exc, OperationalError):
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        return f"Database unreachable or refused the connection: {first}"
    return None


def run_or_explain(command):
    try:
        command()
    except Exception as exc:
        line = explain(exc)
        if line is None:
            raise
        print(f"redoubt: {line}", file=sys.stderr)
        sys.exit(2)
