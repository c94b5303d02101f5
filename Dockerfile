# The weir command as a container image, for deploy/kubernetes/:
#
#   docker build -t weir:latest .
#
# A program of your own built on cli.Main (docs/embedding.md) builds the
# same way with its own main package in place of ./cmd/weir.

# Build a static binary: no cgo, so it runs on an image without libc.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The time-zone database is built into the binary (timetzdata).
RUN CGO_ENABLED=0 go build -trimpath -tags timetzdata -ldflags="-s -w" -o /out/weir ./cmd/weir

# A small runtime image: the binary and the build stage's CA certificates
# (for S3 over TLS), run as an unprivileged user (uid 65532).
FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/weir /usr/local/bin/weir
USER 65532:65532
# 7070: a coordinator's control plane (--listen); 7071: a worker's data
# plane (--listen); 8081: the dashboard and metrics (--http).
EXPOSE 7070 7071 8081
ENTRYPOINT ["/usr/local/bin/weir"]
