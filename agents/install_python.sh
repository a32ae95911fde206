#!/bin/sh
# Installs the pinned Python agent CLIs (requirements.txt: mini-swe-agent) into agents/venv.
#
# The venv is made with the system Python (/usr/bin/python3 when it exists) because the local
# sandbox binds only /usr (and this directory, read-only): a venv whose interpreter lives
# elsewhere (pyenv, conda) would not start inside it. Re-running is cheap (pip finds every pin
# satisfied); a changed pin is installed over the old one.
set -eu
cd "$(dirname "$0")"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
[ -x venv/bin/python ] || "$py" -m venv venv
venv/bin/pip install --quiet --disable-pip-version-check --no-input -r requirements.txt
