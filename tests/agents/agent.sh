#!/bin/sh
# A test agent speaking the Agent Contract, for both backends (dash on the host, busybox in the
# test image). Its behaviour comes from MODE in the spec's context.env.
in="$HOLON_INPUT_DIR"; ws="$HOLON_WORKSPACE_DIR"; out="$HOLON_OUTPUT_DIR"

manifest() { # status outcome [extra-json-fields]
  printf '{"status": "%s", "outcome": "%s", "duration": "0.1s", "metadata": {"agent": "test-agent", "version": "1"}%s}\n' "$1" "$2" "$3" > "$out/manifest.json"
}

if [ "$1" = "--probe" ]; then
  [ -f "$in/spec.yaml" ] || { echo "no spec" >&2; exit 1; }
  touch "$out/.probe" && rm "$out/.probe" || exit 1
  manifest completed success ', "metadata": {"mode": "probe"}'
  exit 0
fi

case "$MODE" in
success)
  echo "agent line" >> "$ws/tracked.txt"
  echo "brand new" > "$ws/added.txt"
  rm -f "$ws/doomed.txt"
  printf '\000\001\002\377binary\000tail' > "$ws/image.bin"
  mkdir -p "$ws/sub/dir" && echo nested > "$ws/sub/dir/file.txt"
  echo "# Summary" > "$out/summary.md"
  manifest completed success ', "artifacts": ["summary.md", {"name": "patch", "path": "diff.patch"}], "future_field": {"kept": true}'
  ;;
fail)
  manifest failed failure ', "error": "tests did not pass"'
  exit 1 ;;
needs_human)
  manifest completed needs_human ', "question": {"id": "q1", "text": "Which database should I use?"}'
  exit 2 ;;
needs_human_exit1)
  manifest completed needs_human ', "question": {"id": "q2", "text": "Proceed?"}'
  exit 1 ;;
lying)
  manifest completed success
  exit 1 ;;
no_manifest)
  echo "did nothing" ;;
bad_json)
  echo '{"status": "completed", "outcome":' > "$out/manifest.json" ;;
bad_schema)
  echo '{"status": "done", "outcome": "great"}' > "$out/manifest.json" ;;
still_running)
  manifest running success ;;
sleep)
  (while :; do echo t >> "$out/ticks"; sleep 0.1; done) &
  sleep 300 ;;
orphan)
  (while :; do echo t >> "$out/ticks"; sleep 0.1; done) > /dev/null 2>&1 &
  manifest completed success ;;
write_input)
  if { echo x > "$in/intruder"; } 2> "$out/input_error.txt"; then echo written > "$out/input_result.txt"; else echo refused > "$out/input_result.txt"; fi
  manifest completed success ;;
inspect)
  ls /sys/class/net > "$out/net.txt" 2>&1
  env | grep -E '^(HOLON_|MODE=|SECRET_TOKEN=)' | sort > "$out/env.txt"
  # cgroup v2 files first, v1 otherwise; both written as "quota period" and bytes.
  cg=/sys/fs/cgroup
  { cat $cg/cpu.max 2>/dev/null || echo "$(cat $cg/cpu/cpu.cfs_quota_us) $(cat $cg/cpu/cpu.cfs_period_us)"; } > "$out/cpu.txt"
  { cat $cg/memory.max 2>/dev/null || cat $cg/memory/memory.limit_in_bytes; } > "$out/memory.txt"
  ls -a "$ws" > "$out/workspace.txt"
  ls "$ws/.git/objects/../../../git-objects/" > "$out/objects.txt" 2>&1
  mkdir -p "$out/nested" && echo x > "$out/nested/file.txt"
  manifest completed success ;;
append)
  echo "appended by agent" >> "$ws/tracked.txt"
  manifest completed success ;;
log_symlink)
  # Holon's own files made links to a host path ($TARGET) and a host directory ($TARGET_DIR).
  ln -s "$TARGET" "$out/run.log"
  ln -s "$TARGET" "$out/run.json"
  ln -s "$TARGET_DIR" "$out/diff.patch"
  echo "agent output that must not reach the host file"
  manifest completed success ;;
record_dirs)
  for name in run.json run.log diff.patch; do mkdir -p "$out/$name/inner" && echo x > "$out/$name/inner/f"; done
  manifest completed success ;;
artifact_link)
  ln -s "$TARGET" "$out/report.txt"
  mkdir -p "$out/real" && ln -s "$TARGET_DIR" "$out/linkdir"
  manifest completed success ', "artifacts": ["report.txt"]' ;;
manifest_paths)
  echo ok > "$out/fine.txt"
  manifest completed success ', "artifacts": ["fine.txt", "'"$ARTIFACT"'"]' ;;
manifest_link)
  manifest completed success
  mv "$out/manifest.json" "$out/real.json" && ln -s real.json "$out/manifest.json" ;;
escape)
  # Grandchildren that leave the session and drop HOLON_RUN_ID; one keeps the output pipe open.
  ( setsid env -i sh -c "echo \$\$ >> '$out/escaped.pids'; exec sleep 300" < /dev/null > /dev/null 2>&1 & )
  ( setsid env -i sh -c "echo \$\$ >> '$out/escaped.pids'; while :; do sleep 1; done" & )
  setsid env -i sh -c "echo \$\$ >> '$out/escaped.pids'; exec sleep 300" < /dev/null > /dev/null 2>&1 &
  while [ "$(wc -l < "$out/escaped.pids" 2>/dev/null || echo 0)" -lt 3 ]; do sleep 0.05; done
  manifest completed success ;;
print_lots)
  echo BEGIN
  yes holon-output-line | head -c "$BYTES"
  echo
  echo END
  manifest completed success ;;
leak_secret)
  echo "plain: $SECRET_TOKEN"
  printf 'split: %s' "${SECRET_TOKEN%????????}"; sleep 0.3; printf '%s\n' "${SECRET_TOKEN#"${SECRET_TOKEN%????????}"}"
  printf '%s' "$SECRET_TOKEN" | base64
  printf 'x%s' "$SECRET_TOKEN" | base64
  echo "$SECRET_TOKEN" >> "$ws/tracked.txt"
  manifest completed needs_human ', "error": "boom '"$SECRET_TOKEN"'", "question": {"id": "q", "text": "is '"$SECRET_TOKEN"' right?"}, "'"$SECRET_TOKEN"'": 1'
  exit 2 ;;
plant_git_config)
  # Filters, fsmonitor and hooks everywhere the agent can write a git config or attribute file,
  # including whatever lies beside the workspace; each would run $PWN_CMD if Holon's git read it.
  cfg="[core]
	fsmonitor = $PWN_CMD
	hooksPath = $ws/hooks
	worktree = $PWN_WORKTREE
[filter \"pwn\"]
	clean = $PWN_CMD
	smudge = $PWN_CMD
	required = true
[diff \"pwn\"]
	textconv = $PWN_CMD
	command = $PWN_CMD
[include]
	path = $ws/extra.cfg"
  for f in "$ws/.git/config" "$ws/extra.cfg" "$HOME/.gitconfig" "$ws"/../*/config "$ws"/../*/*/config; do
    [ -e "$f" ] || [ "$f" = "$ws/extra.cfg" ] || [ "$f" = "$HOME/.gitconfig" ] || continue
    printf '%s\n' "$cfg" >> "$f" 2>/dev/null
  done
  printf '* filter=pwn diff=pwn\n' > "$ws/.gitattributes"
  printf '* filter=pwn\n' > "$ws/.git/info/attributes" 2>/dev/null
  ls -a "$ws/.." > "$out/beside.txt"
  echo "agent line" >> "$ws/tracked.txt"
  manifest completed success ;;
write_objects)
  # Everything the snapshot's object store leads to: the borrowed store and each alternate.
  : > "$out/written.txt"
  for dir in "$ws/.git/objects/../../../git-objects" $(cat "$ws/.git/objects/info/alternates"); do
    case "$dir" in /*) ;; *) dir="$ws/.git/objects/$dir" ;; esac
    if mkdir -p "$dir/ab" 2>/dev/null && echo intruder > "$dir/ab/cdef0123456789abcdef0123456789abcdef01" 2>/dev/null; then
      echo "$dir" >> "$out/written.txt"
    fi
    echo intruder > "$dir/intruder" 2>/dev/null && echo "$dir" >> "$out/written.txt"
  done
  manifest completed success ;;
read_object)
  # The original's dangling blob by its id, through git when there is one and as a loose file.
  : > "$out/found.txt"
  if command -v git > /dev/null; then
    (cd "$ws" && git cat-file -p "$SECRET_SHA") >> "$out/found.txt" 2>/dev/null
  fi
  rest=${SECRET_SHA#??}; fan=${SECRET_SHA%"$rest"}
  for dir in "$ws/.git/objects" "$ws/.git/objects/../../../git-objects" $(cat "$ws/.git/objects/info/alternates"); do
    case "$dir" in /*) ;; *) dir="$ws/.git/objects/$dir" ;; esac
    [ -e "$dir/$fan/$rest" ] && echo "loose in $dir" >> "$out/found.txt"
    cat "$dir"/pack/*.pack 2>/dev/null | grep -c "$SECRET_TEXT" >> "$out/grep.txt"
  done
  manifest completed success ;;
nested_repos)
  # A scaffolder's `git init` (a bare-bones .git directory, as busybox has no git), and a .git
  # file naming a repository on the host, each beside files that must reach the patch.
  mkdir -p "$ws/app/.git/objects" "$ws/app/.git/refs/heads" "$ws/app/src" "$ws/linked"
  echo 'ref: refs/heads/main' > "$ws/app/.git/HEAD"
  echo 'print("scaffolded")' > "$ws/app/src/main.py"
  echo '# App' > "$ws/app/README.md"
  echo "gitdir: $HOST_REPO" > "$ws/linked/.git"
  echo 'linked file' > "$ws/linked/notes.txt"
  echo "agent line" >> "$ws/tracked.txt"
  manifest completed success ;;
edit_submodule)
  echo "agent edit" >> "$ws/sub/f.txt"
  manifest completed success ;;
unrecordable_path)
  # A path git refuses to index (protectNTFS): the patch cannot be made, the run must not succeed.
  mkdir -p "$ws/sub/.GIT" && echo x > "$ws/sub/.GIT/y"
  echo "agent line" >> "$ws/tracked.txt"
  manifest completed success ;;
deep_tree)
  # Deeper than Python's recursion limit (3600 bytes of path, within git's): Holon's walks and
  # removals must not recurse, and the work at the bottom is carried.
  cd "$ws" || exit 1
  i=0; while [ $i -lt 1800 ]; do mkdir a && cd a || exit 1; i=$((i+1)); done
  echo "deep work" > leaf.txt
  echo "agent line" >> "$ws/tracked.txt"
  manifest completed success ;;
special_files)
  # FIFOs at the top, in a nested repository (any .git entry) and below it: none can be carried.
  mkfifo "$ws/top.fifo"
  mkdir -p "$ws/app/src" && echo "gitdir: /nowhere" > "$ws/app/.git"
  mkfifo "$ws/app/pipe.fifo" "$ws/app/src/deep.fifo"
  echo "int main;" > "$ws/app/src/main.c"
  echo "agent line" >> "$ws/tracked.txt"
  manifest completed success ;;
*)
  echo "unknown MODE=$MODE" >&2
  exit 1 ;;
esac
