"""HTTP speed of the battle screen under gunicorn: the attack POST and the unchanged poll, each beside
a do-nothing Django view (/healthz) measured in the same run, with wrk from 127.0.0.1.

    .venv/bin/python bench/bench_http.py                  # full run, about 5 minutes
    .venv/bin/python bench/bench_http.py --quick          # 4 s per measurement, smoke run
    .venv/bin/python bench/bench_http.py --sweep 2,3,4,6  # also compare gunicorn worker counts

What it does, every time from scratch:
1. drops and recreates the PostgreSQL database `redoubt_bench` on 127.0.0.1:5432 (user postgres),
   migrates it and loads the demo (`manage.py demo`);
2. prepares the demo battle so one attack can be repeated thousands of times and stay valid:
   Bolt Action with `options["track_actions"] = False` (a club that tracks orders with its own order
   dice: a unit may fire again) and the Field gun team also carrying "HE shell, D6 in buildings"
   (a D6 shell never collapses a building, so the target house and squad stay); the attack is that
   shell at Grenadier Squad 1 on floor 1 of the Brick house at the crossroads, "roll for me";
3. starts gunicorn with the production settings (DEBUG=0, manifest static files) and
   CONN_MAX_AGE=600, signs in as alice for a session cookie and CSRF token, and reads the poll's
   version, map version, newest entry and watch token from the battle page;
4. runs wrk (-t2 -c16 --latency, bounded in time) against /healthz, the unchanged poll (must answer
   204), a reference signed-in write (a view only the benchmark's URLconf has: signed in, CSRF-checked,
   POST-only like the attack, it locks the battle row and bumps its version — what any write costs
   here before it does anything of its own), a reference "resolve only" (the same URLconf: the attack
   view's call to services.perform with the same form, answering "Resolved #n" and drawing nothing —
   what resolving costs apart from the answer) and the attack POST (a Lua script gives every request
   a fresh client_token and sends the session cookie, X-CSRFToken and HX-Request: true), then checks
   the attacks were real resolutions: every answer says "Resolved #…" and the log grew by one entry
   per answer;
5. does the same again with CONN_MAX_AGE=0 (a new database connection per request) to show what
   persistent connections are worth.

Beside each figure, "CPU ms": the server's CPU time (gunicorn's and PostgreSQL's processes, from /proc)
per request during that run; steadier than requests/s on a VM whose speed drifts.

Raw wrk output goes to bench/results/ (git-ignored). Exits non-zero if a target fails.
Targets (issue 5, item 13), at 16 connections on these 2-core machines:
the attack POST ≥ 0.06× the do-nothing view's requests/s with p99 < 100 ms; the unchanged poll ≥ 0.35×.
"""

import argparse
import http.client
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

BASE = Path(__file__).resolve().parent.parent
RESULTS = BASE / "bench" / "results"
VENV_BIN = Path(sys.executable).parent
DB_NAME = "redoubt_bench"
DATABASE_URL = f"postgres://postgres@127.0.0.1:5432/{DB_NAME}"
DEMO_BATTLE = "Village crossroads — session 1"
PASSWORD = "redoubt-demo"
SECRET_KEY = "bench-" + secrets.token_urlsafe(48)

ATTACK_RATIO, ATTACK_P99_MS, POLL_RATIO = 0.06, 100.0, 0.35

# Every request gets its own client_token (a canonical UUID, or the server would treat it as missing):
# <run prefix>-<thread>-4000-8000-<counter>. Like a phone, each wrk thread sends the map version and
# newest entry its page holds (hx-include="#poller"), taken from the newest answer it has had: the
# server then sends what changed since, not every panel. The Lua also checks each answer is a resolution.
ATTACK_LUA = r"""
local threads = {}
local next_id = 0
function setup(thread)
  next_id = next_id + 1
  thread:set("id", next_id)
  table.insert(threads, thread)
end
-- One battle per thread, round the list: {battles} = { {path, body, m, after}, ... }.
local battles = {battles}
function init(args)
  counter = 0
  resolved = 0
  other = 0
  whole = 0
  local b = battles[(id - 1) % #battles + 1]
  path, body, held_m, held_after = b[1], b[2], b[3], b[4]
end
request = function()
  counter = counter + 1
  local token = string.format("%s-%04x-4000-8000-%012x", "{prefix}", id, counter)
  return wrk.format("POST", path, nil, body .. token .. "&m=" .. held_m .. "&after=" .. held_after)
end
function response(status, headers, body)
  if status == 200 and string.find(body, "Resolved #", 1, true) then
    resolved = resolved + 1
    if string.find(body, '<div id="map"', 1, true) then whole = whole + 1 end
    local m = string.match(body, 'name="m" value="(%d+)"')
    local after = string.match(body, 'name="after" value="(%d+)"')
    if m and tonumber(m) > tonumber(held_m) then held_m = m end
    if after and tonumber(after) > tonumber(held_after) then held_after = after end
  else
    other = other + 1
  end
end
function done(summary, latency, requests)
  local r, o, w = 0, 0, 0
  for _, t in ipairs(threads) do
    r = r + t:get("resolved")
    o = o + t:get("other")
    w = w + t:get("whole")
  end
  io.write(string.format("CHECK answered=%d other=%d\n", r, o))
  io.write(string.format("WHOLE %d\n", w))
end
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Cookie"] = "{cookie}"
wrk.headers["X-CSRFToken"] = "{csrf}"
wrk.headers["HX-Request"] = "true"
"""

# The reference for what any signed-in write costs here, whatever it does: the app's URLs plus one view
# that is signed in, CSRF-checked and POST-only like the attack, locks the battle row, bumps its
# version and answers a few bytes. It exists only in the benchmark's own URLconf.
FLOOR_URLS = """
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpResponse
from django.urls import path
from django.views.decorators.http import require_POST

from apps import rules
from apps.battles import forms as battle_forms, services
from apps.battles.models import Battle
from apps.battles.views import _token
from config.urls import urlpatterns as app_urls


@login_required
@require_POST
def signed_in_write(request, pk):
    with transaction.atomic():
        battle = Battle.objects.select_for_update().only("version").get(pk=pk)
        battle.version += 1
        battle.save(update_fields=["version"])
    return HttpResponse("written")


@login_required
@require_POST
def resolve_only(request, pk):
    # The attack view's call to services.perform, with none of its answer drawn: what resolving and
    # logging cost on their own.
    data = request.POST
    entry = services.perform(
        battle_id=pk, user=request.user, action=data["action"],
        inputs=battle_forms.raw_inputs(rules.ACTIONS[data["action"]], data),
        attacker=data.get("attacker") or None, client_token=_token(data.get("client_token")))
    return HttpResponse(f"Resolved #{entry.seq}")


urlpatterns = app_urls + [path("bench/signed-in-write/<int:pk>/", signed_in_write),
                          path("bench/resolve-only/<int:pk>/", resolve_only)]
"""

# Counts the answers that are what the request must get (`{ok}`, a Lua condition) and the others.
COUNTING_LUA = r"""
local threads = {}
function setup(thread)
  table.insert(threads, thread)
end
function init(args)
  answered = 0
  other = 0
end
function response(status, headers, body)
  if {ok} then answered = answered + 1 else other = other + 1 end
end
function done(summary, latency, requests)
  local a, o = 0, 0
  for _, t in ipairs(threads) do
    a = a + t:get("answered")
    o = o + t:get("other")
  end
  io.write(string.format("CHECK answered=%d other=%d\n", a, o))
end
"""

POLL_LUA = COUNTING_LUA.replace("{ok}", "status == 204")

FLOOR_LUA = COUNTING_LUA.replace("{ok}", 'status == 200 and body == "written"') + r"""
wrk.method = "POST"
wrk.body = ""
wrk.headers["Cookie"] = "{cookie}"
wrk.headers["X-CSRFToken"] = "{csrf}"
"""


def log(message):
    print(message, flush=True)


# The database -----------------------------------------------------------------------------------

def server_env(settings_dir, conn_max_age):
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(settings_dir), str(BASE)]),
        "DJANGO_SETTINGS_MODULE": "bench_settings",
        "DATABASE_URL": DATABASE_URL,
        "CONN_MAX_AGE": str(conn_max_age),
        "DEBUG": "0",
        "SECRET_KEY": SECRET_KEY,
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "SECURE_COOKIES": "0",
        "LOG_LEVEL": "ERROR",
    }


def in_process_env(db_name, prefix):
    """For a script that loads its own copy of the app in process (bench_size, bench_export): its own
    database, the production settings with plain file storage (nothing collected), persistent connections."""
    global DB_NAME, DATABASE_URL
    DB_NAME, DATABASE_URL = db_name, f"postgres://postgres@127.0.0.1:5432/{db_name}"
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    (tmp / "bench_settings.py").write_text(
        "from config.settings import *  # noqa: F403\n"
        "STORAGES = {'default': {'BACKEND': 'django.core.files.storage.FileSystemStorage'},\n"
        "            'staticfiles': {'BACKEND': 'django.contrib.staticfiles.storage.StaticFilesStorage'}}\n")
    return server_env(tmp, 600)


def recreate_database():
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {DB_NAME}")


def drop_database():
    import psycopg

    # FORCE: this process's own Django connection is still open (persistent connections).
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")


def setup_django(env):
    """This process reads and prepares the bench database with the app's own models."""
    os.environ.update({k: v for k, v in env.items() if k not in ("PYTHONPATH",)})
    sys.path[:0] = [p for p in env["PYTHONPATH"].split(os.pathsep) if p not in sys.path]
    import django

    django.setup()


def prepare_battle():
    from apps.armies.models import Unit, UnitWeapon, Weapon
    from apps.battles.models import Battle

    battle = Battle.objects.get(name=DEMO_BATTLE)
    battle.options = {**(battle.options or {}), "track_actions": False}
    battle.save(update_fields=["options"])
    gun = Unit.objects.get(army__battle=battle, army__side="A", name="Field gun team")
    d6 = Weapon.objects.get(ruleset="ba", slug="he-d6")
    UnitWeapon.objects.get_or_create(unit=gun, weapon=d6, defaults={"count": 1})
    return battle, attack_for(battle)


def attack_for(battle):
    """The bench attack's form in `battle` (the demo battle or a copy of it)."""
    from apps.armies.models import Unit, Weapon
    from apps.structures.models import Structure

    gun = Unit.objects.get(army__battle=battle, army__side="A", name="Field gun team")
    d6 = Weapon.objects.get(ruleset="ba", slug="he-d6")
    house = Structure.objects.get(battle=battle, name="Brick house at the crossroads")
    squad = Unit.objects.get(army__battle=battle, army__side="B", name="Grenadier Squad 1")
    assert squad.floor.structure_id == house.pk
    return {
        "action": "ba_he", "attacker": f"u{gun.pk}", "weapon": f"w{d6.pk}", "structure": f"s{house.pk}",
        "target": f"u{squad.pk}", "hit": "yes", "went_down": "no", "pins": "1", "dice_mode": "server",
        "card": f"s{house.pk}",
    }


def battle_copies(battle, n):
    """`n` battles like the bench battle (its ground, armies and options; no log), each with its attack."""
    from apps.battles.models import Battle, BattleStatus
    from apps.campaigns.copying import _clone, copy_battlefield

    copies = []
    for i in range(n):
        copy = _clone(battle, name=f"{battle.name} — bench copy {i + 1}", campaign_id=None, session_number=None,
                      status=BattleStatus.IN_PROGRESS, version=1, map_version=1, log_head="", campaign_before={})
        copy.save()
        copy_battlefield(battle, battle=copy)
        copies.append(Battle.objects.get(pk=copy.pk))
    return [(copy, attack_for(copy)) for copy in copies]


def log_count(battle):
    from django.db import connection

    from apps.battles.models import LogEntry

    count = LogEntry.objects.filter(battle=battle).count()
    connection.close()  # hold no connection between measurements
    return count


def settled_count(battle):
    """The log's size once the attacks still in flight when wrk stopped have been resolved too."""
    count, deadline = log_count(battle), time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.5)
        again = log_count(battle)
        if again == count:
            return count
        count = again
    return count


# gunicorn -----------------------------------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, env, workers, logfile):
        self.port = free_port()
        self.logfile = logfile
        self.process = subprocess.Popen(
            [str(VENV_BIN / "gunicorn"), "config.wsgi", "--bind", f"127.0.0.1:{self.port}",
             "--workers", str(workers), "--log-level", "warning"],
            cwd=BASE, env=env, stdout=logfile.open("wb"), stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"gunicorn exited with {self.process.returncode}:\n{logfile.read_text()[-3000:]}")
            try:
                if request(self.port, "GET", "/healthz")[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        else:
            self.stop()
            raise SystemExit(f"gunicorn did not answer /healthz in 60 s:\n{logfile.read_text()[-3000:]}")
        # Every worker imports and connects lazily: warm them all before measuring anything.
        for _ in range(workers * 8):
            request(self.port, "GET", "/healthz")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def request(port, method, path, form=None, cookies=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    sent = dict(headers or {})
    if cookies:
        sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
    body = None
    if form is not None:
        body = urlencode(form)
        sent["Content-Type"] = "application/x-www-form-urlencoded"
    conn.request(method, path, body=body, headers=sent)
    response = conn.getresponse()
    text = response.read().decode()
    conn.close()
    if cookies is not None:
        for raw in response.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(raw).items():
                cookies[name] = morsel.value
    return response.status, response.headers, text


def field(html, name):
    match = re.search(rf'<input[^>]*name="{name}"[^>]*value="([^"]*)"', html)
    if not match:
        raise SystemExit(f"no input {name!r} on the battle page")
    return match.group(1)


def sign_in(port, battle):
    cookies = {}
    _, _, page = request(port, "GET", "/accounts/login/", cookies=cookies)
    status, headers, _ = request(port, "POST", "/accounts/login/", cookies=cookies, form={
        "username": "alice", "password": PASSWORD, "csrfmiddlewaretoken": field(page, "csrfmiddlewaretoken"),
    })
    if status != 302 or "sessionid" not in cookies:
        raise SystemExit(f"signing in as alice failed ({status})")
    return cookies


def poll_query(port, battle, cookies):
    """What the battle page's #poller holds right now."""
    status, _, page = request(port, "GET", f"/battles/{battle.pk}/", cookies=cookies)
    if status != 200:
        raise SystemExit(f"the battle page answered {status}")
    block = page[page.index('id="poller"'):]
    block = block[:block.index("</div>")]
    return {name: field(block, name) for name in ("v", "m", "after", "t")}


# wrk --------------------------------------------------------------------------------------------

UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}
BYTES = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}


def _children(pid):
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "stat").read_text().rsplit(")", 1)[1].split()[1] == str(pid):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _cpu_ticks(pid, children=False):
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    # utime, stime; with `children`, also what its exited children used (cutime, cstime).
    return sum(int(v) for v in fields[11:15 if children else 13])


def server_cpu_seconds(gunicorn_pid):
    """CPU time used so far by the server side of a request: gunicorn's master and workers, and
    PostgreSQL's processes (backends that have exited included, through the postmaster's count of
    its children). What the machine spends per request, however fast it happens to run right now."""
    postmaster = int(subprocess.run(["pgrep", "-o", "-x", "postgres"], capture_output=True, text=True).stdout.split()[0])
    pids = [gunicorn_pid, *_children(gunicorn_pid), *_children(postmaster)]
    return (sum(_cpu_ticks(p) for p in pids) + _cpu_ticks(postmaster, children=True)) / os.sysconf("SC_CLK_TCK")


def run_wrk(url, label, args, stamp, script=None, connections=None):
    # A generous timeout: wrk leaves requests slower than it out of the latency figures altogether.
    connections = connections or args.connections
    command = ["wrk", f"-t{min(args.threads, connections)}", f"-c{connections}", f"-d{args.duration}s",
               "--timeout", "30s", "--latency"]
    if script:
        command += ["-s", str(script)]
    command.append(url)
    cpu = server_cpu_seconds(args.server_pid)
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    cpu = server_cpu_seconds(args.server_pid) - cpu
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{stamp}-{label}.txt").write_text(" ".join(command) + "\n\n" + out + f"\nserver CPU seconds: {cpu:.2f}\n")
    figures = parse_wrk(out)
    figures["cpu_ms"] = cpu / figures["requests"] * 1000 if figures["requests"] else float("nan")
    return figures


def parse_wrk(out):
    def latency(pct):
        m = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        return float(m.group(1)) * UNITS[m.group(2)] if m else float("nan")

    transfer = re.search(r"Transfer/sec:\s+([\d.]+)([KMG]?B)", out)
    check = re.search(r"CHECK answered=(\d+) other=(\d+)", out)
    whole = re.search(r"WHOLE (\d+)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "bytes_per_s": float(transfer.group(1)) * BYTES[transfer.group(2)] if transfer else float("nan"),
        "requests": int(re.search(r"(\d+) requests in", out).group(1)),
        "p50": latency(50), "p99": latency(99),
        "non2xx": int(non2xx.group(1)) if non2xx else 0,
        "socket_errors": errors.group(1).strip() if errors else "",
        "whole": int(whole.group(1)) if whole else None,
        "answered": int(check.group(1)) if check else None, "other": int(check.group(2)) if check else None,
    }


def lua_string(value):
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_script(target, template, battles=(), **values):
    """The Lua template with `values` put inside its quoted strings, and `battles` ((path, body, m,
    after) for each battle the threads attack, round the list) as a Lua table."""
    text = template.replace("{battles}", "{" + ", ".join(
        "{" + ", ".join(lua_string(str(v)) for v in battle) + "}" for battle in battles) + "}")
    for key, value in values.items():
        text = text.replace("{" + key + "}", lua_string(value)[1:-1])
    target.write_text(text)
    return target


def measure(env, workers, args, stamp, label, battle, attack, tmp, spread=()):
    """Start gunicorn, run the measurements, stop it. Returns {name: wrk figures}."""
    server = Server(env, workers, tmp / f"gunicorn-{label}.log")
    args = argparse.Namespace(**{**vars(args), "server_pid": server.process.pid})
    try:
        port = server.port
        base = f"http://127.0.0.1:{port}"
        cookies = sign_in(port, battle)
        page_path = f"/battles/{battle.pk}/"

        # One attack by hand first: the body the Lua sends must resolve, not come back as a form error.
        status, _, text = request(port, "POST", f"{page_path}resolve/", cookies=cookies,
                                  form={**attack, "client_token": "00000000-0000-4000-8000-%012x" % secrets.randbits(40)},
                                  headers={"X-CSRFToken": cookies["csrftoken"], "HX-Request": "true"})
        if status != 200 or "Resolved #" not in text:
            found = re.findall(r'class="(?:field-error|form-errors)[^"]*"[^>]*>(.*?)</', text)
            raise SystemExit(f"the benchmark attack does not resolve ({status}): {found[:3]}")

        results = {}
        results["healthz"] = run_wrk(f"{base}/healthz", f"{label}-healthz", args, stamp)

        held = poll_query(port, battle, cookies)
        poll_script = write_script(tmp / "poll.lua", POLL_LUA)
        results["poll"] = run_wrk(f"{base}{page_path}poll/?{urlencode(held)}", f"{label}-poll", args, stamp,
                                  poll_script)

        cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
        floor_script = write_script(tmp / "floor.lua", FLOOR_LUA, cookie=cookie, csrf=cookies["csrftoken"])
        results["floor"] = run_wrk(f"{base}/bench/signed-in-write/{battle.pk}/", f"{label}-floor", args, stamp,
                                   floor_script)

        def attack_run(name, targets, connections=None, threads=None, path="/battles/{}/resolve/"):
            """wrk posting the bench attack; each thread attacks one of `targets` ((battle, attack) pairs)
            with the map version and newest entry its page held, as a phone does."""
            lua = []
            for b, a in targets:
                held = poll_query(port, b, cookies)
                lua.append((path.format(b.pk), urlencode(a) + "&client_token=", held["m"], held["after"]))
            before = sum(log_count(b) for b, _ in targets)
            script = write_script(tmp / f"{name}.lua", ATTACK_LUA, battles=lua, prefix=secrets.token_hex(4),
                                  cookie=cookie, csrf=cookies["csrftoken"])
            run_args = argparse.Namespace(**{**vars(args), "threads": threads or args.threads})
            figures = run_wrk(f"{base}{lua[0][0]}", f"{label}-{name}", run_args, stamp, script, connections=connections)
            figures["logged"] = sum(settled_count(b) for b, _ in targets) - before
            return figures

        results["attack"] = attack_run("attack", [(battle, attack)])
        results["resolve"] = attack_run("resolve-only", [(battle, attack)], path="/bench/resolve-only/{}/")
        # One phone attacking on its own, as at a table where players take turns: the latency a player sees.
        results["alone"] = attack_run("attack-alone", [(battle, attack)], connections=1)
        if spread:
            # The same 16 connections over several tables at once: one wrk thread per battle.
            results["spread"] = attack_run("attack-spread", spread, threads=len(spread))
            results["spread"]["battles"] = len(spread)
        return results
    finally:
        server.stop()


# Report -----------------------------------------------------------------------------------------

def verdicts(r):
    base = r["healthz"]["rps"]
    poll_ratio, attack_ratio = r["poll"]["rps"] / base, r["attack"]["rps"] / base
    checks = {
        "poll": poll_ratio >= POLL_RATIO and r["poll"]["other"] == 0 and r["poll"]["non2xx"] == 0,
        "attack": attack_ratio >= ATTACK_RATIO and r["attack"]["p99"] < ATTACK_P99_MS and r["attack"]["non2xx"] == 0
        and r["attack"]["other"] == 0,
    }
    return poll_ratio, attack_ratio, checks


def table(title, r):
    poll_ratio, attack_ratio, checks = verdicts(r)
    rows = [
        ("do-nothing view  GET /healthz", r["healthz"], "1.000", "baseline", ""),
        ("unchanged poll   GET …/poll/ → 204", r["poll"], f"{poll_ratio:.3f}", f"≥ {POLL_RATIO}×",
         "PASS" if checks["poll"] else "FAIL"),
        ("signed-in write  POST (reference)", r["floor"], f"{r['floor']['rps'] / r['healthz']['rps']:.3f}",
         "none: what any write costs", ""),
        ("resolve only     POST (reference)", r["resolve"], f"{r['resolve']['rps'] / r['healthz']['rps']:.3f}",
         "none: the attack, no answer", ""),
        ("attack           POST …/resolve/", r["attack"], f"{attack_ratio:.3f}",
         f"≥ {ATTACK_RATIO}×, p99 < {ATTACK_P99_MS:g} ms", "PASS" if checks["attack"] else "FAIL"),
        ("attack, one phone (1 connection)", r["alone"], f"{r['alone']['rps'] / r['healthz']['rps']:.3f}",
         "none: what a player waits", ""),
    ]
    if "spread" in r:
        rows.append((f"attack, 16 connections, {r['spread']['battles']} battles", r["spread"],
                     f"{r['spread']['rps'] / r['healthz']['rps']:.3f}", "none: several tables at once", ""))
    lines = [title, f"{'':<36} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'× healthz':>10} {'CPU ms':>7}  "
                    f"{'target':<24} result"]
    for name, w, ratio, target, verdict in rows:
        lines.append(f"{name:<36} {w['rps']:>8.1f} {w['p50']:>8.2f} {w['p99']:>8.2f} {ratio:>10} {w['cpu_ms']:>7.2f}  "
                     f"{target:<24} {verdict}")
    lines.append("CPU ms: server CPU time (gunicorn and PostgreSQL, both cores) per request during the run")
    a, p, f = r["attack"], r["poll"], r["floor"]
    lines.append(f"checks: poll answers 204: {p['answered']}/{p['requests']} (other {p['other']}, non-2xx {p['non2xx']}); "
                 f"signed-in writes answered: {f['answered']}/{f['requests']} (other {f['other']}); "
                 f"attacks answered 'Resolved #…': {a['answered']}/{a['requests']} (other {a['other']}, "
                 f"non-2xx {a['non2xx']}), log entries added: {a['logged']}; "
                 f"an attack's answer averages {a['bytes_per_s'] / a['rps'] / 1024:.1f} KB; "
                 f"answers that redrew the whole map: {a['whole']}; one phone alone: "
                 f"{r['alone']['answered']}/{r['alone']['requests']} resolved, "
                 f"{r['alone']['bytes_per_s'] / r['alone']['rps'] / 1024:.1f} KB per answer; resolve only: "
                 f"{r['resolve']['answered']}/{r['resolve']['requests']} resolved (other {r['resolve']['other']}), "
                 f"log entries added: {r['resolve']['logged']}")
    if "spread" in r:
        sp = r["spread"]
        lines.append(f"over {sp['battles']} battles: {sp['answered']}/{sp['requests']} resolved (other {sp['other']}, "
                     f"non-2xx {sp['non2xx']}), log entries added: {sp['logged']}")
    errors = {k: v["socket_errors"] for k, v in r.items() if v["socket_errors"]}
    if errors:
        lines.append(f"socket errors: {errors}")
    return "\n".join(lines), all(checks.values())


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=15, help="seconds per wrk run (default 15)")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers (default 4: best measured here)")
    parser.add_argument("--sweep", default="", help="also measure these worker counts, e.g. 2,3,4,6")
    parser.add_argument("--no-compare", action="store_true", help="skip the CONN_MAX_AGE=0 run")
    parser.add_argument("--quick", action="store_true", help="4 s per measurement")
    parser.add_argument("--battles", type=int, default=8,
                        help="also attack this many copies of the demo battle at once, one wrk thread each "
                             "(default 8; 0 skips it)")
    args = parser.parse_args(argv)
    if args.quick:
        args.duration = 4

    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    tmp = Path(tempfile.mkdtemp(prefix="redoubt-bench-"))
    # The production settings unchanged, except where collectstatic writes (this run's own folder).
    (tmp / "bench_settings.py").write_text(
        "from config.settings import *  # noqa: F403\n"
        f"STATIC_ROOT = {str(tmp / 'static')!r}\n"
        "ROOT_URLCONF = 'bench_urls'\n"
    )
    (tmp / "bench_urls.py").write_text(FLOOR_URLS)
    env = server_env(tmp, 600)

    log(f"Preparing {DB_NAME}: drop, create, migrate, demo …")
    recreate_database()
    setup_django(env)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("demo", verbosity=0)
    # With the production settings (DEBUG=0) the demo's accounts get random passwords: the benchmark
    # signs in as alice through the real form, so it gives her the known one.
    from django.contrib.auth import get_user_model
    alice = get_user_model().objects.get(username="alice")
    alice.set_password(PASSWORD)
    alice.save(update_fields=["password"])
    battle, attack = prepare_battle()
    spread = battle_copies(battle, args.battles)
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--no-input", "-v0"], cwd=BASE, env=env, check=True)
    from django.db import connection

    connection.close()

    load = os.getloadavg()
    log(f"cores: {os.cpu_count()}, load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    log(f"wrk -t{args.threads} -c{args.connections} -d{args.duration}s --timeout 30s --latency, from 127.0.0.1; "
        f"raw output in bench/results/{stamp}-*.txt")
    log("bench battle: the demo battle with track_actions off (a club using its own order dice, so the same unit "
        "may fire again); the Field gun team's 'HE shell, D6 in buildings' at Grenadier Squad 1 in the Brick house "
        "at the crossroads, server dice ('roll for me')\n")

    ok = True
    if args.sweep:
        log("gunicorn worker counts (CONN_MAX_AGE=600):")
        log(f"{'workers':>7} {'healthz req/s':>14} {'poll req/s':>11} {'attack req/s':>13} {'attack p99 ms':>14} "
            f"{'poll ×':>7} {'attack ×':>9}")
        for workers in [int(w) for w in args.sweep.split(",") if w.strip()]:
            r = measure(env, workers, args, stamp, f"workers{workers}", battle, attack, tmp)
            pr, ar, _ = verdicts(r)
            log(f"{workers:>7} {r['healthz']['rps']:>14.1f} {r['poll']['rps']:>11.1f} {r['attack']['rps']:>13.1f} "
                f"{r['attack']['p99']:>14.2f} {pr:>7.3f} {ar:>9.3f}")
        log("")

    main_run = measure(env, args.workers, args, stamp, "main", battle, attack, tmp, spread)
    text, passed = table(f"gunicorn --workers {args.workers}, CONN_MAX_AGE=600 (persistent connections):", main_run)
    log(text + "\n")
    ok &= passed

    if not args.no_compare:
        plain = measure(server_env(tmp, 0), args.workers, args, stamp, "conn0", battle, attack, tmp)
        text, _ = table("the same with CONN_MAX_AGE=0 (a new database connection per request), for comparison:", plain)
        log(text)
        log("persistent connections (600 vs 0): " + ", ".join(
            f"{name} {main_run[name]['rps'] / plain[name]['rps']:.2f}× the requests/s"
            for name in ("healthz", "poll", "attack")) + "\n")

    load = os.getloadavg()
    log(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    log("ALL PASS" if ok else "SOME FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
