#!/usr/bin/env bash
# Regenerates the README's picture from a real run: the quick profile's RunAll into artifacts/pictures/, then its report.html
# opened in headless Chromium (Debian's) at 1,280 × 800 and saved as docs/report-top.png.
#   bash scripts/pictures.sh               the quick run, then the picture
#   bash scripts/pictures.sh --no-run      the picture of the last such run
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
artifacts="$root/artifacts/pictures"
report="$artifacts/results/report.html"

if [ ! -x /usr/bin/chromium ]; then
  echo "scripts/pictures.sh: Chromium is not installed; as root: apt-get install -y --no-install-recommends chromium" >&2
  exit 1
fi
if [ "${1:-}" != "--no-run" ]; then
  dotnet msbuild build.proj -t:RunAll -p:Profile=Quick "-p:ArtifactsDir=$artifacts/"
fi
if [ ! -f "$report" ]; then
  echo "scripts/pictures.sh: no report at $report; run without --no-run first" >&2
  exit 1
fi

profile=$(mktemp -d "$root/artifacts/chromium-XXXXXX")
trap 'rm -rf "$profile"' EXIT
# The background-networking flags keep Chromium from calling out of this closed network at every start.
timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$profile" --window-size=1280,800 \
  --screenshot="$root/docs/report-top.png" "file://$report" >/dev/null 2>&1
echo "scripts/pictures.sh: docs/report-top.png from $report"
