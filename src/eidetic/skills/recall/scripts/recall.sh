#!/usr/bin/env bash
# recall skill wrapper: `eidetic recall` with every flag forwarded verbatim.
# Without --scope it queries this agent's own private scope (the culture.yaml suffix), which is
# where the remember wrapper writes: a no-flag recall returns the agent's private records plus
# the public pool. With no culture.yaml, nothing is added (the CLI default: default/public).
# Without --relevance-floor it adds --relevance-floor auto: "nothing relevant" is an answer.
set -euo pipefail
VERB=recall

# --- shared with remember.sh (kept identical; a test checks) -------------------------------

# The eidetic command: on PATH, else `uv run` from the checkout this skill sits in.
resolve_cli() {
    if command -v eidetic >/dev/null 2>&1; then
        CLI=(eidetic)
        return
    fi
    local here root
    here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
    root="$(cd "$here/../../../.." && pwd)"  # <root>/.claude/skills/<skill>/scripts
    if command -v uv >/dev/null 2>&1 && [ -f "$root/pyproject.toml" ]; then
        CLI=(uv run --project "$root" eidetic)
        return
    fi
    echo "error: eidetic not found" >&2
    echo "hint: install it (pip install eidetic) so 'eidetic' is on PATH, or install uv in its checkout" >&2
    exit 2
}

# The agent's nick: `suffix` (else `nick`) of the first agent in the nearest culture.yaml
# walking up from the current directory, else of the file's top level (as eidetic reads it).
culture_suffix() {
    local dir="$PWD"
    while :; do
        if [ -f "$dir/culture.yaml" ]; then
            awk '
                function value(line) {
                    sub(/^[^:]*:[ \t]*/, "", line); sub(/[ \t]+#.*$/, "", line); sub(/[ \t\r]+$/, "", line)
                    if (line ~ /^".*"$/ || line ~ /^'"'"'.*'"'"'$/) line = substr(line, 2, length(line) - 2)
                    return (line == "~" || line == "null") ? "" : line
                }
                /^[ \t]*(#|$)/ { next }
                /^agents:[ \t\r]*$/ { section = "agents"; next }
                /^[^ \t-]/ { section = "top" }
                section == "top" && /^(suffix|nick):/ { split($0, kv, ":"); top[kv[1]] = value($0); next }
                section == "agents" && item == 0 && /^[ \t]*- / {
                    item = 1; indent = match($0, /-/) + 1; line = $0; sub(/^[ \t]*-[ \t]*/, "", line)
                    if (line !~ /^[^ \t"'"'"'{[][^:]*:([ \t]|$)/) { item = 0; section = "" }  # not a mapping
                    if (line ~ /^(suffix|nick):/) { split(line, kv, ":"); agent[kv[1]] = value(line) }
                    next
                }
                section == "agents" && item == 1 && /^[ \t]*- / && match($0, /-/) < indent { item = 2 }
                section == "agents" && item == 1 {
                    line = $0; match(line, /^[ \t]*/)
                    if (RLENGTH == indent) {
                        sub(/^[ \t]*/, "", line)
                        if (line ~ /^(suffix|nick):/) { split(line, kv, ":"); agent[kv[1]] = value(line) }
                    }
                }
                END {
                    if (item) { print (agent["suffix"] != "" ? agent["suffix"] : agent["nick"]); exit }
                    print (top["suffix"] != "" ? top["suffix"] : top["nick"])
                }
            ' "$dir/culture.yaml"
            return
        fi
        [ "$dir" = / ] && return
        dir="$(dirname "$dir")"
    done
}

# --scope given: forward as is. Else default to the agent's private scope, if there is one.
run() {
    local arg has_scope="" has_visibility=""
    for arg in "$@"; do
        case "$arg" in
            --) break ;;
            --scope|--scope=*) has_scope=1 ;;
            --visibility|--visibility=*) has_visibility=1 ;;
        esac
    done
    resolve_cli
    local -a defaults=()
    if [ -z "$has_scope" ]; then
        local suffix
        suffix="$(culture_suffix)"
        if [ -n "$suffix" ]; then
            defaults=(--scope "$suffix")
            [ -n "$has_visibility" ] || defaults+=(--visibility private)
        fi
    fi
    exec "${CLI[@]}" "$VERB" ${defaults[@]+"${defaults[@]}"} "$@"
}

# --- end of the shared part -----------------------------------------------------------------

# An agent's context is better empty than filled with unrelated records: hits below the relevance
# floor are left out unless the call sets --relevance-floor itself (off shows everything).
floor=(--relevance-floor auto)
for arg in "$@"; do
    case "$arg" in
        --) break ;;
        --relevance-floor|--relevance-floor=*) floor=() ;;
    esac
done
run ${floor[@]+"${floor[@]}"} "$@"
