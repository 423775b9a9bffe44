"""JSONata rules: the migration transforms between schema versions."""
