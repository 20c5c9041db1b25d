"""No state in process memory: two gunicorn servers on different ports share one PostgreSQL (as a club
host scales out behind a load balancer), and a player whose requests alternate between them gets
exactly what one server gives.

The servers run the production settings (DEBUG=0, manifest static files, persistent connections)
against this run's test database, whose demo the test committed (transactional_db). One cookie jar
serves both servers, so the session, the CSRF token, the poll's watch token and the form's one-time
token all cross from one process to the other. Afterwards the database is checked, then the demo is
loaded anew and the same requests go to one server only: the two end states must be equal.
"""

import http.client
import os
import re
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.core.management import call_command
from django.db import connection

from apps.armies.models import Unit, Weapon
from apps.battles.models import Battle, LogEntry
from apps.structures.models import Structure

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

BASE = Path(settings.BASE_DIR)
VENV_BIN = Path(sys.executable).parent
PASSWORD = "redoubt-demo"
DEMO_BATTLE = "Village crossroads — session 1"
SECRET = "scale-out-test-" + "k" * 50  # any 50+ characters: both servers must share it, like a real cluster
STARTUP_SECONDS = 30


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(port, process, log):
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn on {port} exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"gunicorn on {port} did not answer /healthz in {STARTUP_SECONDS} s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def servers(django_db_setup, tmp_path_factory):
    """Two gunicorn servers (one worker each) on this run's test database; always terminated."""
    tmp = tmp_path_factory.mktemp("scale_out")
    # The production settings unchanged, except where collectstatic writes: this run's own folder,
    # not the checkout's staticfiles/ (DEBUG=0 serves the hashed manifest files, so they must exist).
    (tmp / "scale_out_settings.py").write_text(
        "from config.settings import *  # noqa: F403\n"
        f"STATIC_ROOT = {str(tmp / 'static')!r}\n"
    )
    db = connection.settings_dict
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp), str(BASE)]),
        "DJANGO_SETTINGS_MODULE": "scale_out_settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}",
        "DEBUG": "0",
        "SECRET_KEY": SECRET,
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "SECURE_COOKIES": "0",
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--no-input", "-v0"], cwd=BASE, env=env, check=True)
    started = []
    try:
        for _ in range(2):
            port = free_port()
            log = tmp / f"gunicorn-{port}.log"
            process = subprocess.Popen(
                [str(VENV_BIN / "gunicorn"), "config.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
                cwd=BASE, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
            )
            started.append((port, process, log))
            wait_until_up(port, process, log)
        yield [port for port, _, _ in started]
    finally:
        for _, process, _ in started:
            process.terminate()
        for _, process, _ in started:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


# A player's phone: one cookie jar, whichever server answers --------------------------------------

@dataclass
class Answer:
    status: int
    headers: object
    text: str

    def header(self, name):
        return self.headers.get(name)


class Phone:
    """Plain HTTP with one cookie jar. Cookies are per host, not per port, as in a browser: a load
    balancer's two backends see the same cookies."""

    def __init__(self):
        self.cookies = {}
        self.lock = threading.Lock()

    def send(self, port, method, path, form=None, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        sent = {"Host": f"127.0.0.1:{port}", **(headers or {})}
        with self.lock:
            if self.cookies:
                sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if form is not None:
            body = urlencode(form, doseq=True)
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        conn.request(method, path, body=body, headers=sent)
        response = conn.getresponse()
        text = response.read().decode()
        with self.lock:
            for raw in response.headers.get_all("Set-Cookie") or []:
                for name, morsel in SimpleCookie(raw).items():
                    if morsel["max-age"] == "0" or not morsel.value:
                        self.cookies.pop(name, None)
                    else:
                        self.cookies[name] = morsel.value
        conn.close()
        return Answer(response.status, response.headers, text)

    def get(self, port, path, headers=None):
        return self.send(port, "GET", path, headers=headers)

    def post(self, port, path, form, headers=None):
        return self.send(port, "POST", path, form=form, headers=headers)


def field(html, name):
    match = re.search(rf'<input[^>]*name="{name}"[^>]*value="([^"]*)"', html) or \
        re.search(rf'<input[^>]*value="([^"]*)"[^>]*name="{name}"', html)
    assert match, f"no input {name!r} on the page"
    return match.group(1)


def poller(html):
    """What the page's #poller holds: v, m, after, t."""
    start = html.index('id="poller"')
    block = html[start:html.index("</div>", start)]
    return {name: field(block, name) for name in ("v", "m", "after", "t")}


def entry(html, seq):
    """Log entry #seq's <li>, up to whatever follows it in the list."""
    match = re.search(rf'<li id="log-{seq}".*?(?=<li id="log-|<li class="log-turn"|</ol>|$)', html, re.S)
    assert match, f"log entry #{seq} is not on the page"
    return match.group(0)


# The scenario ----------------------------------------------------------------------------------

def pieces(battle):
    townhouse = Structure.objects.get(battle=battle, name="Brick townhouse")
    gun = Unit.objects.get(army__battle=battle, army__side="A", name="Field gun team")
    squad = Unit.objects.get(army__battle=battle, army__side="B", name="Grenadier Squad 2")
    shell = Weapon.objects.get(ruleset="ba", slug="he-2d6")
    return townhouse, gun, squad, shell


def attack(battle, dice, client_token, csrf):
    townhouse, gun, squad, shell = pieces(battle)
    return {
        "action": "ba_he", "attacker": f"u{gun.pk}", "weapon": f"w{shell.pk}", "structure": f"s{townhouse.pk}",
        "target": f"u{squad.pk}", "hit": "yes", "went_down": "no", "pins": "1", "dice_mode": "player",
        **{f"dice_{i}": str(d) for i, d in enumerate(dice)}, "client_token": client_token,
        "csrfmiddlewaretoken": csrf,
    }


def play(first, second):
    """Sign in, attack, poll, undo, read the log and double-tap an attack, sending each request to
    `first` or `second` as a load balancer might. Returns nothing; asserts every answer."""
    battle = Battle.objects.get(name=DEMO_BATTLE)
    page_path = f"/battles/{battle.pk}/"
    seq = (LogEntry.objects.filter(battle=battle).order_by("-seq").values_list("seq", flat=True).first() or 0) + 1
    phone = Phone()
    # The suite hashes passwords with MD5 for speed; the servers run the production hashers.
    get_user_model().objects.filter(username="alice").update(
        password=PBKDF2PasswordHasher().encode(PASSWORD, PBKDF2PasswordHasher().salt()))

    # Sign in on the first server, through the real form.
    login = phone.get(first, "/accounts/login/")
    assert login.status == 200
    signed = phone.post(first, "/accounts/login/", {
        "username": "alice", "password": PASSWORD, "csrfmiddlewaretoken": field(login.text, "csrfmiddlewaretoken"),
        "next": page_path,
    })
    assert signed.status == 302 and signed.header("Location") == page_path, re.findall(r'role="alert">(.*?)</div>', signed.text, re.S)
    assert "sessionid" in phone.cookies

    # The second server knows the session: it comes from the database, not from the first's memory.
    there = phone.get(second, page_path)
    assert there.status == 200, there.status
    assert "Signed in as alice" in there.text
    held = poller(there.text)

    # The first server's page gives the CSRF token and the form's one-time token; the attack goes to the second.
    here = phone.get(first, page_path)
    assert here.status == 200
    csrf, token = field(here.text, "csrfmiddlewaretoken"), field(here.text, "client_token")
    resolved = phone.post(second, f"{page_path}resolve/", attack(battle, (3, 4), token, csrf))
    assert resolved.status == 303, (resolved.status, resolved.text[:500])
    assert resolved.header("Location").startswith(page_path)

    # The first server's poll, with the version the second server's page held: the changed panels.
    poll_path = f"{page_path}poll/?" + urlencode(held)
    changed = phone.get(first, poll_path)
    assert changed.status == 200
    assert int(changed.header("X-Battle-Version")) == int(held["v"]) + 1
    assert f'id="log-{seq}"' in changed.text and "7 hits" in entry(changed.text, seq)
    # The squad was hit: the townhouse it stands in is redrawn on the map too.
    townhouse = pieces(battle)[0]
    assert f'id="map-s{townhouse.pk}"' in changed.text
    now = poller(changed.text)
    # ... and with what that answer gave, either server says "nothing new" (204, no session needed).
    assert phone.get(second, f"{page_path}poll/?" + urlencode(now)).status == 204
    assert phone.get(first, f"{page_path}poll/?" + urlencode(now)).status == 204

    # Undo on the second server; the first server's page shows both entries.
    undone = phone.post(second, f"{page_path}undo/", {"csrfmiddlewaretoken": csrf, "target": "", "confirmed": "1"})
    assert undone.status == 303
    page = phone.get(first, page_path)
    assert page.status == 200
    assert "is-undone" in entry(page.text, seq) and f"Undone by #{seq + 1}" in entry(page.text, seq)
    assert f"Undoes #{seq}" in entry(page.text, seq + 1)
    log = phone.get(second, f"{page_path}log/?before={seq + 2}", headers={"HX-Request": "true"})
    assert log.status == 200 and f'id="log-{seq}"' in log.text and f'id="log-{seq + 1}"' in log.text

    # A double tap whose two POSTs reach different servers at the same instant resolves once.
    form = attack(battle, (6, 5), str(uuid.uuid4()), csrf)
    barrier = threading.Barrier(2)
    answers = [None, None]

    def tap(i, port):
        barrier.wait()
        answers[i] = phone.post(port, f"{page_path}resolve/", form, headers={"HX-Request": "true"})

    threads = [threading.Thread(target=tap, args=(i, port)) for i, port in enumerate((first, second))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    for answer in answers:
        assert answer is not None and answer.status == 200, answer and (answer.status, answer.text[:500])
        assert f"Resolved #{seq + 2}:" in answer.text and "collapses" in answer.text
    assert LogEntry.objects.filter(battle=battle, client_token=form["client_token"]).count() == 1
    assert LogEntry.objects.filter(battle=battle).order_by("-seq").values_list("seq", flat=True).first() == seq + 2

    final = phone.get(second, page_path)
    assert 'data-seq="%d"' % (seq + 2) in final.text
    assert re.search(r'class="map-structure st-collapsed[^"]*"[^>]*data-structure="s%d"' % pieces(battle)[0].pk,
                     final.text)


# What the database holds afterwards ------------------------------------------------------------

def end_state():
    """The demo battle's log, structures, units and counters, with database ids replaced by names
    (a second load of the demo gives new ids) and the timestamps and hashes left out."""
    battle = Battle.objects.get(name=DEMO_BATTLE)
    names = {f"s{s.pk}": s.name for s in Structure.objects.filter(battle=battle)}
    names |= {f"u{u.pk}": f"{u.army.side}:{u.name}" for u in Unit.objects.filter(army__battle=battle).select_related("army")}
    names |= {f"w{w.pk}": w.slug for w in Weapon.objects.all()}

    def named(value):
        return re.sub(r"\b[suw]\d+\b", lambda m: names.get(m.group(0), m.group(0)), repr(value))

    # Client tokens are fresh per run: only whether an entry has one is compared. The setting up's record
    # names the campaign's rows by their ids, which are new with each load of the demo.
    log = [named({**row, "client_token": bool(row["client_token"]),
                  **({"outcome": "the campaign at setup"} if row["action"] == "session_start" else {})})
           for row in LogEntry.objects.filter(battle=battle).order_by("seq").values(
               "seq", "turn", "actor__username", "side", "action", "summary", "inputs", "dice", "outcome", "undone",
               "undoes__seq", "client_token")]
    structures = [{k: v for k, v in row.items() if k != "id" and not k.endswith("_id")}
                  for row in Structure.objects.filter(battle=battle).order_by("name").values()]
    units = list(Unit.objects.filter(army__battle=battle).order_by("army__side", "name").values(
        "name", "models_start", "models_left", "destroyed", "pins", "down", "acted", "incapacitated",
        "morale_check_pending", "x", "y", "army__side", "floor__structure__name", "floor__level"))
    counters = named(Battle.objects.filter(pk=battle.pk).values(
        "version", "map_version", "turn", "upkeep_turn", "sequence", "status").get())
    return {"log": log, "structures": structures, "units": units, "battle": counters}


def test_alternating_between_two_servers_equals_one_server(servers):
    first, second = servers

    call_command("demo", verbosity=0)
    play(first, second)
    alternating = end_state()
    battle = Battle.objects.get(name=DEMO_BATTLE)
    townhouse = pieces(battle)[0]
    assert townhouse.collapsed
    assert LogEntry.objects.filter(battle=battle, action="undo").count() == 1

    # The same requests, all to one server, on a freshly loaded demo.
    call_command("flush", interactive=False, verbosity=0)
    call_command("demo", verbosity=0)
    play(first, first)
    one_server = end_state()

    assert alternating == one_server
