#!/usr/bin/env bash
# The steps of the diffidx GitHub Action (../action.yml), kept in a script so
# that they can be linted (shellcheck) and tested on real repositories.
#
#   run.sh cache-key   print `key=...` for the binary cache (GITHUB_OUTPUT)
#   run.sh install     download the release binary matching the action's ref
#                      (checksum verified), else build git-diffidx from the
#                      action's source, into $DIFFIDX_HOME/bin
#   run.sh run         on push: index, publish the notes, push to Neo4j;
#                      on pull_request: the sticky comment
#
# Inputs arrive as INPUT_* variables (set by action.yml). Unless
# INPUT_FAIL_ON_ERROR is true, a failure of diffidx itself is reported as a
# warning and the step still succeeds: the tool never breaks a build it
# was only asked to describe.
set -uo pipefail

action_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
home=${DIFFIDX_HOME:-${HOME:-/root}/.cache/diffidx-action}
remote=${INPUT_REMOTE:-origin}
notes_ref=refs/notes/diffidx
remote_notes_ref=refs/notes/diffidx-remote/$remote

log() { echo "diffidx: $*" >&2; }

# Fails the step only when asked to.
give_up() {
  if [ "${INPUT_FAIL_ON_ERROR:-false}" = true ]; then
    echo "::error title=diffidx::$*"
    exit 1
  fi
  echo "::warning title=diffidx::$* (set fail-on-error: true to fail the job instead)"
  exit 0
}

cache_key() {
  local sum
  # Every input of the build: sources, manifests, and the hook scripts the
  # binary embeds.
  sum=$(cd "$action_dir" && find Cargo.toml Cargo.lock src crates action hooks -type f \
          \( -name '*.rs' -o -name '*.toml' -o -name 'Cargo.lock' -o -name '*.sh' -o -path 'hooks/*' \) -print0 \
        | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
  echo "key=diffidx-${RUNNER_OS:-$(uname -s)}-${RUNNER_ARCH:-$(uname -m)}-$sum"
}

# The release binaries, and how they are checked.
# shellcheck source=scripts/release.sh
. "$action_dir/scripts/release.sh"

# The prebuilt binary of the release the action was used at (`uses:
# owner/diffidx@v1.2.3`), verified against the release's SHA256SUMS.
# Returns non-zero (and says why) when there is none to use.
download() {
  local ref=${DIFFIDX_ACTION_REF:-${GITHUB_ACTION_REF:-}}
  local repo=${DIFFIDX_ACTION_REPOSITORY:-${GITHUB_ACTION_REPOSITORY:-}}
  if [[ "$ref" != v[0-9]* ]]; then
    log "the action is used at '${ref:-an unknown ref}', not a release tag: building from source"
    return 1
  fi
  local base=${DIFFIDX_RELEASE_BASE:-${GITHUB_SERVER_URL:-https://github.com}/$repo/releases/download}
  local target err
  err=$(mktemp)
  if ! target=$(diffidx_fetch_release "$ref" "$base" "$home/bin/git-diffidx" 2>"$err"); then
    log "$(cat "$err"): building from source"
    rm -f "$err"
    return 1
  fi
  rm -f "$err"
  log "installed the prebuilt git-diffidx $ref for $target (sha256 verified)"
}

install() {
  if download; then
    return 0
  fi
  if ! command -v cargo >/dev/null 2>&1; then
    give_up "cargo is not installed on this runner; add a Rust toolchain step (rustup) before the action"
  fi
  local missing=()
  command -v cmake >/dev/null 2>&1 || missing+=(cmake)
  command -v g++ >/dev/null 2>&1 || missing+=(g++)
  if [ ${#missing[@]} -gt 0 ]; then
    local sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    if ! { $sudo_cmd apt-get update -qq && $sudo_cmd apt-get install -y -qq "${missing[@]}"; }; then
      give_up "cannot install ${missing[*]} (needed to build the embedded graph store)"
    fi
  fi
  log "building git-diffidx from $action_dir (the first build takes a while; later runs use the cache)"
  CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$home/target} \
    cargo install --locked --quiet --root "$home" --path "$action_dir" \
    || give_up "cannot build git-diffidx"
  rm -rf "${CARGO_TARGET_DIR:-$home/target}"
}

# Our notes as the remote has them, into refs/notes/diffidx-remote/REMOTE,
# where `git diffidx index` validates and imports them.
fetch_notes() {
  if git ls-remote --exit-code "$remote" "$notes_ref" >/dev/null 2>&1; then
    git fetch --quiet --no-tags "$remote" "+$notes_ref:$remote_notes_ref"
  else
    git update-ref -d "$remote_notes_ref" 2>/dev/null || true
  fi
}

# Makes our notes ref a descendant of the remote's, so the push fast-forwards.
# Notes are deterministic, so both sides hold the same note for a commit
# both indexed; where they differ ours wins (it was validated or recomputed).
merge_notes() {
  git rev-parse --quiet --verify "$remote_notes_ref" >/dev/null || return 0
  if git rev-parse --quiet --verify "$notes_ref" >/dev/null \
     && git merge-base --is-ancestor "$remote_notes_ref" "$notes_ref"; then
    return 0
  fi
  git notes --ref=diffidx merge --quiet --strategy=ours "$remote_notes_ref"
}

# Notes commits need an identity; the runner has none configured.
ensure_identity() {
  git config user.email >/dev/null 2>&1 || {
    export GIT_AUTHOR_NAME=${GIT_AUTHOR_NAME:-github-actions[bot]}
    export GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL:-41898282+github-actions[bot]@users.noreply.github.com}
    export GIT_COMMITTER_NAME=${GIT_COMMITTER_NAME:-$GIT_AUTHOR_NAME}
    export GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL:-$GIT_AUTHOR_EMAIL}
  }
}

# Indexing and merge bases need history; actions/checkout fetches one commit
# unless told fetch-depth: 0.
unshallow() {
  if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    log "the clone is shallow; fetching its history (use fetch-depth: 0 to skip this)"
    git fetch --quiet --unshallow --no-tags "$remote" || give_up "cannot unshallow the clone"
  fi
}

on_push() {
  ensure_identity
  unshallow
  fetch_notes || give_up "cannot fetch $notes_ref from $remote"
  git diffidx index || give_up "git diffidx index failed"
  if [ "${INPUT_PUSH_NOTES:-true}" = true ]; then
    local attempt pushed=false
    for attempt in 1 2 3 4 5; do
      merge_notes || give_up "cannot merge the notes of $remote"
      if git push --quiet "$remote" "$notes_ref:$notes_ref"; then
        pushed=true
        break
      fi
      # Someone else published notes since our fetch: take theirs, retry.
      log "the notes on $remote moved (attempt $attempt); fetching and retrying"
      sleep "$attempt"
      if ! { fetch_notes && git diffidx index --quiet; }; then
        give_up "cannot catch up with the notes of $remote"
      fi
    done
    [ "$pushed" = true ] || give_up "cannot push $notes_ref to $remote"
    log "published $notes_ref to $remote"
  fi
  if [ -n "${NEO4J_URI:-}" ]; then
    git diffidx push || give_up "git diffidx push (Neo4j) failed"
  fi
}

on_pull_request() {
  if [ "${INPUT_COMMENT:-true}" != true ]; then
    log "comment: false; nothing to do"
    return 0
  fi
  unshallow
  local args=(pr-comment)
  [ -n "${INPUT_LANGUAGES:-}" ] && args+=(--languages "$INPUT_LANGUAGES")
  git diffidx "${args[@]}" || give_up "git diffidx pr-comment failed"
}

run() {
  # The binary the install step built (or the cache restored) comes first.
  if [ -x "$home/bin/git-diffidx" ]; then
    export PATH="$home/bin:$PATH"
  fi
  command -v git-diffidx >/dev/null 2>&1 || give_up "git-diffidx is not installed (the build step failed?)"
  case "${GITHUB_EVENT_NAME:-}" in
    pull_request | pull_request_target) on_pull_request ;;
    push | workflow_dispatch | schedule) on_push ;;
    *) log "nothing to do on a ${GITHUB_EVENT_NAME:-local} event" ;;
  esac
}

case "${1:-}" in
  cache-key) cache_key ;;
  install) install ;;
  run) run ;;
  *)
    echo "usage: $0 cache-key|install|run" >&2
    exit 2
    ;;
esac
