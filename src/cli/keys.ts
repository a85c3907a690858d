import { formatKeysStatus, type KeysStatus } from '../admin/keys.js'
import type { ResealReport } from '../db/reseal.js'
import type { JwtRotation } from '../auth/jwt-key.js'
import { CliError, type Commands } from './args.js'
import { call } from './client.js'

/** Key rotation (docs/operations.md "Key rotation"), run by the server: each command is audited. */
export const keyCommands: Commands = {
  async 'keys status'({ print }) {
    const r = await call<KeysStatus>('GET', '/admin/key-rotation')
    print(r, formatKeysStatus(r))
  },

  async 'keys rotate-master'({ flags, print }) {
    const batch = flags.batch
    if (batch !== undefined && (batch === true || !/^[1-9][0-9]{0,3}$/.test(batch)))
      throw new CliError('--batch: a number of values per transaction, 1 to 1000')
    const r = await call<ResealReport & { status: KeysStatus }>(
      'POST',
      '/admin/key-rotation/master',
      batch === undefined ? {} : { batchSize: Number(batch) },
    )
    const resealed = Object.values(r.resealed).reduce((a, b) => a + b, 0)
    const unopenable = Object.values(r.unopenable).reduce((a, b) => a + b, 0)
    print(
      r,
      [
        `resealed ${resealed} value(s) under master key ${r.status.master.currentKeyId} in ${r.batches} batch(es)`,
        ...(unopenable ? [`${unopenable} value(s) could not be opened by any key of the ring`] : []),
        ...r.status.notes,
      ].join('\n'),
    )
    if (unopenable) process.exitCode = 1
  },

  async 'keys rotate-jwt'({ print }) {
    const r = await call<JwtRotation>('POST', '/admin/key-rotation/jwt', {})
    print(
      r,
      `token key ${r.kid} signs now; ${r.previousKid} verifies until ${new Date(r.previousVerifiesUntil).toISOString()}, then is retired`,
    )
  },
}
