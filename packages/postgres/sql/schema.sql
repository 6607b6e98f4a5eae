-- The schema (kysely's migrator creates it first for its own bookkeeping tables).
create schema if not exists turnlog;
