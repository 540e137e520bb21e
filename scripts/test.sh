#!/usr/bin/env bash
# The README's test command: installs and starts what the tests need, runs them, prints "N passed, N failed".
#   - the .NET SDK must be on PATH (it is on this project's machines);
#   - PostgreSQL: installed from apt if missing, a private cluster started on 127.0.0.1 and stopped afterwards;
#   - MariaDB: the same, a private server (scripts/mariadb.sh);
#   - RabbitMQ: rabbitmq-server installed from apt if missing; the tests start and stop their own node;
#   - NATS and Redis: nats-server and redis-server installed from apt if missing; the tests start and stop their own servers;
#   - zeep, grpcio, protoc: installed from apt if missing, for the clients generated from the WSDL and records.proto;
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

# Installs a Debian package when FILE is missing: an absolute path, a command on PATH, or "python3:MODULE" (a module Debian's
# python3 imports); as root only, else says the command and stops.
# With "no-service", the package's own service is kept from starting (the suite runs private servers of its own).
need_package() {
  local file=$1 package=$2 service=${3:-}
  case "$file" in
    python3:*) /usr/bin/python3 -c "import ${file#python3:}" 2>/dev/null && return 0 ;;
    /*) [ -e "$file" ] && return 0 ;;
    *) command -v "$file" >/dev/null && return 0 ;;
  esac
  if [ "$(id -u)" != 0 ]; then
    echo "scripts/test.sh: $package is not installed; as root: apt-get install -y --no-install-recommends $package" >&2
    exit 1
  fi
  echo "scripts/test.sh: installing $package (apt)" >&2
  local policy_added=
  if [ "$service" = no-service ] && [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; policy_added=1
  fi
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$package") >&2
  [ -n "$policy_added" ] && rm -f /usr/sbin/policy-rc.d
  return 0
}

# The brokers: the tests start their own private RabbitMQ node, nats-server and redis-server from Debian's packages (never a
# skipped test).
need_package /usr/lib/rabbitmq/bin/rabbitmq-server rabbitmq-server no-service
need_package /usr/sbin/nats-server nats-server no-service
need_package /usr/bin/redis-server redis-server no-service
# ssh and sshd: the tests drive "other machines" through a private sshd of their own (Debian's, its service never started).
need_package ssh openssh-client
need_package /usr/sbin/sshd openssh-server no-service
# ss (iproute2) lets the tests check which addresses the brokers listen on.
need_package ss iproute2
# hey loads the ThreadPoolStarvation lab's app in the tests.
need_package hey hey
# curl calls the REST transport's endpoint and OpenAPI document as a client the project did not write, in the tests.
need_package curl curl
# Clients the project did not write, from the published contracts alone: zeep builds a SOAP client from the WSDL; protoc and gRPC's
# Python plugin generate stubs from records.proto (Debian's Python runs them).
need_package python3:zeep python3-zeep
need_package python3:grpc python3-grpcio
need_package python3:google.protobuf python3-protobuf
need_package /usr/bin/protoc protobuf-compiler
need_package /usr/bin/grpc_python_plugin protobuf-compiler-grpc
need_package /usr/include/google/protobuf/timestamp.proto libprotobuf-dev
# Chromium opens the HTML report in the tests.
need_package /usr/bin/chromium chromium

# The tests start hundreds of short .NET processes (builds, servers, clients) on few cores; by default each begins re-compiling
# its hot methods in the background a tenth of a second in, work a process of a few seconds never earns back. A later start
# halves the suite's CPU time; what the tests check does not depend on it. The runtime reads the value as hexadecimal: 4,096 ms.
export DOTNET_TC_CallCountingDelayMs=1000

IT_PG_CONNSTRING=$(bash scripts/postgres.sh start) || { echo "scripts/test.sh: could not start PostgreSQL" >&2; exit 1; }
export IT_PG_CONNSTRING
trap 'bash scripts/postgres.sh stop' EXIT
# MariaDB: installed from apt if missing, a private server on 127.0.0.1 started for the tests and stopped afterwards.
IT_MARIADB_CONNSTRING=$(bash scripts/mariadb.sh start) || { echo "scripts/test.sh: could not start MariaDB" >&2; exit 1; }
export IT_MARIADB_CONNSTRING
trap 'bash scripts/postgres.sh stop; bash scripts/mariadb.sh stop' EXIT

# Release: the child builds run the optimised tasks and hosts, as RunAll does.
dotnet test tests/IntegrationTasks.Tests/IntegrationTasks.Tests.csproj -c Release -nologo \
  --logger "trx;LogFileName=tests.trx" --logger "console;verbosity=normal" --results-directory "$results"
status=$?

trx="$results/tests.trx"
if [ -f "$trx" ]; then
  counters=$(grep -o '<Counters [^>]*>' "$trx" | head -n 1)
  passed=$(sed -n 's/.* passed="\([0-9]*\)".*/\1/p' <<<"$counters")
  total=$(sed -n 's/.* total="\([0-9]*\)".*/\1/p' <<<"$counters")
  # The tests that did not pass, again at the end, where a reader of the output's tail sees them.
  python3 - "$trx" <<'PY' || true
import sys, xml.etree.ElementTree as ET
ns = {"t": "http://microsoft.com/schemas/VisualStudio/TeamTest/2010"}
for result in ET.parse(sys.argv[1]).getroot().iterfind(".//t:UnitTestResult", ns):
    if result.get("outcome") != "Passed":
        message = result.find("t:Output/t:ErrorInfo/t:Message", ns)
        text = (message.text or "").strip().splitlines() if message is not None else []
        print(f"not passed: {result.get('testName')} ({result.get('outcome')}): {' '.join(text)[:600]}")
PY
  # Every test that did not pass counts as failed: nothing here may be skipped.
  echo "${passed:-0} passed, $(( ${total:-0} - ${passed:-0} )) failed"
else
  echo "0 passed, 1 failed"
  [ $status -eq 0 ] && status=1
fi
exit $status
