#!/bin/sh
# The paysync image's entrypoint: `paysync ARGS…`, with `worker` when no command is given.
#   docker compose run --rm worker backfill --from 2026-11-01 --to 2026-11-21 --wait
# runs that backfill and the container exits with its exit code (exec: paysync is PID 1's direct
# replacement, so SIGTERM from `docker stop` reaches it and the worker drains).
# A shell or node as the first word runs that instead (`docker compose run --rm worker sh`), for debugging.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
if [ "$#" -eq 0 ]; then
  set -- worker
fi
case "$1" in
  sh | bash | node | npm) exec "$@" ;;
esac
exec node "$here/bin/paysync.js" "$@"
