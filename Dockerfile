# The sld image: API, worker and CLI in one (docker-compose.yml picks the command).
FROM python:3.11-slim

WORKDIR /srv/sld
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1

COPY pyproject.toml README.md ./
COPY agent ./agent
COPY app ./app
COPY tasks ./tasks
COPY migrations ./migrations
RUN pip install .

# Runs as an unprivileged user; the SQLite default (unused with PostgreSQL) would live in /data.
RUN useradd --create-home sld && mkdir /data && chown sld /data
USER sld
WORKDIR /data
EXPOSE 8000
CMD ["sld", "serve", "--host", "0.0.0.0", "--port", "8000"]
