"""Result closure, terminal lifecycle outcomes and the structured handoff: one truth for all.

Modules: `evidence` (what the runtime recorded), `derive` (the ordered rules), `lifecycle`
(canonical outcomes and legacy normalization), `mapping` (closure -> lifecycle -> exit code ->
conclusions), `record` (the flat record the CLI prints), `handoff` (the four-part handoff and its
renderings), `softeners`. Nothing is re-exported here, so importing one (as `holon run` does)
does not pay for the others.
"""
