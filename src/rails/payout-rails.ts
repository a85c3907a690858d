import { ConfigError, type Config } from '../config/config.js'
import type { Db } from '../db/db.js'
import type { BankPayoutRail, TronRail } from './rail.js'
import { createSandboxTronRail } from './tron/sandbox.js'
import { createSandboxBankRail } from './vnd/sandbox.js'

/** How often a real network is asked about a payout in flight. */
export const TRON_POLL_MS = 15_000
export const BANK_POLL_MS = 30_000

/**
 * The payout rails, chosen by configuration: `TRON=sandbox|trongrid`, `VND=sandbox|bank-http`
 * (both sandbox when `RAILS=sandbox`). `pollMs` is how long the payout flows wait before asking a
 * rail again about a payout in flight: a sandbox payout is asked exactly when it settles.
 */
export interface PayoutRails {
  tron: TronRail
  bank: BankPayoutRail
  pollMs: { tron: number; bank: number }
}

export function createPayoutRails(config: Config, db: Db): PayoutRails {
  const delayMs = config.sandboxPayoutDelayMs
  let tron: TronRail
  if (config.tron === 'sandbox') {
    tron = createSandboxTronRail({ db, failAddresses: config.sandboxTronFail, delayMs })
  } else {
    throw new ConfigError('TRON=trongrid: the TronGrid adapter is not available in this build')
  }
  let bank: BankPayoutRail
  if (config.vnd === 'sandbox') {
    bank = createSandboxBankRail({ db, delayMs })
  } else {
    throw new ConfigError('VND=bank-http: the bank partner adapter is not available in this build')
  }
  return {
    tron,
    bank,
    pollMs: {
      tron: config.tron === 'sandbox' ? delayMs : TRON_POLL_MS,
      bank: config.vnd === 'sandbox' ? delayMs : BANK_POLL_MS,
    },
  }
}
