"""Where one attack's time goes, in process (no HTTP server): the demo battle's bench attack posted
through Django's test client as an HTMX request that carries the page's map version and newest entry,
form-encoded like a phone, 200 times; the mean wall and CPU time per attack, and the mean time spent
in each phase.

    .venv/bin/python bench/profile_attack.py          # reuses redoubt_bench if bench_http.py made it
    .venv/bin/python bench/profile_attack.py --fresh  # drop, create, migrate and load the demo first
    .venv/bin/python bench/profile_attack.py --db redoubt_x  # a database of one's own, not redoubt_bench

Phases nest: `services.perform` includes `snapshot.lock_and_load` and the writes; the view's own phases
(`load_board`, `updates_context`, rendering in `updates_response`) come after the commit.
"""

import argparse
import collections
import functools
import os
import re
import sys
import tempfile
import time
import uuid
from urllib.parse import urlencode
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_http  # noqa: E402 - the same database, settings and bench attack

PHASES = {
    "apps.battles.services": ["perform", "new_entry", "_write"],
    "apps.battles.snapshot": ["lock_and_load", "load", "log_entries", "member_battle", "run"],
    "apps.battles.views": ["scoped_battle", "load_board", "fresh_form", "updates_context", "log_changes",
                           "turn_context", "updates_response"],
}


def timed(totals, module, name):
    original = getattr(module, name, None)
    if original is None:  # an older release, measured for comparison, may not have it
        return

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            totals[f"{module.__name__.split('.')[-1]}.{name}"] += time.perf_counter() - start

    setattr(module, name, wrapper)


def backend_cpu(pid):
    """CPU seconds a PostgreSQL backend on this machine has used (user and system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fresh", action="store_true", help="recreate the bench database and load the demo")
    parser.add_argument("-n", type=int, default=200, help="attacks measured (default 200)")
    parser.add_argument("--cprofile", type=int, metavar="N", default=0,
                        help="also print cProfile's N functions of most own time (not timed: cProfile slows it)")
    parser.add_argument("--sort", default="tottime", choices=["tottime", "cumulative"],
                        help="order of the cProfile list: own time (default) or time including callees")
    parser.add_argument("--db", default=bench_http.DB_NAME,
                        help=f"the database to use (default {bench_http.DB_NAME}, which bench_http.py recreates)")
    args = parser.parse_args(argv)
    # Several people measuring on one machine each need their own: --fresh drops it.
    bench_http.DB_NAME, bench_http.DATABASE_URL = args.db, f"postgres://postgres@127.0.0.1:5432/{args.db}"

    tmp = Path(tempfile.mkdtemp(prefix="redoubt-profile-"))
    (tmp / "bench_settings.py").write_text(
        "from config.settings import *  # noqa: F403\n"
        "STORAGES = {'default': {'BACKEND': 'django.core.files.storage.FileSystemStorage'},\n"
        "            'staticfiles': {'BACKEND': 'django.contrib.staticfiles.storage.StaticFilesStorage'}}\n")
    if args.fresh:
        bench_http.recreate_database()
    bench_http.setup_django(bench_http.server_env(tmp, 600))
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    if args.fresh:
        call_command("migrate", verbosity=0)
        call_command("demo", verbosity=0)
    battle, attack = bench_http.prepare_battle()
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(get_user_model().objects.get(username="alice"))
    url = f"/battles/{battle.pk}/resolve/"
    held = {}

    def one_attack():
        # Form-encoded, as a phone's htmx and bench_http's wrk send it: the test client's default multipart
        # body took a quarter of a millisecond to parse that no real attack spends.
        response = client.post(url, urlencode({**attack, **held, "client_token": str(uuid.uuid4())}),
                               content_type="application/x-www-form-urlencoded", HTTP_HX_REQUEST="true")
        text = response.content.decode()
        if response.status_code != 200 or "Resolved #" not in text:
            raise SystemExit(f"the bench attack did not resolve ({response.status_code})")
        for name in ("m", "after"):
            held[name] = re.search(rf'name="{name}" value="(\d+)"', text).group(1)
        return len(text)

    totals = collections.Counter()
    for module_name, names in PHASES.items():
        module = sys.modules.get(module_name) or __import__(module_name, fromlist=["_"])
        for name in names:
            timed(totals, module, name)
    for _ in range(20):  # warm caches and connections
        one_attack()
    totals.clear()
    from django.db import connection
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    db_cpu = backend_cpu(backend)
    wall, cpu = time.perf_counter(), time.process_time()
    size = sum(one_attack() for _ in range(args.n)) / args.n
    wall, cpu = (time.perf_counter() - wall) / args.n * 1000, (time.process_time() - cpu) / args.n * 1000
    db_cpu = (backend_cpu(backend) - db_cpu) / args.n * 1000
    print(f"one attack, mean of {args.n}: {wall:.1f} ms wall, {cpu:.1f} ms CPU of this process + {db_cpu:.1f} ms "
          f"of its PostgreSQL backend, answer {size / 1024:.1f} KB")
    for name, seconds in totals.most_common():
        print(f"  {name:<28} {seconds / args.n * 1000:6.2f} ms")
    if args.cprofile:
        import cProfile
        import pstats
        profiler = cProfile.Profile()
        profiler.runcall(lambda: [one_attack() for _ in range(args.n)])
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(args.cprofile)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
