"""What a campaign file costs the worker that writes it (and with --import, the one that reads it
back): the peak memory (RSS) of a fresh process that downloads the demo campaign's file through
Django's test client, and the seconds it takes, with the first session's log grown to 5,000 and then
30,000 entries.

    .venv/bin/python bench/bench_export.py                 # about three minutes
    .venv/bin/python bench/bench_export.py --sizes 2000    # quicker
    .venv/bin/python bench/bench_export.py --gunicorn      # and the largest through one gunicorn worker
    .venv/bin/python bench/bench_export.py --import        # and each file imported again

Recreates the PostgreSQL database `redoubt_bench_export` each time and loads the demo. The log's
entries are real ones: the rifle squad moving into the timber workshop and out again through the
services (a move's undo data holds the house's whole state, the commonest entry and one of the
larger), copied on with their hash chain recomputed, so the file is one the import takes and whose
chain verifies.

Each figure comes from a child process of its own (a high-water mark cannot be reset), as a gunicorn
worker would serve one download:
- `view`: GET /campaigns/<id>/export/ as the view answers now, the body consumed as a WSGI server
  would (a streamed body written to a file as it comes);
- `one dict`: the way the view answered before it streamed, `campaign_text(export_campaign(c))` in one
  HttpResponse: the whole campaign as one dict, then one string, then its bytes.
- `import` (with --import): the `view` file posted to the import page in a child of its own, as a WSGI
  server hands Django an upload (the multipart body read from a file), as the demo club's organiser.
"idle" is the child's RSS after Django is set up and the client signed in, before the download. Both
files must be the same bytes (their SHA-256 is compared). With --gunicorn, the largest campaign is also
downloaded over HTTP from one gunicorn worker (production settings, a free port), and the worker's RSS
before and its peak after are printed. No target: it prints figures.
"""

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASE = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(BASE), str(Path(__file__).resolve().parent)]
import bench_http  # noqa: E402 - the database helpers and production-like settings

DB_NAME = "redoubt_bench_export"
MODES = ("view", "one dict")


def rss_kb():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# ---------------------------------------------------------------------------------- the child

def child(mode, campaign_pk, out):
    """One download in this fresh process; prints its figures as one JSON line."""
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from apps.campaigns.models import Campaign

    campaign = Campaign.objects.get(pk=campaign_pk)
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(get_user_model().objects.get(username="alice"))
    idle = rss_kb()
    digest, size = hashlib.sha256(), 0
    start = time.perf_counter()
    if mode == "view":
        response = client.get(reverse("campaign_export", args=[campaign.pk]))
        assert response.status_code == 200, response.status_code
        pieces = response.streaming_content if response.streaming else [response.content]
    else:
        from apps.campaigns.export import campaign_text, export_campaign
        from apps.structures.views import json_download

        response = json_download(campaign_text(export_campaign(campaign)), "bench.json")
        pieces = [response.content]
    with open(out, "wb") as f:
        for piece in pieces:
            f.write(piece)
            digest.update(piece)
            size += len(piece)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"idle_kb": idle, "peak_kb": peak, "seconds": seconds, "bytes": size,
                      "sha256": digest.hexdigest(), "streamed": bool(getattr(response, "streaming", False))}))


def import_child(campaign_pk, path):
    """The file at `path` imported through the import page in this fresh process, as a WSGI server hands
    Django an upload: the multipart body read from a file (`wsgi.input`), so the figures are the view's
    and not a copy of the body held by the bench. Prints its figures as one JSON line."""
    import io
    from uuid import uuid4

    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.test.client import ClientHandler
    from django.urls import reverse

    from apps.campaigns.models import Campaign

    campaign = Campaign.objects.get(pk=campaign_pk)
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(get_user_model().objects.get(username="demo"))  # the club's organiser
    boundary = uuid4().hex
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"club\"\r\n\r\n{campaign.club_id}\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"campaign.json\"\r\n"
            "Content-Type: application/json\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    size = os.path.getsize(path)
    with open(path, "rb") as upload, tempfile.TemporaryFile() as body:
        body.write(head)
        while piece := upload.read(1 << 20):
            body.write(piece)
        body.write(tail)
        length = body.tell()
        body.seek(0)
        environ = {
            "REQUEST_METHOD": "POST", "PATH_INFO": reverse("campaign_import"), "SCRIPT_NAME": "", "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "80", "HTTP_HOST": "127.0.0.1", "SERVER_PROTOCOL": "HTTP/1.1",
            "wsgi.url_scheme": "http", "wsgi.input": body, "wsgi.errors": io.StringIO(),
            "CONTENT_TYPE": f"multipart/form-data; boundary={boundary}", "CONTENT_LENGTH": str(length),
            "HTTP_COOKIE": f"{settings.SESSION_COOKIE_NAME}={client.session.session_key}",
        }
        idle = rss_kb()
        start = time.perf_counter()
        response = ClientHandler(enforce_csrf_checks=False)(environ)
        seconds = time.perf_counter() - start
    assert response.status_code == 303, (response.status_code, response.content[-3000:])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"idle_kb": idle, "peak_kb": peak, "seconds": seconds, "bytes": size}))


def run_child(env, mode, campaign_pk, keep=None):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=keep is None) as out:
        if keep is not None:
            keep.append(out.name)
        done = subprocess.run([sys.executable, __file__, "--child", mode, str(campaign_pk), out.name], env=env,
                              capture_output=True, text=True, check=False)
    if done.returncode:
        sys.exit(f"the {mode} child failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def import_figures(env, campaign_pk, path):
    done = subprocess.run([sys.executable, __file__, "--child", "import", str(campaign_pk), path], env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode:
        sys.exit(f"the import child failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------- the log

def template_entries(battle, n=40):
    """n real entries: the rifle squad into the timber workshop's upper floor and out again."""
    from django.contrib.auth import get_user_model

    from apps.armies.models import Unit
    from apps.battles import services
    from apps.structures.models import Structure

    alice = get_user_model().objects.get(username="alice")
    squad = Unit.objects.get(army__battle=battle, army__side="A", name="1st Rifle Squad")
    house = Structure.objects.get(battle=battle, name="Timber workshop")
    for i in range(n):
        into = {"structure": f"s{house.pk}", "floor": "1"} if i % 2 == 0 else {"x": str(8 + i % 5), "y": "14"}
        services.perform(battle_id=battle.pk, user=alice, action="move", inputs={"unit": f"u{squad.pk}", **into})
    return list(battle.log_entries.filter(action="move").order_by("seq"))


def grow_log(battle, templates, entries):
    """Copies of the template entries until the battle's log holds `entries`, chained and hashed as
    `log.new_entry` would have written them."""
    from apps.battles.log import entry_hash
    from apps.battles.models import Battle, LogEntry

    last = battle.log_entries.order_by("-seq").first()
    seq, prev, batch = last.seq, last.entry_hash, []
    while seq < entries:
        model = templates[seq % len(templates)]
        seq += 1
        entry = LogEntry(battle=battle, seq=seq, turn=model.turn, actor_id=model.actor_id,
                         actor_name=model.actor_name, side=model.side, action=model.action, inputs=model.inputs,
                         dice=model.dice, outcome=model.outcome, summary=model.summary, undo=model.undo,
                         prev_hash=prev)
        entry.entry_hash = prev = entry_hash(entry, prev)
        batch.append(entry)
        if len(batch) == 2000:
            LogEntry.objects.bulk_create(batch)
            batch = []
    LogEntry.objects.bulk_create(batch)
    Battle.objects.filter(pk=battle.pk).update(log_head=prev)


def through_gunicorn(env, campaign):
    """(worker RSS before, worker peak RSS after, bytes, seconds) of one download from one gunicorn worker."""
    import socket
    import urllib.request

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.sessions.backends.db import SessionStore

    alice = get_user_model().objects.get(username="alice")
    session = SessionStore()
    session.update({SESSION_KEY: str(alice.pk), BACKEND_SESSION_KEY: "django.contrib.auth.backends.ModelBackend",
                    HASH_SESSION_KEY: alice.get_session_auth_hash()})
    session.create()
    port = bench_http.free_port()
    server = subprocess.Popen([str(BASE / ".venv/bin/gunicorn"), "config.wsgi", "--bind", f"127.0.0.1:{port}",
                               "--workers", "1", "--timeout", "120"], env=env, cwd=BASE,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz").read()
        worker = int(Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()[0])

        def status(key):
            line = next(x for x in Path(f"/proc/{worker}/status").read_text().splitlines() if x.startswith(key))
            return int(line.split()[1])

        idle, size = status("VmRSS:"), 0
        request = urllib.request.Request(f"http://127.0.0.1:{port}/campaigns/{campaign.pk}/export/",
                                         headers={"Cookie": f"{settings.SESSION_COOKIE_NAME}={session.session_key}"})
        start = time.perf_counter()
        with urllib.request.urlopen(request) as response:
            while piece := response.read(1 << 16):
                size += len(piece)
        return idle, status("VmHWM:"), size, time.perf_counter() - start
    finally:
        server.terminate()
        server.wait()


# ---------------------------------------------------------------------------------- the parent

def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="5000,30000", help="log entries, comma-separated (default 5000,30000)")
    parser.add_argument("--gunicorn", action="store_true", help="also download the largest through gunicorn")
    parser.add_argument("--import", dest="imports", action="store_true",
                        help="also import each size's downloaded file through the import page")
    parser.add_argument("--child", nargs=3, metavar=("MODE", "CAMPAIGN", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    env = bench_http.in_process_env(DB_NAME, "redoubt-export-")
    if args.child:
        bench_http.setup_django(env)
        if args.child[0] == "import":
            import_child(int(args.child[1]), args.child[2])
        else:
            child(args.child[0], int(args.child[1]), args.child[2])
        return 0

    bench_http.recreate_database()
    bench_http.setup_django(env)
    from django.core.management import call_command

    from apps.battles.log import first_broken_entry
    from apps.campaigns.models import Campaign

    call_command("migrate", verbosity=0)
    call_command("demo", verbosity=0)
    campaign = Campaign.objects.get(name="Operation Crossroads")
    battle = campaign.battles.get(session_number=1)
    battle.options = {**(battle.options or {}), "track_actions": False}
    battle.save(update_fields=["options"])
    print("playing the template moves …", flush=True)
    templates = template_entries(battle)
    rows = []
    for entries in sorted(int(n) for n in args.sizes.split(",")):
        grow_log(battle, templates, entries)
        assert first_broken_entry(battle) is None
        kept = []
        figures = {mode: run_child(env, mode, campaign.pk, keep=kept if mode == "view" else None) for mode in MODES}
        assert len({f["sha256"] for f in figures.values()}) == 1, "the two ways wrote different files"
        if args.imports:
            figures["import"] = import_figures(env, campaign.pk, kept[0])
        for name in kept:
            os.unlink(name)
        rows.append((entries, figures))
        print(f"{entries:,} entries done", flush=True)

    print(f"\ncampaign download, one fresh process each; {os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M')}")
    print(f"{'log entries':>12}  {'file':>8}  {'way':<9}{'streamed':>9}{'idle MB':>9}{'peak MB':>9}"
          f"{'+ MB':>8}{'seconds':>9}")
    for entries, figures in rows:
        for mode, f in figures.items():
            streamed = "" if mode == "import" else "yes" if f["streamed"] else "no"
            print(f"{entries:>12,}  {f['bytes'] / 1e6:>6.1f}MB  {mode:<9}{streamed:>9}"
                  f"{f['idle_kb'] / 1024:>9.0f}{f['peak_kb'] / 1024:>9.0f}"
                  f"{(f['peak_kb'] - f['idle_kb']) / 1024:>8.0f}{f['seconds']:>9.2f}")
    if args.gunicorn:
        idle, peak, size, seconds = through_gunicorn(env, campaign)
        assert size == rows[-1][1]["view"]["bytes"], size
        print(f"\none gunicorn worker, {rows[-1][0]:,} entries over HTTP: RSS {idle / 1024:.0f} MB before, "
              f"peak {peak / 1024:.0f} MB (+{(peak - idle) / 1024:.0f}), {seconds:.2f} s, {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
