import type { SealedColumn } from '../db/reseal.js'

/**
 * The sealed columns this folder owns (src/db/reseal.ts): webhook secrets, and the previous secret
 * that keeps signing during a rotation's overlap. Deleted webhooks' secrets are resealed too: they
 * are stored secrets, and an old master key could not be dropped while they name it.
 */
export const WEBHOOK_SEALED_COLUMNS: readonly SealedColumn[] = [
  { name: 'webhooks.secret_enc', table: 'webhooks', id: 'id', column: 'secret_enc' },
  { name: 'webhooks.previous_secret_enc', table: 'webhooks', id: 'id', column: 'previous_secret_enc' },
]
