# Quizmaster bot image. Build: docker build -t quizmaster .
# Run:   docker run -e DISCORD_TOKEN=... -v quiz-data:/data quizmaster
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    QUIZ_DATA_DIR=/data

RUN groupadd --system --gid 10001 quiz \
    && useradd --system --uid 10001 --gid quiz --home-dir /app --no-create-home \
        --shell /usr/sbin/nologin quiz \
    && mkdir -p /data \
    && chown quiz:quiz /data

WORKDIR /app

COPY pyproject.toml README.md ./
COPY bot/ ./bot/
COPY questions/ ./questions/
RUN pip install --no-cache-dir .

USER 10001:10001
VOLUME /data

# 8080: GET /healthz (QUIZ_HEALTH_PORT); 3000: Slack HTTP mode.
EXPOSE 8080 3000

HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=3)"]

CMD ["quizmaster", "run"]
