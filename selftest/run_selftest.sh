#!/usr/bin/env bash
# Run the tri-agent self-test against the installed `tri-agent` command.
# Prints one line per check and ends with "N passed, M failed"; exits non-zero on any failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-$(command -v python3 || command -v python)}"
exec "$python" "$here/selftest.py" "$@"
