"""The store: SQLite tables, migrations and row records for every call and verdict, and the
claims processes sharing a store take on calls in flight."""
