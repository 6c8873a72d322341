"""Recipe engine: catalog, profiles, constraints, resolution, values, qualification, query."""
