"""A test agent that shows what context it was given: it copies `<input>/context/manifest.json`
(and the issue it names) into its output as artifacts and reports success."""

import json
import os
import shutil
import sys

inp, out = os.environ["HOLON_INPUT_DIR"], os.environ["HOLON_OUTPUT_DIR"]
context = os.path.join(inp, "context")
shutil.copyfile(os.path.join(context, "manifest.json"), os.path.join(out, "context-manifest.json"))
artifacts = [{"name": "context-manifest", "path": "context-manifest.json"}]
listed = sorted(os.listdir(context))
with open(os.path.join(out, "context-files.json"), "w") as handle:
    json.dump(listed, handle)
artifacts.append({"name": "context-files", "path": "context-files.json"})
# What github-issue-solve declares and requires: a summary and a change.
with open(os.path.join(out, "summary.md"), "w") as handle:
    handle.write("Read the context.\n")
with open(os.path.join(os.environ["HOLON_WORKSPACE_DIR"], "CONTEXT_SEEN"), "w") as handle:
    handle.write("\n".join(listed) + "\n")
manifest = {"status": "completed", "outcome": "success", "artifacts": artifacts}
with open(os.path.join(out, "manifest.json"), "w") as handle:
    json.dump(manifest, handle)
sys.exit(0)
