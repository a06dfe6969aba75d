# Shared by scripts/run and scripts/test: a project venv and the system packages.
VENV="${RECKON_VENV:-.venv}"
PYTHON="${PYTHON:-python3}"

ensure_venv() {
  local requirements="$1"
  if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
  fi
  local stamp="$VENV/.installed-$(basename "$requirements")"
  local key
  key="$(cat requirements*.txt pyproject.toml | sha256sum | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$key" ]; then
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    "$VENV/bin/python" -m pip install --quiet -r "$requirements"
    "$VENV/bin/python" -m pip install --quiet --no-deps --no-build-isolation -e .
    echo "$key" > "$stamp"
  fi
  if ! command -v npm >/dev/null 2>&1; then
    echo "npm is needed once to fetch the Pyodide core; installing it with apt-get" >&2
    apt_install npm
  fi
}

ensure_chromium() {
  if [ -z "${RECKON_CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1; then
    echo "installing Chromium for the browser tests (apt-get)" >&2
    apt_install chromium
  fi
}

# The relay's Redis-backed limits are tested against a real redis-server (Debian's).
ensure_redis() {
  if ! command -v redis-server >/dev/null 2>&1; then
    echo "installing redis-server for the relay's limit tests (apt-get)" >&2
    apt_install redis-server
  fi
}

# scripts/run serves without Chromium; only `reckon eval` and reckon.Session need it.
note_missing_chromium() {
  if [ -z "${RECKON_CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1; then
    echo "note: \`reckon eval\` and reckon.Session drive headless Chromium, and none was found:" \
      "sudo apt-get install chromium (scripts/test does), or set RECKON_CHROMIUM=/path" >&2
  fi
}

apt_install() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

# The JS checks' tools (typescript, eslint: exact versions in package-lock.json), put
# in node_modules by npm ci once, and again only when the lock file changes.
ensure_node_tools() {
  local stamp="node_modules/.installed-lock"
  local key
  key="$(sha256sum package-lock.json | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$key" ]; then
    npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null
    echo "$key" > "$stamp"
  fi
}
