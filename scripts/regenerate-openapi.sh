#!/usr/bin/env bash
# Regenerates the OpenAPI client the tests use (Tests/OpenAPIFixtureClient/Generated) with swift-openapi-generator
# 1.14.3 and fails when it differs from the committed files. The generator is built from a clone in a scratch folder
# outside the repository (its build plugin is too heavy for the ordinary CI run, so the generated code is committed).
#
#   scripts/regenerate-openapi.sh            # check: exit 1 on any difference
#   scripts/regenerate-openapi.sh --write    # replace the committed files with the regenerated ones
#
# GENERATOR_REPO (default /opt/swift-packages/apple/swift-openapi-generator.git, else GitHub) and SCRATCH (default a
# new temporary folder; reused when given, so a second run skips the build) may be set.
set -euo pipefail

VERSION=1.14.3
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
FIXTURE="$ROOT/Tests/OpenAPIFixtureClient"
COMMITTED="$FIXTURE/Generated"
if [[ -z "${GENERATOR_REPO:-}" ]]; then
    if [[ -d /opt/swift-packages/apple/swift-openapi-generator.git ]]; then
        GENERATOR_REPO=/opt/swift-packages/apple/swift-openapi-generator.git
    else
        GENERATOR_REPO=https://github.com/apple/swift-openapi-generator.git
    fi
fi
SCRATCH="${SCRATCH:-$(mktemp -d)}"
case "$SCRATCH" in
"$ROOT" | "$ROOT"/*)
    echo "SCRATCH must be outside the repository" >&2
    exit 2
    ;;
esac

GENERATOR_DIR="$SCRATCH/swift-openapi-generator-$VERSION"
if [[ ! -d "$GENERATOR_DIR" ]]; then
    git clone --quiet --depth 1 --branch "$VERSION" "$GENERATOR_REPO" "$GENERATOR_DIR"
fi
(cd "$GENERATOR_DIR" && swift build --product swift-openapi-generator >&2)
GENERATOR="$GENERATOR_DIR/.build/debug/swift-openapi-generator"

OUT="$SCRATCH/generated"
rm -rf "$OUT"
mkdir -p "$OUT"
"$GENERATOR" generate "$FIXTURE/openapi.yaml" --config "$FIXTURE/openapi-generator-config.yaml" \
    --output-directory "$OUT" >&2
# The layout lint skips generated code: swift-format would break its `#if compiler(...)` attribute lines.
for file in "$OUT"/*.swift; do
    { echo "// swift-format-ignore-file"; cat "$file"; } >"$file.tmp"
    mv "$file.tmp" "$file"
done

if [[ "${1:-}" == "--write" ]]; then
    rm -f "$COMMITTED"/*.swift
    cp "$OUT"/*.swift "$COMMITTED"/
    echo "wrote $(ls "$OUT" | wc -l) files to $COMMITTED"
    exit 0
fi
if diff -ru "$COMMITTED" "$OUT"; then
    echo "the committed OpenAPI client is current"
else
    echo "the committed OpenAPI client differs from swift-openapi-generator $VERSION's output; run $0 --write" >&2
    exit 1
fi
