from holon.cli.main import entry

entry()
