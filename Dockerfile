# Redoubt production image: gunicorn serving Django, static files collected and served by WhiteNoise.
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1

WORKDIR /app
COPY requirements.lock .
RUN pip install -r requirements.lock

COPY . .
# collectstatic needs settings that load; these throwaway values never reach a running container.
RUN DEBUG=0 SECRET_KEY=collectstatic-only-$(head -c 48 /dev/urandom | od -An -tx1 | tr -d ' \n') \
    ALLOWED_HOSTS=localhost python manage.py collectstatic --no-input \
    && useradd --system --uid 10001 --home-dir /app redoubt \
    && chown -R redoubt /app

USER redoubt
EXPOSE 8000
ENV DEBUG=0
CMD ["sh", "-c", "python manage.py migrate --no-input && exec gunicorn config.wsgi --bind 0.0.0.0:8000 --workers ${WEB_CONCURRENCY:-3} --timeout 300 --access-logfile -"]
