import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { address as btcAddress, networks } from 'bitcoinjs-lib'
import { createTestDb } from '../../test/helpers/harness.js'
import { migrate } from '../db/migrate.js'
import type { Db } from '../db/db.js'
import { createSecretBox } from '../shared/secret-box.js'
import { loadBitcoinKeys } from './keys.js'
import { deriveReceiveAddress } from './bip84.js'

describe('the service Bitcoin keys', () => {
  let db: Db
  let drop: () => Promise<void>
  const box = createSecretBox(randomBytes(32))
  beforeAll(async () => {
    ;({ db, drop } = await createTestDb())
    await migrate(db)
  })
  afterAll(async () => {
    await db?.close()
    await drop?.()
  })

  it('are generated once, kept sealed in settings, and the same for every later load (another instance, a restart)', async () => {
    const [first, second] = await Promise.all([
      loadBitcoinKeys(db, box, 'regtest'),
      loadBitcoinKeys(db, box, 'regtest'),
    ])
    const third = await loadBitcoinKeys(db, box, 'regtest')
    for (const k of [second, third]) {
      expect(bytesToHex(k.nodePrivateKey)).toBe(bytesToHex(first.nodePrivateKey))
      expect(k.masterKey).toBe(first.masterKey)
    }
    expect(first.nodePublicKey).toBe(bytesToHex(secp256k1.getPublicKey(first.nodePrivateKey, true)))
    expect(first.masterKey).toMatch(/^tprv/)
    expect(first.accountXpub).toMatch(/^tpub/)
    const { rows } = await db.query<{ name: string; value: string }>(
      'SELECT name, value FROM settings ORDER BY name',
    )
    const stored = Object.fromEntries(rows.map((r) => [r.name, r.value]))
    expect(Object.keys(stored)).toEqual(expect.arrayContaining(['ln_node_key', 'onchain_master_key_regtest']))
    // Sealed: neither secret appears in the clear.
    expect(stored.ln_node_key).not.toContain(bytesToHex(first.nodePrivateKey))
    expect(stored.onchain_master_key_regtest).not.toContain(first.masterKey!)
    expect(box.open(stored.onchain_master_key_regtest!)).toBe(first.masterKey)
  })

  it('derive BIP84 receive addresses that an independent library accepts', async () => {
    const keys = await loadBitcoinKeys(db, box, 'regtest')
    const a0 = keys.receiveAddress(0)
    expect(a0).toBe(deriveReceiveAddress(keys.masterKey!, 0, 'regtest'))
    expect(keys.receiveAddress(1)).not.toBe(a0)
    // The watch-only account key derives the same addresses as the master key.
    expect(deriveReceiveAddress(keys.accountXpub, 7, 'regtest')).toBe(keys.receiveAddress(7))
    expect(btcAddress.toOutputScript(a0, networks.regtest).length).toBe(22)
  })

  it("derive from the operator's own account key when ONCHAIN_XPUB is given, holding no on-chain secret", async () => {
    const own = await loadBitcoinKeys(db, box, 'regtest')
    const watchOnly = await loadBitcoinKeys(db, box, 'regtest', { accountXpub: own.accountXpub })
    expect(watchOnly.masterKey).toBeNull()
    expect(watchOnly.receiveAddress(3)).toBe(own.receiveAddress(3))
    expect(watchOnly.nodePublicKey).toBe(own.nodePublicKey)
    await expect(loadBitcoinKeys(db, box, 'regtest', { accountXpub: 'xpub-nonsense' })).rejects.toThrow(
      /ONCHAIN_XPUB/,
    )
    const mainnetXpub = (await loadBitcoinKeys(db, box, 'mainnet')).accountXpub
    await expect(loadBitcoinKeys(db, box, 'regtest', { accountXpub: mainnetXpub })).rejects.toThrow(
      /ONCHAIN_XPUB/,
    )
  })

  it('keep a separate extended key per network family', async () => {
    const main = await loadBitcoinKeys(db, box, 'mainnet')
    expect(main.masterKey).toMatch(/^xprv/)
    expect(main.receiveAddress(0)).toMatch(/^bc1q/)
    expect(btcAddress.toOutputScript(main.receiveAddress(0), networks.bitcoin).length).toBe(22)
    // The node key is one key, whatever the network.
    expect(main.nodePublicKey).toBe((await loadBitcoinKeys(db, box, 'regtest')).nodePublicKey)
  })
})
