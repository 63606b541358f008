"""Serve state: the controller's durable memory between passes and across restarts.

Modules: `model` (records, the convergent merge and pruning; pure), `journal` (append-only ndjson
history of events, decisions and actions), `store` (the state directory: lock, state.json with its
.prev, the control inbox). Nothing is re-exported here.
"""
