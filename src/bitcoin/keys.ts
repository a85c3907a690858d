import { randomBytes } from 'node:crypto'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { ConfigError } from '../config/config.js'
import type { Queryable } from '../db/db.js'
import type { SecretBox } from '../shared/secret-box.js'
import type { Network } from '../config/network.js'
import { deriveAccountXpub, deriveReceiveAddress, newMasterKey } from './bip84.js'
import { sql } from '../db/sql.js'
import type { SealedColumn } from '../db/reseal.js'

/**
 * The service's own Bitcoin keys, shared by every instance: generated once by whichever instance
 * starts first and kept, sealed under the master key, in the `settings` table.
 */
export interface BitcoinKeys {
  /** The sandbox Lightning node's private key (32 bytes); it signs the invoices the sandbox issues for us. */
  nodePrivateKey: Uint8Array
  /** Its compressed public key, hex: the payee of every invoice the sandbox issues for us. */
  nodePublicKey: string
  /**
   * The master extended private key (xprv on mainnet, tprv on the test networks) receive addresses
   * derive from; null when the operator configured their own account key (`ONCHAIN_XPUB`).
   */
  masterKey: string | null
  /** The account-level extended public key (m/84'/coin'/0') receive addresses derive from. */
  accountXpub: string
  /** The BIP84 receive address at `index` for the configured network. */
  receiveAddress(index: number): string
}

/**
 * Load the keys, generating any that do not exist yet. Generation races between instances are
 * settled by the database: the first insert wins and everyone reads back the winner.
 * The extended key is kept per network, since a mainnet key cannot derive test-network addresses.
 *
 * With `accountXpub` (the operator's `ONCHAIN_XPUB`, an account-level xpub/tpub/zpub/vpub), receive
 * addresses derive from the operator's own wallet instead, and the service holds no on-chain
 * private key: money received on-chain is then spendable by that wallet. Without it, received
 * money sits at addresses only this service's sealed master key can spend.
 */
export async function loadBitcoinKeys(
  q: Queryable,
  box: SecretBox,
  network: Network,
  opts: { accountXpub?: string } = {},
): Promise<BitcoinKeys> {
  const nodeKeyHex = await sealedSetting(q, box, 'ln_node_key', () => bytesToHex(newNodeKey()))
  const nodePrivateKey = hexToBytes(nodeKeyHex)
  const node = { nodePrivateKey, nodePublicKey: bytesToHex(secp256k1.getPublicKey(nodePrivateKey, true)) }
  const xpub = opts.accountXpub
  if (xpub) {
    try {
      deriveReceiveAddress(xpub, 0, network)
    } catch (err) {
      throw new ConfigError(`ONCHAIN_XPUB: ${(err as Error).message}`)
    }
    return {
      ...node,
      masterKey: null,
      accountXpub: xpub,
      receiveAddress: (i) => deriveReceiveAddress(xpub, i, network),
    }
  }
  const masterKey = await sealedSetting(q, box, `onchain_master_key_${network}`, () => newMasterKey(network))
  return {
    ...node,
    masterKey,
    accountXpub: deriveAccountXpub(masterKey, network),
    receiveAddress: (index) => deriveReceiveAddress(masterKey, index, network),
  }
}

/** A valid secp256k1 private key from the system's random source. */
function newNodeKey(): Uint8Array {
  for (;;) {
    const candidate = new Uint8Array(randomBytes(32))
    if (secp256k1.utils.isValidSecretKey(candidate)) return candidate
  }
}

async function sealedSetting(
  q: Queryable,
  box: SecretBox,
  name: string,
  generate: () => string,
): Promise<string> {
  const existing = await q.query<{ value: string }>(sql`SELECT value FROM settings WHERE name = ${name}`)
  if (existing.rows[0]) return box.open(existing.rows[0].value)
  await q.query(
    sql`INSERT INTO settings (name, value) VALUES (${name}, ${box.seal(generate())}) ON CONFLICT (name) DO NOTHING`,
  )
  const { rows } = await q.query<{ value: string }>(sql`SELECT value FROM settings WHERE name = ${name}`)
  return box.open(rows[0]!.value)
}

/** The sealed settings this folder owns (src/db/reseal.ts): the Lightning node key, the wallets' keys. */
export const BITCOIN_SEALED_COLUMNS: readonly SealedColumn[] = [
  {
    name: 'settings.node_and_wallet_keys',
    table: 'settings',
    id: 'name',
    column: 'value',
    where: sql`(name = 'ln_node_key' OR name LIKE 'onchain_master_key_%')`,
  },
]
