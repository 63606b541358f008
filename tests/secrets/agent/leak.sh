#!/bin/sh
# An agent that says every secret it can see, for tests/secrets/test_docker_secret_hygiene.py:
# busybox only (the test image). The secrets: every environment value holding PLANTED (what
# the runner gave the container) and the token pasted into the issue (its context). Each goes
# out plain, base64 at three alignments (standard and URL-safe), percent-encoded and split
# across two writes, to stdout, stderr, summary.md, a nested output file and the manifest.
# HOLON_MODEL (the action's `model`, in the spec) says what goes into the workspace:
#   leak-text: the fix and a text file with the secrets (the patch must be refused);
#   leak-binary: the fix and a binary file holding them (what `git diff` encodes);
#   anything else: the fix only.
in="$HOLON_INPUT_DIR"; ws="$HOLON_WORKSPACE_DIR"; out="$HOLON_OUTPUT_DIR"

manifest() { # status outcome [extra-json-fields]
  printf '{"status": "%s", "outcome": "%s", "duration": "0.1s", "metadata": {"agent": "leak-agent", "version": "1"}%s}\n' "$1" "$2" "$3" > "$out/manifest.json"
}

if [ "$1" = "--probe" ]; then
  manifest completed success ', "metadata": {"mode": "probe"}'
  exit 0
fi

urlencode() {
  awk 'BEGIN { for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i }
  { s = ""; for (i = 1; i <= length($0); i++) { c = substr($0, i, 1)
      if (c ~ /[A-Za-z0-9_.~-]/) s = s c; else s = s sprintf("%%%02X", ord[c]) }
    print s }'
}

forms() { # value: every form of it, one a line
  v=$1
  echo "$v"
  for pad in "" "x" "xy"; do
    printf '%s%s' "$pad" "$v" | base64 | tr -d '\n'; echo
    printf '%s%s' "$pad" "$v" | base64 | tr -d '\n' | tr '+/' '-_'; echo
  done
  printf '%s\n' "$v" | urlencode
}

secrets=$(env | grep -i planted | sed 's/^[A-Za-z_][A-Za-z0-9_]*=//')
issue=$(grep -rhoE 'gh[ps]_[A-Za-z0-9]{20,}' "$in" 2>/dev/null | head -n 1)
all=$(printf '%s\n%s\n' "$secrets" "$issue" | sed '/^$/d')

echo "what I was given:"; env | sort
env | sort >&2
mkdir -p "$out/notes/deep"
: > "$out/summary.md"
echo "$all" | while read -r v; do
  forms "$v"
  forms "$v" >&2
  forms "$v" >> "$out/summary.md"
  forms "$v" >> "$out/notes/deep/seen.txt"
  printf 'split: %s' "${v%????????}"; sleep 0.2; printf '%s\n' "${v#"${v%????????}"}"
done

sed -i 's/return a - b/return a + b/' "$ws/calc.py"
case "$HOLON_MODEL" in
leak-text) echo "$all" > "$ws/credentials.txt" ;;
leak-binary) { printf '\000\001'; echo "$all"; } > "$ws/credentials.bin" ;;
esac
first=$(echo "$all" | head -n 1)
manifest completed success ', "summary": "fixed add; used '"$first"'", "artifacts": ["summary.md", "notes/deep/seen.txt"], "'"$first"'": {"said": "'"$first"'"}'
