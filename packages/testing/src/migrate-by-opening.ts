import { openStore } from '@turnlog/postgres'

/**
 * Migrates a database the way an application does, by opening a store on it (the default
 * `migrate: true`) and closing it: for `createTestDatabase`'s `migrate` option when the test then
 * opens its stores with `migrate: false`.
 */
export async function migrateByOpening(connectionString: string): Promise<void> {
  const store = await openStore({ connectionString })
  await store.close()
}
