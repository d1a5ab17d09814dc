"""The run pipeline and the scheduling questions, free of Dagster: what the orchestrator (the
Dagster assets and sensors) asks and calls. Imports the platform and the sandbox, never Dagster."""
