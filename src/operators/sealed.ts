import type { SealedColumn } from '../db/reseal.js'

/** The sealed columns this folder owns (src/db/reseal.ts): operators' second-factor secrets. */
export const OPERATOR_SEALED_COLUMNS: readonly SealedColumn[] = [
  { name: 'operators.totp_secret_enc', table: 'operators', id: 'id', column: 'totp_secret_enc' },
]
