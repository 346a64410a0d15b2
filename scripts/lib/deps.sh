# Installs the system packages Backbeat needs, when any is missing. Source this file, then call install_deps
# (everything scripts/test needs) or install_build_deps (what building needs: the Dockerfile uses this one).
. "$(dirname "${BASH_SOURCE[0]}")/postgres.sh"

# Installs the Debian packages given that are not installed yet.
install_packages() {
  local missing=""
  for p in "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    echo "installing:$missing"
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
  fi
}

install_build_deps() {
  install_packages librdkafka-dev libzstd-dev libxxhash-dev pkg-config
}

install_deps() {
  install_build_deps
  # PostgreSQL and the broker's client for the integration tests, Chromium for the web dashboard test,
  # docker-compose to validate docker-compose.yml, PyYAML to read docs/openapi.yaml (OpenAPIDocumentTests), tzdata:
  # the IANA zone database in /usr/share/zoneinfo that the service, PostgreSQL and the zone tests' Python all read.
  install_packages postgresql kcat python3 python3-pip python3-yaml curl chromium docker-compose tzdata
  # postgresql-hll for the PostgreSQL major version Debian installed (postgresql-15-hll on bookworm).
  local hll
  hll=$(pg_hll_package) || return 1
  install_packages "$hll"
  # The schema test validates docs/schemas with Python's jsonschema.
  python3 -c 'import jsonschema' 2>/dev/null || python3 -m pip install -q jsonschema \
    || python3 -m pip install -q --break-system-packages jsonschema
}
