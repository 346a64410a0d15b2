# Installs the system packages Backbeat needs, when any is missing. Source this file, then call install_deps.
install_deps() {
  local packages="librdkafka-dev libzstd-dev postgresql postgresql-15-hll kcat pkg-config python3 python3-pip curl chromium"
  local missing=""
  for p in $packages; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    echo "installing:$missing"
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
  fi
  # The schema test validates docs/schemas with Python's jsonschema.
  python3 -c 'import jsonschema' 2>/dev/null || python3 -m pip install -q jsonschema \
    || python3 -m pip install -q --break-system-packages jsonschema
}
