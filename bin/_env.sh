# Shared by bin/run and bin/test: find Python 3.12+, create .venv and install the locked
# dependencies when they changed. Sourced, not run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

find_python() {
    local candidate
    for candidate in python3.12 python3.13 python3.14 python3 python; do
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

if [ ! -x .venv/bin/python ]; then
    PY=$(find_python) || {
        echo "redoubt: Python 3.12 or newer is needed (sudo apt install python3.12 python3.12-venv, or pyenv)." >&2
        exit 1
    }
    echo "Creating .venv with $($PY --version)"
    "$PY" -m venv .venv || {
        echo "redoubt: could not create a virtual environment; on Debian/Ubuntu: sudo apt install python3-venv" >&2
        exit 1
    }
fi

install_locked() {
    # Two statements: bash expands a `local` line's words before it assigns any of them.
    local lock=$1
    local stamp=".venv/.installed-$(basename "$lock")"
    if [ ! -f "$stamp" ] || [ "$lock" -nt "$stamp" ]; then
        echo "Installing dependencies from $lock"
        .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$lock"
        touch "$stamp"
    fi
}
