#!/usr/bin/env bash
# The README's test command: installs and starts what the tests need, runs them, prints "N passed, N failed".
#   - the .NET SDK must be on PATH (it is on this project's machines);
#   - PostgreSQL: installed from apt if missing, a private cluster started on 127.0.0.1 and stopped afterwards;
#   - RabbitMQ: rabbitmq-server installed from apt if missing; the tests start and stop their own node;
#   - Chromium: installed from apt if missing, to open the HTML report headless.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
results="$root/artifacts/test-results"
rm -rf "$results"
mkdir -p "$results"

if ! command -v dotnet >/dev/null; then
  echo "scripts/test.sh: the .NET SDK (dotnet) is not on PATH" >&2
  exit 1
fi

# RabbitMQ: the tests start their own private node from Debian's rabbitmq-server (never a skipped test).
if [ ! -x /usr/lib/rabbitmq/bin/rabbitmq-server ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "scripts/test.sh: rabbitmq-server is not installed; as root: apt-get install -y --no-install-recommends rabbitmq-server" >&2
    exit 1
  fi
  echo "scripts/test.sh: installing rabbitmq-server (apt)" >&2
  # Keep the package's own service from starting: the suite runs a private node of its own.
  policy_added=
  if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; policy_added=1; fi
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends rabbitmq-server) >&2
  [ -n "$policy_added" ] && rm -f /usr/sbin/policy-rc.d
fi

# ss (iproute2) lets the tests check which addresses the broker listens on.
if ! command -v ss >/dev/null && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends iproute2) >&2
fi

# hey (Debian's) loads the ThreadPoolStarvation lab's app in the tests.
if ! command -v hey >/dev/null; then
  if [ "$(id -u)" != 0 ]; then
    echo "scripts/test.sh: hey is not installed; as root: apt-get install -y hey" >&2
    exit 1
  fi
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends hey) >&2
fi

# curl (Debian's) calls the REST transport's endpoint and OpenAPI document as a client no one here wrote, in the tests.
if ! command -v curl >/dev/null; then
  if [ "$(id -u)" != 0 ]; then
    echo "scripts/test.sh: curl is not installed; as root: apt-get install -y --no-install-recommends curl" >&2
    exit 1
  fi
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends curl) >&2
fi

# Chromium (Debian's) opens the HTML report in the tests.
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "scripts/test.sh: chromium is not installed; as root: apt-get install -y --no-install-recommends chromium" >&2
    exit 1
  fi
  echo "scripts/test.sh: installing chromium (apt)" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium) >&2
fi

IT_PG_CONNSTRING=$(bash scripts/postgres.sh start) || { echo "scripts/test.sh: could not start PostgreSQL" >&2; exit 1; }
export IT_PG_CONNSTRING
trap 'bash scripts/postgres.sh stop' EXIT

# Release: the child builds run the optimised tasks and hosts, as RunAll does.
dotnet test tests/IntegrationTasks.Tests/IntegrationTasks.Tests.csproj -c Release -nologo \
  --logger "trx;LogFileName=tests.trx" --logger "console;verbosity=normal" --results-directory "$results"
status=$?

trx="$results/tests.trx"
if [ -f "$trx" ]; then
  counters=$(grep -o '<Counters [^>]*>' "$trx" | head -n 1)
  passed=$(sed -n 's/.* passed="\([0-9]*\)".*/\1/p' <<<"$counters")
  total=$(sed -n 's/.* total="\([0-9]*\)".*/\1/p' <<<"$counters")
  # Every test that did not pass counts as failed: nothing here may be skipped.
  echo "${passed:-0} passed, $(( ${total:-0} - ${passed:-0} )) failed"
else
  echo "0 passed, 1 failed"
  [ $status -eq 0 ] && status=1
fi
exit $status
