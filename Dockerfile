# syntax=docker/dockerfile:1
# The facade's container image: one static binary (CGO_ENABLED=0, -trimpath)
# and the CA bundle for an HTTPS upstream, on an empty base, run as the
# unprivileged user 65532. `docker build -t facade .` builds it; the target
# `restserver` is the local REST service for trying it (deploy/compose.yaml).
# CI builds the same images without a daemon (deploy/imagebuild, whose test
# checks its image config against the final stages here): docs/deploying.md.
#
# No HEALTHCHECK: a scratch image has no shell or curl to run one; the
# orchestrator probes GET /healthz (liveness) and GET /readyz (readiness)
# over HTTP, as deploy/k8s does.

FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ENV CGO_ENABLED=0
RUN go build -trimpath -ldflags="-s -w" -o /out/facade . \
 && go build -trimpath -ldflags="-s -w" -o /out/restserver ./cmd/restserver

# The local REST service on in-memory demo data: docker build --target restserver.
FROM scratch AS restserver
COPY --from=build /out/restserver /restserver
USER 65532:65532
ENV RESTSERVER_ADDR=:8081
EXPOSE 8081
ENTRYPOINT ["/restserver"]
CMD ["-db", ":memory:"]

# The facade (the default target). Without UPSTREAM_URL it runs the demo on
# in-memory data (-data-dir= : the root is read-only and holds no directory
# it may write); with it, the arguments are ignored.
FROM scratch AS facade
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/facade /facade
USER 65532:65532
ENV ADDR=:8080
EXPOSE 8080
ENTRYPOINT ["/facade"]
CMD ["-data-dir="]
