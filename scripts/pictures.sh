#!/usr/bin/env bash
# Regenerates the README's front door from one real run: the main job's RunAll into artifacts/front-door/, then from its results
# the README's findings, docs/results.md's current results and docs/report-top.json (date, commit, command), and its
# report.html opened in headless Chromium (Debian's) at 1,280 × 800, saved as docs/report-top.png. The run's dated entry in
# the archive of docs/results.md is written by hand (date and commit as stamped).
#   bash scripts/pictures.sh               the run, then the findings and the picture
#   bash scripts/pictures.sh --no-run      the findings and the picture of the last such run
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
artifacts="$root/artifacts/front-door"
report="$artifacts/results/report.html"
command="dotnet msbuild build.proj -t:RunAll"

if [ ! -x /usr/bin/chromium ]; then
  echo "scripts/pictures.sh: Chromium is not installed; as root: apt-get install -y --no-install-recommends chromium" >&2
  exit 1
fi
if [ "${1:-}" != "--no-run" ]; then
  $command "-p:ArtifactsDir=$artifacts/"
fi
if [ ! -f "$report" ]; then
  echo "scripts/pictures.sh: no report at $report; run without --no-run first" >&2
  exit 1
fi
dotnet msbuild build.proj -t:FrontDoor -nologo "-p:FrontDoorResults=$artifacts/results/results.json" "-p:FrontDoorCommand=$command"

profile=$(mktemp -d "$root/artifacts/chromium-XXXXXX")
trap 'rm -rf "$profile"' EXIT
# The background-networking flags keep Chromium from calling out to its update and sync services at every start.
timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$profile" --window-size=1280,800 \
  --screenshot="$root/docs/report-top.png" "file://$report" >/dev/null 2>&1
echo "scripts/pictures.sh: README findings, docs/report-top.json and docs/report-top.png from $report"
