"""The GitHub edge: the one place Holon talks to GitHub's REST API (docs/github.md).

`client` builds a PyGithub client from configuration (`GITHUB_API_URL`, `GITHUB_TOKEN`) with
Holon's retry policy (`retry`), `errors` translates what PyGithub and requests raise into Holon's
own exceptions, `marker` writes and reads the hidden marker on what Holon writes. The effects
(`comments`, `progress`, `labels`, `issues`, `dispatch`, `checks`, `merge`) take a `Scope`
(`effects`) holding a narrow `handle.Repo`, implemented over PyGithub by `pygithub_repo`;
`publish` (with its `publish_*` modules) publishes a settled run's result; `outcome` is what
every effect returns. PyGithub's types
stay inside this package. Nothing is re-exported, so importing one module does not import
PyGithub for the others.
"""
