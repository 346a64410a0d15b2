# Prints what a run builds with and runs against, so that a log says it: the toolchain, every Swift package resolved
# (transitive ones too: Package.resolved is not committed here, and Package.swift pins only the direct ones),
# PostgreSQL and its hll package, librdkafka (whose mock cluster is the suite's broker) and kcat.
# Source after postgres.sh; call print_versions after a build has resolved the packages.
print_versions() {
  echo "=== versions ==="
  swift --version 2>&1 | grep -m 1 'Swift version' || true
  echo "PostgreSQL: $("$(pg_bindir)/postgres" --version | sed 's/^postgres (PostgreSQL) //'), $(pg_hll_package) $(dpkg-query -W -f '${Version}' "$(pg_hll_package)" 2>/dev/null || echo 'not installed')"
  echo "librdkafka: $(pkg-config --modversion rdkafka 2>/dev/null || echo 'not installed') (its mock cluster is the tests' broker)"
  echo "kcat: $(dpkg-query -W -f '${Version}' kcat 2>/dev/null || echo 'not installed')"
  python3 - <<'PY'
import json
try:
    pins = json.load(open("Package.resolved"))["pins"]
except OSError:
    pins = []
print("Swift packages resolved: " + (", ".join(f'{p["identity"]} {p["state"].get("version") or p["state"].get("revision")}'
                                             for p in sorted(pins, key=lambda p: p["identity"])) or "none yet"))
PY
  echo "================"
}
