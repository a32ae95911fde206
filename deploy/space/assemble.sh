#!/usr/bin/env bash
# Fills a clone of a Hugging Face Docker Space with this project, ready to push:
#
#   git clone https://huggingface.co/spaces/<owner>/<space> space
#   deploy/space/assemble.sh space
#   cd space && git add -A && git commit -m "rollgate $(git -C .. rev-parse --short HEAD)" && git push
#
# The Space gets the committed tree of this repository (what `git archive HEAD` holds: the
# Dockerfile at the root builds it) with deploy/space/README.md, whose front matter configures the
# Space, as its README.md (the project's README becomes README.project.md). Everything in the
# target but .git is replaced.
set -euo pipefail
target=${1:?usage: deploy/space/assemble.sh <clone of the Space repository>}
repo=$(cd "$(dirname "$0")/../.." && pwd)
[ -d "$target" ] || { echo "assemble.sh: $target is not a directory" >&2; exit 1; }
find "$target" -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
git -C "$repo" archive --format=tar HEAD | tar -x -C "$target"
mv "$target/README.md" "$target/README.project.md"
cp "$repo/deploy/space/README.md" "$target/README.md"
echo "assembled $(git -C "$repo" rev-parse --short HEAD) into $target" >&2
