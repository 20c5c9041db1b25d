"""`manage.py demo`'s rows for a test, at the cost of a copy.

About 270 tests start from the demo, and building it (fixtures, two clubs, a scenario, a campaign and a
turn played through the services) takes most of a second: a quarter of the suite's time. The first
`load_demo()` of a test process runs the command inside a savepoint, copies out every row it wrote
(on PostgreSQL by COPY … TO STDOUT) and rolls the savepoint back; later calls put those rows back, which
takes milliseconds. The rows are the command's own, ids included, so a test sees exactly what the command builds; the command
itself is tested by tests/campaigns/test_demo.py, which always runs it.

On SQLite the rows are read and inserted as they are stored. The copy is used only where the command would
have started from an empty database (nothing of the demo's tables holds a row); otherwise `load_demo()` runs
the command."""

from django.core.management import call_command
from django.db import connection, transaction

_captured = None  # (tables, [(table, COPY bytes)], [(sequence, highest value)]) once made
_refused = False  # the command changed rows that were there before it (rows we cannot copy in alone)


def load_demo():
    if _refused or (_captured is None and not _capture()):
        call_command("demo", verbosity=0)
        return
    tables, rows, sequences = _captured
    with connection.cursor() as cursor:
        empty = _empty(cursor, tables)
    if not empty:
        call_command("demo", verbosity=0)
        return
    # One transaction: the tables go in one after another, and their foreign keys are checked at its end.
    with transaction.atomic(), connection.cursor() as cursor:
        for table, data in rows:
            _put(cursor, table, data)
        # The savepoint's rollback left the sequences past these ids (sequences are not transactional),
        # but a test that reset them would hand out the copied rows' ids again.
        for sequence, highest in sequences:
            cursor.execute("SELECT setval(%s, GREATEST(%s, COALESCE(pg_sequence_last_value(%s::regclass), 1)))",
                           [sequence, highest, sequence])


def _empty(cursor, tables):
    cursor.execute("SELECT " + " AND ".join(
        f"NOT EXISTS (SELECT 1 FROM {connection.ops.quote_name(t)})" for t in tables))
    return cursor.fetchone()[0]


def _dump(cursor, table):
    if connection.vendor == "postgresql":
        with cursor.copy(f"COPY {connection.ops.quote_name(table)} TO STDOUT") as copy:
            return b"".join(bytes(chunk) for chunk in copy)
    # SQLite hands back its stored values as they are (no converters on a raw cursor): put back unchanged.
    cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
    return [tuple(row) for row in cursor.fetchall()]


def _put(cursor, table, data):
    if connection.vendor == "postgresql":
        with cursor.copy(f"COPY {connection.ops.quote_name(table)} FROM STDIN") as copy:
            copy.write(data)
    else:
        cursor.executemany(f"INSERT INTO {connection.ops.quote_name(table)} VALUES ({', '.join(['%s'] * len(data[0]))})",
                           data)


def _capture():
    """Run the command in a savepoint and keep what it wrote. False when the database is not empty enough
    to tell the command's rows apart (try again at the next test), or the command changed rows that were
    there before it (never copy: every test runs the command)."""
    global _captured, _refused
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    with transaction.atomic(), connection.cursor() as cursor:
        before = {t: _dump(cursor, t) for t in tables}
        # Rows made by migrations (content types, permissions) stay; any other row would be copied with the demo's.
        filled = [t for t in tables if before[t]]
        if any(not t.startswith(("django_content_type", "auth_permission")) for t in filled):
            transaction.set_rollback(True)
            return False
        call_command("demo", verbosity=0)
        after = {t: _dump(cursor, t) for t in tables}
        written = [t for t in tables if after[t] and not before[t]]
        sequences = []
        # SQLite's AUTOINCREMENT counter moves past an id inserted by hand on its own.
        for table in written if connection.vendor == "postgresql" else ():
            for found in connection.introspection.get_sequences(cursor, table):
                cursor.execute(f"SELECT max({connection.ops.quote_name(found['column'])}) FROM "
                               f"{connection.ops.quote_name(table)}")
                sequences.append((found["name"], cursor.fetchone()[0]))
        transaction.set_rollback(True)
    if any(after[t] != before[t] for t in filled):
        _refused = True
        return False
    _captured = (written, [(t, after[t]) for t in written], sequences)
    return True
