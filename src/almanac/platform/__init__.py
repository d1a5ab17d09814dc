"""The domain (README, Layout): no framework and nothing that talks to the world; what does
comes in through a port the domain owns. The import-linter contracts of pyproject.toml
keep it so."""
