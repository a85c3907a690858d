import { randomBytes } from 'node:crypto'
import type { Db } from '../db/db.js'
import type { SecretBox } from '../shared/secret-box.js'
import { sql } from '../db/sql.js'

/**
 * The token signing key is shared by every instance: JWT_SECRET when configured, otherwise one
 * generated once and kept, sealed under the master key, in the database.
 */
export async function loadJwtKey(
  db: Db,
  box: SecretBox,
  configured: string | undefined,
): Promise<Uint8Array> {
  if (configured) return new TextEncoder().encode(configured)
  const fresh = box.seal(randomBytes(32).toString('base64url'))
  await db.query(
    sql`INSERT INTO settings (name, value) VALUES ('jwt_secret', ${fresh}) ON CONFLICT (name) DO NOTHING`,
  )
  const { rows } = await db.query<{ value: string }>(
    sql`SELECT value FROM settings WHERE name = 'jwt_secret'`,
  )
  return new TextEncoder().encode(box.open(rows[0]!.value))
}
