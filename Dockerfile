# The Holon agent image: `holon agent` with Python, git and the engine CLIs, started by
# `holon run --image` and `holon serve --image` as the agent of the Agent Contract.
# docs/agent-image.md says how to build it, use it and give it model keys.
#
# Build it from a checkout, the wheel first (the build installs the wheel, never the source tree):
#
#   rm -rf dist && pip wheel --no-deps -w dist . && docker build -t holon-agent .
#
# Build arguments:
#   BASE                 a Debian bookworm image with python3 and its venv module
#                        (default python:3.11-slim-bookworm)
#   OS_PACKAGES=0        no apt-get: the base already has git, ca-certificates and bash
#   ENGINE_CLIS=0        no Node.js, npm or engine CLIs (the builtin and replay engines need none)
#   CLAUDE_CODE_VERSION  the @anthropic-ai/claude-code version installed (pinned)
#   CODEX_VERSION        the @openai/codex version installed (pinned)
#   OFFLINE=1            Holon's dependencies from the wheels in dist/ only, never from an index
#
# No secret is baked in: model keys reach the container at run time as environment variables
# (`holon run --secret-env ANTHROPIC_API_KEY`).

ARG BASE=python:3.11-slim-bookworm

# Holon in a virtual environment of its own, made in a stage apart so that the wheels it is
# installed from never become a layer of the image.
FROM ${BASE} AS holon
ARG OFFLINE=0
COPY dist/ /tmp/wheels/
# The wheel is named by its file: an index may hold an unrelated project called "holon".
RUN if [ "$OFFLINE" = 1 ]; then set -- --no-index; else set --; fi \
    && python3 -m venv /opt/holon \
    && /opt/holon/bin/pip install --no-cache-dir --disable-pip-version-check "$@" \
        --find-links /tmp/wheels /tmp/wheels/holon-*.whl

FROM ${BASE}
ARG OS_PACKAGES=1
ARG ENGINE_CLIS=1
ARG CLAUDE_CODE_VERSION=2.1.328
ARG CODEX_VERSION=0.169.0

LABEL org.opencontainers.image.title="holon-agent" \
      org.opencontainers.image.description="Holon's reference agent (holon agent) with git and engine CLIs" \
      org.opencontainers.image.licenses="MIT"

# Debian's own versions, not pinned: bookworm's security updates replace them, and a pin would
# make the build fail the day an update lands.
# hadolint ignore=DL3008
RUN if [ "$OS_PACKAGES" = 1 ]; then \
        apt-get update \
        && apt-get install -y --no-install-recommends bash ca-certificates git \
        && if [ "$ENGINE_CLIS" = 1 ]; then \
            apt-get install -y --no-install-recommends nodejs npm; \
        fi \
        && rm -rf /var/lib/apt/lists/*; \
    fi

RUN if [ "$ENGINE_CLIS" = 1 ]; then \
        npm install --global --omit=dev --no-audit --no-fund \
            "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}" \
            "@openai/codex@${CODEX_VERSION}" \
        && npm cache clean --force; \
    fi

# The runner starts the container as the invoking user's uid, which the image may not know:
# HOME is a directory any uid can write (the CLIs keep their settings there), and git trusts the
# workspace the runner mounts whoever owns it.
RUN useradd --create-home --home-dir /home/holon --uid 1000 --shell /bin/bash holon \
    && chmod 1777 /home/holon \
    && mkdir -p /holon/input /holon/workspace /holon/output \
    && chown holon:holon /holon/workspace /holon/output \
    && git config --system --add safe.directory /holon/workspace

COPY --from=holon /opt/holon /opt/holon
ENV PATH=/opt/holon/bin:$PATH \
    HOME=/home/holon \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

USER 1000:1000
WORKDIR /holon/workspace
ENTRYPOINT ["holon", "agent"]
