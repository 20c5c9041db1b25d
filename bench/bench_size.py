"""Does a big battle cost more than a small one? The battle page, the attack POST (HTMX) and a changed
poll, in process through Django's test client against PostgreSQL, for the battles of the query-count
tests (tests/battles/test_queries.py `arena`): one house and 10 log entries; the same house with 5,000
entries; and 201 structures (two floors each, windows, every other one occupied, every tenth a
bunker) with 5,000 entries. Issue 5 asks for a 5,000-entry battle to open as fast as a 10-entry one;
the tests hold the query counts equal, this measures the time. Then, for the 201-structure battle's map
alone, the CPU of laying out every piece (`views.map_of`), of placing the names and of working out every
tap shape afresh (a page pays that once per table and worker: `views.layout_reach`), each called on its
own n × 10 times.

    .venv/bin/python bench/bench_size.py          # about a minute
    .venv/bin/python bench/bench_size.py -n 20    # fewer repeats

Builds its battles in a PostgreSQL database of its own, `redoubt_bench_size_<process id>` (or `--db NAME`),
so two runs at once do not drop each other's, and drops it at the end. Prints, for each request, the
median CPU time of this process over the repeats (the server's share; PostgreSQL's is not counted)
and the answer's size. No target: it prints figures.
"""

import argparse
import os
import re
import statistics
import sys
import time
from pathlib import Path

BASE = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(BASE), str(Path(__file__).resolve().parent)]
import bench_http  # noqa: E402 - the database helpers and production-like settings


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=60, help="repeats of each request (default 60)")
    parser.add_argument("--db", default=f"redoubt_bench_size_{os.getpid()}",
                        help="the database to create, fill and drop (default redoubt_bench_size_<process id>)")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", args.db):
        parser.error("--db: lower-case letters, digits and _ only (it goes into CREATE DATABASE unquoted)")

    env = bench_http.in_process_env(args.db, "redoubt-size-")
    bench_http.recreate_database()
    try:
        bench_http.setup_django(env)
        return measure(args)
    finally:
        bench_http.drop_database()


def measure(args):
    from django.core.management import call_command
    from django.test import Client
    from django.urls import reverse

    from tests.battles.test_queries import arena, attack, held

    call_command("migrate", verbosity=0)
    print("building the three battles …", flush=True)
    worlds = {"1 structure, 10 entries": arena("Small club", structures=0, entries=10),
              "1 structure, 5,000 entries": arena("Long club", structures=0, entries=5000),
              "201 structures, 5,000 entries": arena("Large club", structures=200, entries=5000)}

    rows = {}
    for label, w in worlds.items():
        # As in bench_http: a club using its own order dice, so the gun may fire again and again; the
        # players' dice are two 1s, which never bring the house down.
        w.battle.options = {**(w.battle.options or {}), "track_actions": False}
        w.battle.save(update_fields=["options"])
        client, watcher = Client(HTTP_HOST="127.0.0.1"), Client(HTTP_HOST="127.0.0.1")
        client.force_login(w.alice)
        page = reverse("battle", args=[w.battle.pk])
        resolve = reverse("battle_resolve", args=[w.battle.pk])
        poll = reverse("battle_poll", args=[w.battle.pk])

        def timed(call, before=lambda: None):
            times, size = [], 0
            for _ in range(5):  # warm
                before()
                call()
            for _ in range(args.n):
                before()
                start = time.process_time()
                response = call()
                times.append(time.process_time() - start)
                assert response.status_code == 200, response.status_code
                size = len(response.content)
            return statistics.median(times) * 1000, size

        figures = {"battle page GET": timed(lambda: client.get(page))}

        def one_attack():
            # A phone that holds the newest entry and map version: the answer is what this attack changed.
            response = client.post(resolve, {**attack(w, w.gun), **held(w)},
                                   HTTP_HX_REQUEST="true")
            assert b"Resolved #" in response.content
            return response

        figures["attack POST (htmx)"] = timed(one_attack)

        behind = {}

        def another_attack():
            # Another phone's: this one holds what it had before it.
            behind.update(held(w))
            client.post(resolve, {**attack(w, w.gun), **held(w)}, HTTP_HX_REQUEST="true")

        figures["poll, one change behind"] = timed(
            lambda: watcher.get(poll, {**behind, "card": f"s{w.house.pk}"}, HTTP_HX_REQUEST="true"), another_attack)
        rows[label] = figures

    # The map alone, for the largest battle: what every answer pays to place the names, and what the
    # first page of a table pays for every tap shape.
    from apps.battles import views
    from apps.battles.models import Battle

    large = worlds["201 structures, 5,000 entries"].battle
    battle = Battle.objects.select_related("campaign", "scenario").get(pk=large.pk)
    board = views.load_board(battle)
    width, depth = float(battle.table_width), float(battle.table_depth)
    pieces = {"map_of (every piece's layout, names placed)": lambda: views.map_of(battle, board.structures, board.units),
              "place_names": lambda: views.place_names(board.structures, width, depth),
              "reach_out (every tap shape)": lambda: views.reach_out(board.structures, width, depth)}
    map_rows = {}
    for name, call in pieces.items():
        times = []
        for _ in range(args.n * 10):
            start = time.process_time()
            call()
            times.append(time.process_time() - start)
        map_rows[name] = statistics.median(times) * 1000, min(times) * 1000

    labels = list(worlds)
    print(f"\nmedian CPU ms of this process per request (n={args.n}), and the answer's size; "
          f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M')}")
    print(f"{'request':<26}" + "".join(f"{label:>32}" for label in labels))
    for name in rows[labels[0]]:
        print(f"{name:<26}" + "".join(f"{rows[label][name][0]:>19.2f} ms {rows[label][name][1] / 1024:>6.1f} KB"
                                      for label in labels))
    print(f"\nthe 201-structure battle's map, CPU ms (n={args.n * 10}): median, best")
    for name, (median, best) in map_rows.items():
        print(f"{name:<50}{median:>8.2f}{best:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
