import { createHash } from 'node:crypto'
import { asAccountId } from '../../shared/ids.js'
import type { Config } from '../../config/config.js'
import type { Queryable } from '../../db/db.js'
import { formatMinor } from '../../shared/amount.js'
import { ApiError } from '../../shared/errors.js'
import { rateLimitConfigFromEnv } from '../../http/rate-limit.js'
import type { CreateInput } from '../../transactions/flow.js'
import type { TransactionsService } from '../../transactions/service.js'
import type { Txn } from '../../transactions/txn.js'
import { commentChars, hasUnsafeCommentChar } from '../comment-text.js'
import { MSAT_PER_SAT } from '../invoices.js'
import { addressByUsername, type LightningAddress } from './service.js'
import { isUsernameShape } from './names.js'
import { parseLnAddress, type LnurlError, type PayRequest as AnyPayRequest } from '../lnurl-pay.js'

/**
 * LNURL-pay for the Lightning Addresses of this service (LUD-06, LUD-12, LUD-16). The HTTP routes
 * (lnurl-routes.ts) answer with these, and a Lightning send to an address of this same service
 * calls them directly, without HTTP.
 */

/** LUD-06's first answer as we give it: always with LUD-12's `commentAllowed`. */
export type PayRequest = Required<AnyPayRequest>

/** The LNURL error shape (LUD-06), shared with the paying side. */
export type { LnurlError }

/** Limits of every address, from the rate-limit configuration (docs/rate-limits.md). */
export interface LnAddressLimits {
  minSats: bigint
  maxSats: bigint
  /** LUD-12 `commentAllowed`: the longest comment a payer may send (0: none). */
  commentChars: number
}

export interface LnurlDeps {
  db: Queryable
  config: Pick<Config, 'publicBaseUrl' | 'receiveMaxSats'>
  transactions: () => TransactionsService
  limits: LnAddressLimits
}

/** LUD-12 `commentAllowed` of every address: a short note, as most services offer. */
export const COMMENT_ALLOWED = 140

/**
 * The deps of an address's LNURL-pay, from the container's parts: its amounts from the rate-limit
 * configuration (RATE_LIMIT_LN_ADDRESS_MIN_SATS and _MAX_SATS, docs/rate-limits.md).
 */
export function createLnurlDeps(c: {
  db: Queryable
  config: Pick<Config, 'publicBaseUrl' | 'receiveMaxSats' | 'env'>
  transactions: () => TransactionsService
}): LnurlDeps {
  const { minSats, maxSats } = rateLimitConfigFromEnv(c.config.env).lightningAddress
  return {
    db: c.db,
    config: c.config,
    transactions: c.transactions,
    limits: { minSats, maxSats, commentChars: COMMENT_ALLOWED },
  }
}

export const lnurlError = (reason: string): LnurlError => ({ status: 'ERROR', reason })

export const isLnurlError = (value: object): value is LnurlError => 'status' in value

/**
 * The domain of a wallet's Lightning Address (LUD-16 `user@domain`), as the parsers wallets use
 * read it: dot-separated labels ending in a top-level domain of letters. That is the domain part of
 * `LN_ADDRESS_REGEX` in lnurl-pay (dolcalmi/lnurl-pay, src/utils.ts) and in Alby's
 * lightning-tools (getAlby/js-lightning-tools, src/lnurl/LightningAddress.ts): no port, no
 * `localhost`, no IP literal.
 */
const WALLET_DOMAIN_RE = /^(?:[a-z0-9-]+\.)+[a-z]{2,}$/

/**
 * The domain of this service's Lightning Addresses, or undefined when PUBLIC_BASE_URL gives none a
 * wallet can use. LUD-16 has a domain and nothing else: a wallet asks
 * `https://<domain>/.well-known/lnurlp/<username>` (`http://` for an onion domain), so the base URL
 * must be https (or http on `.onion`), with no port and no path, and its host a domain the wallet
 * parsers and our own send (parseLnAddress) accept. Otherwise only the LNURL is advertised.
 */
export function addressDomain(config: Pick<Config, 'publicBaseUrl'>): string | undefined {
  const url = new URL(config.publicBaseUrl)
  const host = url.hostname
  const onion = host.endsWith('.onion')
  if (!(url.protocol === 'https:' || (url.protocol === 'http:' && onion))) return undefined
  if (url.port !== '' || url.pathname !== '/' || url.search !== '' || url.username !== '') return undefined
  if (!WALLET_DOMAIN_RE.test(host) || parseLnAddress(`a@${host}`).kind !== 'address') return undefined
  return host
}

/** `username@domain` where an address is advertised (addressDomain), else undefined. */
export function lightningAddressOf(
  config: Pick<Config, 'publicBaseUrl'>,
  username: string,
): string | undefined {
  const domain = addressDomain(config)
  return domain === undefined ? undefined : `${username}@${domain}`
}

/** `https://host/.well-known/lnurlp/username` (LUD-16), the URL an LNURL of the address encodes. */
export const wellKnownUrl = (config: Pick<Config, 'publicBaseUrl'>, username: string) =>
  `${config.publicBaseUrl}/.well-known/lnurlp/${username}`

export const callbackUrl = (config: Pick<Config, 'publicBaseUrl'>, username: string) =>
  `${config.publicBaseUrl}/lnurlp/${username}/callback`

/** How a payer is told which name this is: the address, or the name at the service's host. */
const payeeName = (config: Pick<Config, 'publicBaseUrl'>, username: string) =>
  lightningAddressOf(config, username) ?? `${username} at ${new URL(config.publicBaseUrl).host}`

/**
 * The metadata of an address: a stable text, so the payRequest and the callback agree on its hash.
 * LUD-16's `text/identifier` is there only when the address is advertised: it names the address a
 * wallet paid, and there is none a wallet could have used otherwise (LUD-06 asks only `text/plain`).
 */
export function metadataOf(config: Pick<Config, 'publicBaseUrl'>, username: string): string {
  const address = lightningAddressOf(config, username)
  return JSON.stringify([
    ['text/plain', `Payment to ${payeeName(config, username)}`],
    ...(address === undefined ? [] : [['text/identifier', address]]),
  ])
}

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

/** The amounts an address accepts, in sats: the configured bounds, within the receive maximum. */
function sendable(deps: LnurlDeps): { min: bigint; max: bigint } {
  const max =
    deps.limits.maxSats < deps.config.receiveMaxSats ? deps.limits.maxSats : deps.config.receiveMaxSats
  return { min: deps.limits.minSats, max }
}

/** The address a username names, or the LNURL error an unknown one is answered with. */
export async function knownAddress(
  deps: LnurlDeps,
  username: string,
): Promise<LightningAddress | LnurlError> {
  const address = isUsernameShape(username) ? await addressByUsername(deps.db, username) : undefined
  return address ?? lnurlError(`No Lightning Address ${payeeName(deps.config, username)}`)
}

/** A username, or what `knownAddress` already found for it (the LNURL routes look it up once). */
type AddressOrName = string | LightningAddress | LnurlError

const resolved = (deps: LnurlDeps, target: AddressOrName) =>
  typeof target === 'string' ? knownAddress(deps, target) : target

/** LUD-06/16: what a wallet learns from `/.well-known/lnurlp/{username}`. */
export async function payRequestFor(
  deps: LnurlDeps,
  target: AddressOrName,
): Promise<PayRequest | LnurlError> {
  const address = await resolved(deps, target)
  if (isLnurlError(address)) return address
  const { username } = address
  const { min, max } = sendable(deps)
  return {
    tag: 'payRequest',
    callback: callbackUrl(deps.config, username),
    minSendable: Number(min * MSAT_PER_SAT),
    maxSendable: Number(max * MSAT_PER_SAT),
    metadata: metadataOf(deps.config, username),
    commentAllowed: deps.limits.commentChars,
  }
}

/**
 * LUD-06's callback: a BOLT11 invoice for `amountMsat` whose description hash is the SHA-256 of the
 * address's metadata. It is a Lightning receive of the owner account, created and confirmed
 * through the transactions service like any other, crediting the address's `creditCcy` wallet;
 * the payer's comment (LUD-12) is kept in its source details.
 */
export async function invoiceFor(
  deps: LnurlDeps,
  target: AddressOrName,
  amountMsat: bigint,
  comment?: string,
  forSend?: string,
): Promise<{ pr: string; routes: [] } | LnurlError> {
  const address = await resolved(deps, target)
  if (isLnurlError(address)) return address
  const { username } = address
  const { min, max } = sendable(deps)
  if (amountMsat % MSAT_PER_SAT !== 0n)
    return lnurlError('amount must be a whole number of satoshis (a multiple of 1000 millisatoshis)')
  const sats = amountMsat / MSAT_PER_SAT
  if (sats < min || sats > max)
    return lnurlError(`amount must be from ${min * MSAT_PER_SAT} to ${max * MSAT_PER_SAT} millisatoshis`)
  // LUD-12 counts characters: code points, so an emoji is one.
  if (comment !== undefined && commentChars(comment) > deps.limits.commentChars)
    return lnurlError(`comment must be at most ${deps.limits.commentChars} characters`)
  if (comment !== undefined && hasUnsafeCommentChar(comment))
    return lnurlError('comment must not contain control or bidirectional-override characters')
  const input: CreateInput = {
    accountId: asAccountId(address.accountId),
    // A send of ours gets one receive however often it asks: keyed on the send, by a digest so that
    // the payee never learns the sender's transaction id.
    ...(forSend !== undefined ? { extRefId: `ln-send-${sha256Hex(forSend).slice(0, 32)}` } : {}),
    deductNetworkFeesFromDest: false,
    sourceReq: {
      ccy: 'BTC',
      method: 'lightning',
      amtRequested: formatMinor(sats, 'BTC'),
      reqDetails: {
        descriptionHash: sha256Hex(metadataOf(deps.config, username)),
        ...(comment ? { comment } : {}),
      },
    },
    destReq: { ccy: address.creditCcy, method: 'svcpay', reqDetails: {} },
  }
  const transactions = deps.transactions()
  try {
    const quoted = await transactions.create(input, input)
    const issued = quoted.state === 'quoted' ? await confirmOnce(transactions, quoted) : quoted
    const pr = issued.srcDetails.paymentRequest
    // Paid already: another confirm of the same send settled it a moment ago, and this one will
    // find the send done under its lock.
    const open = issued.state === 'srccreated' || (forSend !== undefined && issued.state === 'completed')
    if (!open || typeof pr !== 'string') return lnurlError('The invoice could not be issued; try again')
    return { pr, routes: [] }
  } catch (err) {
    // A refusal of the quote (an amount the receive fee takes whole, a currency this receive cannot
    // credit) or a node that does not answer: the wallet shows the reason to its user. A send of
    // ours retries a failure of our own instead of taking it for the address's refusal.
    if (err instanceof ApiError && (forSend === undefined || err.status < 500)) return lnurlError(err.message)
    throw err
  }
}

/** Confirm the receive; when another caller confirmed it a moment earlier, that confirm's answer. */
async function confirmOnce(transactions: TransactionsService, quoted: Txn): Promise<Txn> {
  try {
    return await transactions.confirm(quoted.accountId, quoted.id)
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 'invalid_state') throw err
    return transactions.get(quoted.accountId, quoted.id)
  }
}
