# Quizmaster bot image. Build: docker build -t quizmaster .
# Run:   docker run -e DISCORD_TOKEN=... -v quiz-data:/data quizmaster
# The base image is pinned by digest so a rebuild gets the same system. To move to a
# newer one: docker buildx imagetools inspect python:3.11-slim (the "Digest:" line),
# put it here, rebuild and run the tests in the image.
FROM python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    QUIZ_DATA_DIR=/data

# The health/metrics/dashboard port listens on every interface in the image, so
# that Docker can publish it; outside a container it defaults to 127.0.0.1.
# Publish it only behind a proxy you trust, or set QUIZ_HEALTH_HOST=127.0.0.1.
ENV QUIZ_HEALTH_HOST=0.0.0.0

RUN groupadd --system --gid 10001 quiz \
    && useradd --system --uid 10001 --gid quiz --home-dir /app --no-create-home \
        --shell /usr/sbin/nologin quiz \
    && mkdir -p /data \
    && chown quiz:quiz /data

WORKDIR /app

# The pinned runtime set first (requirements.lock, `make lock`), then the project alone.
COPY requirements.lock ./
RUN pip install --no-cache-dir -r requirements.lock
# hatch_build.py compiles the message catalogs (bot/locale) as the package installs.
COPY pyproject.toml README.md hatch_build.py ./
COPY bot/ ./bot/
COPY questions/ ./questions/
RUN pip install --no-cache-dir --no-deps . && pip check

USER 10001:10001
VOLUME /data
# The working folder is the data volume, which the bot's user owns: what it saves
# in the current folder (an Anki export from the console) has somewhere to go.
WORKDIR /data

# 8080: GET /healthz (QUIZ_HEALTH_PORT); 3000: Slack HTTP mode.
EXPOSE 8080 3000

# Asks /healthz on QUIZ_HEALTH_PORT, whatever it is set to (0: nothing to ask).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-m", "bot.healthcheck"]

CMD ["quizmaster", "run"]
