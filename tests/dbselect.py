"""Chooses the test database before Django's settings load (imported with `-p tests.dbselect`).

PostgreSQL whenever it answers on 127.0.0.1:5432 (CI, and this project's machines), so locking,
constraints and transactions are tested for real; otherwise SQLite, said on the first line.
"""

import os
import socket

# One database name per test run (pytest-django prefixes "test_"), so two runs on one machine —
# a developer's and CI's, or several helpers' — never drop each other's test database.
PG_URL = f"postgres://postgres@127.0.0.1:5432/redoubt_{os.getpid()}"


def postgres_answers(host="127.0.0.1", port=5432):
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


if "PYTEST_XDIST_WORKER" not in os.environ:
    if os.environ.get("DATABASE_URL"):
        print(f"Tests run on DATABASE_URL={os.environ['DATABASE_URL']}", flush=True)
    elif postgres_answers():
        os.environ["DATABASE_URL"] = PG_URL
        print(f"Tests run on PostgreSQL ({PG_URL}).", flush=True)
    else:
        print(
            "PostgreSQL is not answering on 127.0.0.1:5432: tests fall back to SQLite, "
            "and the tests marked `postgres` (row locks, concurrency) are skipped.",
            flush=True,
        )
elif not os.environ.get("DATABASE_URL") and postgres_answers():
    os.environ["DATABASE_URL"] = PG_URL
