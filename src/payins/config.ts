import { ConfigError, type Config } from '../config/config.js'
import { findInstitution } from '../fiat/institutions.js'

/**
 * The account VND receives are paid into (VietQR pay-in, docs/payouts.md), and how long a receive
 * waits for its transfer:
 * - `VND_RECEIVE`: `true` or `false`; on by default with the sandbox bank, off with `VND=bank-http`
 *   unless asked for.
 * - `VND_RECEIVE_BANK_BIN` (the bank's NAPAS BIN, a known institution), `VND_RECEIVE_ACCOUNT` (4 to
 *   19 letters or digits) and `VND_RECEIVE_ACCOUNT_NAME` (the holder as the bank shows it): with the
 *   sandbox bank they default to a made-up Vietcombank account; with `VND=bank-http` all three are
 *   required, and the service refuses to start without them.
 * - `VND_RECEIVE_TTL_S`: seconds a confirmed receive waits for its transfer (default 900, 15 minutes,
 *   from 60 to 7 days). A transfer that arrives later is credited all the same, as a deposit.
 */
export interface VndReceiveConfig {
  enabled: boolean
  bankBin: string
  bankName: string
  accountNumber: string
  accountName: string
  ttlS: number
}

const SANDBOX_ACCOUNT = { bankBin: '970436', accountNumber: '0071000888999', accountName: 'SVCPAY SANDBOX' }

export function vndReceiveConfig(config: Pick<Config, 'vnd' | 'env'>): VndReceiveConfig {
  const env = config.env
  const sandbox = config.vnd === 'sandbox'
  const flag = env.VND_RECEIVE ?? ''
  if (!['', 'true', 'false'].includes(flag))
    throw new ConfigError(`VND_RECEIVE: expected true or false, got ${JSON.stringify(flag)}`)
  const enabled = flag === '' ? sandbox : flag === 'true'
  const given = (name: string, fallback: string) => {
    const text = (env[name] ?? '').trim()
    if (text) return text
    if (enabled && !sandbox) throw new ConfigError(`${name} is required to receive VND with VND=bank-http`)
    return fallback
  }
  const bankBin = given('VND_RECEIVE_BANK_BIN', SANDBOX_ACCOUNT.bankBin)
  const accountNumber = given('VND_RECEIVE_ACCOUNT', SANDBOX_ACCOUNT.accountNumber)
  const accountName = given('VND_RECEIVE_ACCOUNT_NAME', SANDBOX_ACCOUNT.accountName)
  const institution = findInstitution(bankBin)
  if (!institution)
    throw new ConfigError(`VND_RECEIVE_BANK_BIN: ${JSON.stringify(bankBin)} is not a known bank BIN`)
  if (!/^[0-9A-Za-z]{4,19}$/.test(accountNumber))
    throw new ConfigError('VND_RECEIVE_ACCOUNT: expected 4 to 19 letters or digits')
  if (!/^[A-Za-z0-9 .-]{1,50}$/.test(accountName))
    throw new ConfigError(
      'VND_RECEIVE_ACCOUNT_NAME: expected 1 to 50 letters without accents, digits or spaces',
    )
  const ttlText = env.VND_RECEIVE_TTL_S ?? ''
  const ttlS = ttlText === '' ? 900 : Number(ttlText)
  if (!/^\d*$/.test(ttlText) || ttlS < 60 || ttlS > 7 * 86_400)
    throw new ConfigError(
      `VND_RECEIVE_TTL_S: expected a whole number from 60 to 604800, got ${JSON.stringify(ttlText)}`,
    )
  return { enabled, bankBin, bankName: institution.shortName, accountNumber, accountName, ttlS }
}
