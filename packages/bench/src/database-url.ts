/** The URL of database `name` on the server of `adminUrl` (the per-run databases the bench creates). */
export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}
