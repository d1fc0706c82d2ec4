"""The store: SQLite tables, migrations and row records for every call and verdict."""
