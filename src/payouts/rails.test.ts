import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDb } from '../../test/helpers/harness.js'
import { migrate } from '../db/migrate.js'
import type { Db } from '../db/db.js'
import { ConfigError, loadConfig } from '../config/config.js'
import { createPayoutRails, ethJsonRpcSettings, ETH_USDT_MAINNET_CONTRACT, tronSendStore } from './rails.js'

const HOT_WALLET_KEY = '11'.repeat(32)

describe('payout rails', () => {
  let db: Db
  let drop: () => Promise<void>
  beforeAll(async () => {
    ;({ db, drop } = await createTestDb())
    await migrate(db)
  })
  afterAll(async () => {
    await db.close()
    await drop()
  })

  it('uses the sandbox rails by default, asked again exactly when a sandbox payout settles', () => {
    const rails = createPayoutRails(loadConfig({ SANDBOX_PAYOUT_DELAY_MS: '250' }), db)
    expect([rails.tron.name, rails.bank.name, rails.eth.name]).toEqual(['sandbox', 'sandbox', 'sandbox'])
    expect(rails.pollMs).toEqual({ tron: 250, bank: 250, eth: 250 })
  })

  it('reads the ETH=jsonrpc settings with their defaults, and refuses bad ones naming the setting, never the key', () => {
    const key = 'ab'.repeat(32)
    const base = { ETH_RPC_URL: 'http://127.0.0.1:8545', ETH_HOT_WALLET_PRIVATE_KEY: `0x${key}` }
    expect(ethJsonRpcSettings(base)).toEqual({
      url: 'http://127.0.0.1:8545',
      privateKeyHex: key,
      usdtContract: ETH_USDT_MAINNET_CONTRACT,
      chainId: 1,
      confirmations: 12,
      replaceAfterMs: 180_000,
    })
    const sepolia = { ...base, ETH_CHAIN_ID: '11155111', ETH_USDT_CONTRACT: '0x' + '12'.repeat(20) }
    expect(
      ethJsonRpcSettings({ ...sepolia, ETH_CONFIRMATIONS: '3', ETH_REPLACE_AFTER_S: '60' }),
    ).toMatchObject({
      chainId: 11_155_111,
      confirmations: 3,
      replaceAfterMs: 60_000,
    })
    for (const [env, message] of [
      [{ ...base, ETH_RPC_URL: '' }, /ETH_RPC_URL is required/],
      [{ ...base, ETH_RPC_URL: 'ws://node' }, /ETH_RPC_URL: expected an http\(s\) URL/],
      [{ ...base, ETH_HOT_WALLET_PRIVATE_KEY: '' }, /ETH_HOT_WALLET_PRIVATE_KEY is required/],
      [{ ...base, ETH_HOT_WALLET_PRIVATE_KEY: key.slice(2) }, /ETH_HOT_WALLET_PRIVATE_KEY: expected 64 hex/],
      [{ ...base, ETH_CHAIN_ID: '5' }, /ETH_USDT_CONTRACT is required with ETH_CHAIN_ID=5/],
      [{ ...base, ETH_CHAIN_ID: '0' }, /ETH_CHAIN_ID: expected a whole number/],
      [
        { ...base, ETH_USDT_CONTRACT: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' },
        /ETH_USDT_CONTRACT: expected 0x/,
      ],
      [{ ...base, ETH_CONFIRMATIONS: '0' }, /ETH_CONFIRMATIONS/],
      [{ ...base, ETH_REPLACE_AFTER_S: '1.5' }, /ETH_REPLACE_AFTER_S/],
    ] as const) {
      let thrown: unknown
      try {
        ethJsonRpcSettings(env)
      } catch (err) {
        thrown = err
      }
      expect(thrown, JSON.stringify(env)).toBeInstanceOf(ConfigError)
      expect((thrown as Error).message).toMatch(message)
      expect((thrown as Error).message).not.toContain(key.slice(2, 20))
    }
    // ETH=jsonrpc with its settings chooses the JSON-RPC adapter; without them it does not start.
    expect(createPayoutRails(loadConfig({ ETH: 'jsonrpc', ...base }), db).eth.name).toBe('jsonrpc')
    expect(() => createPayoutRails(loadConfig({ ETH: 'jsonrpc' }), db)).toThrow(/ETH_RPC_URL is required/)
  })

  it('chooses TronGrid with TRON=trongrid and refuses to start without its hot wallet key', () => {
    const rails = createPayoutRails(
      loadConfig({ TRON: 'trongrid', TRON_HOT_WALLET_PRIVATE_KEY: HOT_WALLET_KEY }),
      db,
    )
    expect(rails.tron.name).toBe('trongrid')
    expect(rails.pollMs.tron).toBe(15_000)
    expect(() => createPayoutRails(loadConfig({ TRON: 'trongrid' }), db)).toThrow(ConfigError)
    expect(() =>
      createPayoutRails(loadConfig({ TRON: 'trongrid', TRON_HOT_WALLET_PRIVATE_KEY: 'nope' }), db),
    ).toThrow(/TRON_HOT_WALLET_PRIVATE_KEY/)
    expect(() =>
      createPayoutRails(
        loadConfig({
          TRON: 'trongrid',
          TRON_HOT_WALLET_PRIVATE_KEY: HOT_WALLET_KEY,
          TRON_FEE_LIMIT_SUN: '1.5',
        }),
        db,
      ),
    ).toThrow(/TRON_FEE_LIMIT_SUN/)
  })

  it('reads TRON_NETWORK, and asks for the USDT contract off mainnet', () => {
    const tron = { TRON: 'trongrid', TRON_HOT_WALLET_PRIVATE_KEY: HOT_WALLET_KEY }
    expect(() => createPayoutRails(loadConfig({ ...tron, TRON_NETWORK: 'testnet' }), db)).toThrow(
      /TRON_NETWORK: expected mainnet, nile or shasta/,
    )
    expect(() => createPayoutRails(loadConfig({ ...tron, TRON_NETWORK: 'nile' }), db)).toThrow(
      /TRON_USDT_CONTRACT is required with TRON_NETWORK=nile/,
    )
    const nile = createPayoutRails(
      loadConfig({
        ...tron,
        TRON_NETWORK: 'nile',
        TRON_USDT_CONTRACT: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
      }),
      db,
    )
    expect(nile.tron.name).toBe('trongrid')
  })

  it('chooses the bank partner with VND=bank-http and refuses to start without its URL and key', () => {
    const env = {
      VND: 'bank-http',
      BANK_PAYOUT_URL: 'https://payouts.partner.example',
      BANK_PAYOUT_API_KEY: 'k',
    }
    const rails = createPayoutRails(loadConfig(env), db)
    expect(rails.bank.name).toBe('bank-http')
    expect(rails.pollMs.bank).toBe(30_000)
    expect(() => createPayoutRails(loadConfig({ ...env, BANK_PAYOUT_URL: '' }), db)).toThrow(
      /BANK_PAYOUT_URL/,
    )
    expect(() => createPayoutRails(loadConfig({ ...env, BANK_PAYOUT_API_KEY: '' }), db)).toThrow(
      /BANK_PAYOUT_API_KEY/,
    )
    expect(() => createPayoutRails(loadConfig({ ...env, BANK_PAYOUT_URL: 'ftp://x' }), db)).toThrow(
      ConfigError,
    )
  })

  it('keeps the TronGrid send record, refusing a second transfer for one request', async () => {
    const store = tronSendStore(db)
    const record = { txHash: 'ab'.repeat(32), signed: '{"txID":"ab"}', expirationMs: 1_795_000_060_000n }
    expect(await store.get('txn_1')).toBeUndefined()
    expect(await store.byHash(record.txHash)).toBeUndefined()
    await store.put('txn_1', record)
    expect(await store.get('txn_1')).toEqual(record)
    expect(await store.byHash(record.txHash)).toEqual(record)
    await store.put('txn_1', record)
    await expect(store.put('txn_1', { ...record, txHash: 'cd'.repeat(32) })).rejects.toThrow(
      /another TRON transfer/,
    )
    expect(await store.get('txn_1')).toEqual(record)
  })

  it('reads a send recorded before the signed transaction was kept as its hash alone', async () => {
    await db.query('INSERT INTO tron_sends (request_id, tx_hash, created_at) VALUES ($1, $2, $3)', [
      'txn_old',
      'ef'.repeat(32),
      1,
    ])
    expect(await tronSendStore(db).get('txn_old')).toEqual({ txHash: 'ef'.repeat(32) })
  })
})
