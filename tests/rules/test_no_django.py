"""apps.rules must stay plain Python: the battle screen, the sheet editor and the benchmarks use it
without Django, and its tests need no database."""

import ast
import pathlib
import subprocess
import sys

RULES = pathlib.Path(__file__).resolve().parents[2] / "apps" / "rules"


def test_no_source_file_imports_django():
    for path in RULES.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n == "django" or n.startswith("django.") for n in names), f"{path.name} imports {names}"


def test_importing_the_engine_loads_no_django_module():
    code = ("import sys, apps.rules, apps.rules.odds, apps.rules.dh\n"
            "bad = [m for m in sys.modules if m == 'django' or m.startswith('django.')]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], cwd=RULES.parents[1], check=True)
