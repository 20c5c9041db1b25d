"""Redoubt settings, read from the environment.

Locally nothing needs setting: DEBUG is on and the database is an SQLite file in the
project folder. Production sets DEBUG=0, SECRET_KEY, ALLOWED_HOSTS and DATABASE_URL.
"""

import os
import zoneinfo
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent

# A known, public value: only acceptable while DEBUG is on (checked below).
DEFAULT_SECRET_KEY = "insecure-local-development-key-do-not-use-in-production"


def env_bool(name, default):
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean; use 1/0, true/false, yes/no or on/off.")


def env_int(name, default):
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number.") from None


def env_list(name, default):
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


DEBUG = env_bool("DEBUG", True)
SECRET_KEY = os.environ.get("SECRET_KEY") or DEFAULT_SECRET_KEY
if not DEBUG and SECRET_KEY == DEFAULT_SECRET_KEY:
    raise ImproperlyConfigured("SECRET_KEY is not set: production (DEBUG=0) refuses to start with the default secret.")
if not DEBUG and len(SECRET_KEY) < 50:
    raise ImproperlyConfigured("SECRET_KEY is too short: use at least 50 random characters in production.")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"] if DEBUG else [])
if not DEBUG and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS is not set: list the host names this server answers to (comma-separated).")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
CSRF_FAILURE_VIEW = "config.views.csrf_failure"
# `manage.py demo` gives its five accounts the README's public password only in development. With
# DEBUG=0 (a server others can reach: the demo is also how the reference data gets loaded there)
# each new demo account gets a random password, printed once by the command.
DEMO_PUBLIC_PASSWORD = DEBUG

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "apps.campaigns",
    "apps.structures",
    "apps.armies",
    "apps.battles",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "config.middleware.HtmxSignInMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.csp",
            ],
        },
    },
]


# SQLite (bin/run's database): a writing transaction takes the write lock when it begins and waits up
# to 20 s for it. Deferred, two simultaneous writers (two organisers pressing "Start a campaign" at once)
# each read first, then one of them failed with "database is locked".
SQLITE_OPTIONS = {"transaction_mode": "IMMEDIATE", "timeout": 20}


def database_from_env():
    url = os.environ.get("DATABASE_URL", "").strip()
    if not url:
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": BASE_DIR / "redoubt.sqlite3", "OPTIONS": SQLITE_OPTIONS}
    try:
        # Health checks cost a "SELECT 1" round trip on every request, which would double the cost of
        # the poll every phone sends every two seconds. Without them, a connection broken by a
        # database restart fails one request per worker and is then replaced.
        config = dj_database_url.parse(url, conn_max_age=env_int("CONN_MAX_AGE", 600),
                                       conn_health_checks=env_bool("CONN_HEALTH_CHECKS", False))
    except ValueError as exc:
        raise ImproperlyConfigured(f"DATABASE_URL is malformed ({exc}); expected e.g. postgres://user@host:5432/redoubt.") from None
    if not config.get("ENGINE"):
        raise ImproperlyConfigured("DATABASE_URL names an unknown database scheme; use postgres://user@host:5432/name.")
    if config["ENGINE"] == "django.db.backends.sqlite3":
        config.setdefault("OPTIONS", {}).update(SQLITE_OPTIONS)
    if config["ENGINE"] == "django.db.backends.postgresql" and env_bool("DB_PREPARED", True):
        config.setdefault("OPTIONS", {}).update(server_side_binding=True, prepare_threshold=2)
    return config


DATABASES = {"default": database_from_env()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# The stock widgets drawn in Python, to the character what their templates draw (config/widgets.py says why).
FORM_RENDERER = "config.widgets.PythonWidgets"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-gb"


def env_time_zone(name, default):
    # The battle log's times and invitations' expiry are shown in it: a club's host sets its own.
    raw = os.environ.get(name, "").strip() or default
    try:
        zoneinfo.ZoneInfo(raw)
    except (ValueError, zoneinfo.ZoneInfoNotFoundError):
        raise ImproperlyConfigured(f"{name}={raw!r} is not a time zone; use a name such as Europe/London.") from None
    return raw


TIME_ZONE = env_time_zone("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# The largest campaign file the import takes (apps/campaigns/export.py, docs/formats.md): the download
# writes whatever the campaign holds, so this must stay above what a club's campaign reaches; a worker
# importing one needs about four times the file's size in memory (bench/README.md).
CAMPAIGN_FILE_MAX_BYTES = env_int("CAMPAIGN_FILE_MAX_BYTES", 100_000_000)

# Every script and style is served from our own origin or carries the per-request nonce.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF, CSP.NONCE],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "object-src": [CSP.NONE],
}

SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    # Only a local `docker compose up` over plain HTTP turns these off.
    SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
    CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

# Development prints mail (password resets) to the console; production sends it over SMTP.
if DEBUG:
    MAILERS = {"default": {"BACKEND": "django.core.mail.backends.console.EmailBackend"}}
else:
    MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {
                "host": os.environ.get("EMAIL_HOST", "localhost"),
                "port": env_int("EMAIL_PORT", 587),
                "username": os.environ.get("EMAIL_HOST_USER", ""),
                "password": os.environ.get("EMAIL_HOST_PASSWORD", ""),
                "use_tls": env_bool("EMAIL_USE_TLS", True),
            },
        }
    }
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "Redoubt <redoubt@localhost>")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}
