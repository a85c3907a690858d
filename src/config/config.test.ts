import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from './config.js'
import { adminToken, masterKey, readAdminToken } from './local-secrets.js'

describe('loadConfig', () => {
  it('runs on the embedded sandbox default with no configuration at all', () => {
    const c = loadConfig({})
    expect(c).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      publicBaseUrl: 'http://localhost:8080',
      invoicePageUrl: 'http://localhost:8080/pay',
      databaseUrl: undefined,
      redisUrl: undefined,
      rails: 'sandbox',
      lightning: 'sandbox',
      onchain: 'sandbox',
      tron: 'sandbox',
      vnd: 'sandbox',
      network: 'regtest',
      walletCurrencies: ['BTC', 'USDT', 'VND', 'USD', 'CAD'],
      tokenTtlS: 3600,
      quoteTtlS: 120,
      invoiceExpiryS: 3600,
      onchainConfirmations: 1,
      onchainReceiveTtlS: 86_400,
      role: 'all',
      webhookVariant: 'a',
      allowHttpWebhooks: true,
      allowPrivateWebhooks: false,
      ratesProvider: 'static',
      ratesMaxAgeS: 300,
      fxSpreadBps: 50n,
      logLevel: 'info',
      dbPoolMax: 20,
      bodyLimitBytes: 64 * 1024,
      tronNetworkFeeUsdtMinor: 1_000_000n,
      sandboxPayoutDelayMs: 1500,
    })
    expect(c.dataDir).toBe(join(process.cwd(), 'data'))
    expect(c.ratesFile).toMatch(/rates[\\/]static-rates\.json$/)
    expect(c.fees.swap).toEqual({ fixedMinor: 0n, bps: 50n })
  })

  it('switches rail defaults when RAILS=real', () => {
    const c = loadConfig({ RAILS: 'real' })
    expect(c).toMatchObject({
      lightning: 'lnd',
      onchain: 'bitcoind',
      tron: 'trongrid',
      vnd: 'bank-http',
      eth: 'jsonrpc',
      network: 'mainnet',
      onchainConfirmations: 3,
      allowHttpWebhooks: false,
    })
    expect(loadConfig({ RAILS: 'real', ONCHAIN: 'esplora', NETWORK: 'signet' })).toMatchObject({
      onchain: 'esplora',
      network: 'signet',
    })
  })

  it('reads every setting it is given', () => {
    const c = loadConfig({
      PORT: '9000',
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: 'https://pay.example.com/',
      DATABASE_URL: 'postgres://u@db/x',
      DATA_DIR: '/tmp/svcpay-x',
      REDIS_URL: 'redis://cache:6379',
      WALLET_CURRENCIES: ' btc , usdt,eur ',
      TOKEN_TTL_S: '600',
      ROLE: 'worker',
      WEBHOOK_VARIANT: 'b',
      ALLOW_HTTP_WEBHOOKS: 'false',
      ALLOW_PRIVATE_WEBHOOKS: '1',
      RATES_PROVIDER: 'live',
      RATES_LIVE_URL: 'http://127.0.0.1:1/simple/price',
      RATES_MAX_AGE_S: '60',
      FX_SPREAD_BPS: '0',
      FEE_VND_INSTANT: '5000+25',
      LOG_LEVEL: 'silent',
      SANDBOX_TRON_FAIL: 'Tabc, Tdef',
      DB_POOL_MAX: '5',
      TRON_NETWORK_FEE_USDT: '0.5',
      SANDBOX_PAYOUT_DELAY_MS: '0',
    })
    expect(c).toMatchObject({
      port: 9000,
      host: '127.0.0.1',
      publicBaseUrl: 'https://pay.example.com',
      invoicePageUrl: 'https://pay.example.com/pay',
      databaseUrl: 'postgres://u@db/x',
      dataDir: '/tmp/svcpay-x',
      redisUrl: 'redis://cache:6379',
      walletCurrencies: ['BTC', 'USDT', 'EUR'],
      tokenTtlS: 600,
      role: 'worker',
      webhookVariant: 'b',
      allowHttpWebhooks: false,
      allowPrivateWebhooks: true,
      ratesProvider: 'live',
      ratesLiveUrl: 'http://127.0.0.1:1/simple/price',
      ratesMaxAgeS: 60,
      fxSpreadBps: 0n,
      logLevel: 'silent',
      sandboxTronFail: ['Tabc', 'Tdef'],
      dbPoolMax: 5,
      tronNetworkFeeUsdtMinor: 500_000n,
      sandboxPayoutDelayMs: 0,
    })
    expect(c.fees['vnd-instant']).toEqual({ fixedMinor: 5000n, bps: 25n })
  })

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '', ROLE: '' })).toMatchObject({
      port: 8080,
      databaseUrl: undefined,
      role: 'all',
    })
  })

  const failures: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'abc' }, /^PORT: expected a whole number from 0 to 65535, got "abc"$/],
    [{ PORT: '70000' }, /^PORT: .*got "70000"/],
    [{ PORT: '-1' }, /^PORT: /],
    [{ PORT: '80.5' }, /^PORT: /],
    [{ TOKEN_TTL_S: '5' }, /^TOKEN_TTL_S: expected a whole number from 10 to 86400/],
    [{ RATES_MAX_AGE_S: '1' }, /^RATES_MAX_AGE_S: /],
    [{ FX_SPREAD_BPS: '6000' }, /^FX_SPREAD_BPS: /],
    [{ DB_POOL_MAX: '0' }, /^DB_POOL_MAX: /],
    [{ RAILS: 'prod' }, /^RAILS: expected one of sandbox, real, got "prod"$/],
    [{ NETWORK: 'testnet4' }, /^NETWORK: expected one of /],
    [{ ROLE: 'both' }, /^ROLE: expected one of all, api, worker/],
    [{ LIGHTNING: 'cln' }, /^LIGHTNING: /],
    [{ LOG_LEVEL: 'verbose' }, /^LOG_LEVEL: /],
    [{ RATES_PROVIDER: 'coingecko' }, /^RATES_PROVIDER: /],
    [{ WEBHOOK_VARIANT: 'c' }, /^WEBHOOK_VARIANT: /],
    [{ ALLOW_HTTP_WEBHOOKS: 'yes' }, /^ALLOW_HTTP_WEBHOOKS: expected true or false, got "yes"$/],
    [{ PUBLIC_BASE_URL: 'ftp://example.com' }, /^PUBLIC_BASE_URL: expected an http\(s\) URL/],
    [{ PUBLIC_BASE_URL: 'not a url' }, /^PUBLIC_BASE_URL: /],
    [{ INVOICE_PAGE_URL: 'javascript:alert(1)' }, /^INVOICE_PAGE_URL: /],
    [{ RATES_LIVE_URL: 'file:///etc/passwd' }, /^RATES_LIVE_URL: /],
    [{ WALLET_CURRENCIES: 'BTC,XYZ' }, /^WALLET_CURRENCIES: unknown currency XYZ$/],
    [{ WALLET_CURRENCIES: 'USD,VND' }, /^WALLET_CURRENCIES must include BTC$/],
    [{ WALLET_CURRENCIES: 'BTC,ETH' }, /^WALLET_CURRENCIES: ETH wallets are not supported/],
    [{ FEE_SWAP: 'ten' }, /^FEE_SWAP: expected <fixed minor units>\+<bps>, got ten$/],
    [{ FEE_ONCHAIN_SEND: '0+20000' }, /^FEE_ONCHAIN_SEND: /],
    [{ FEE_VND_INSTANT: '-1+5' }, /^FEE_VND_INSTANT: /],
    [{ TRON_NETWORK_FEE_USDT: '0.0000001' }, /^TRON_NETWORK_FEE_USDT: expected a USDT amount/],
    [{ TRON_NETWORK_FEE_USDT: '-1' }, /^TRON_NETWORK_FEE_USDT: /],
    [{ SANDBOX_PAYOUT_DELAY_MS: '1e3' }, /^SANDBOX_PAYOUT_DELAY_MS: /],
  ]
  it.each(failures)('fails fast on %j with a message naming the variable', (env, message) => {
    let caught: unknown
    try {
      loadConfig(env)
    } catch (err) {
      caught = err
    }
    expect(caught).toBeInstanceOf(ConfigError)
    expect((caught as Error).message).toMatch(message)
  })
})

describe('local secrets', () => {
  const dirs: string[] = []
  const freshDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'svcpay-cfg-'))
    dirs.push(d)
    return join(d, 'data')
  }
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
  })

  it('generates the master key and admin token once in DATA_DIR, readable only by the owner', () => {
    const dataDir = freshDir()
    const config = loadConfig({ DATA_DIR: dataDir })
    expect(readAdminToken(config)).toBeUndefined()
    const key = masterKey(config)
    expect(key.length).toBe(32)
    expect(masterKey(config).equals(key)).toBe(true)
    const token = adminToken(config)
    expect(token).toMatch(/^adm_[A-Za-z0-9_-]{32}$/)
    expect(adminToken(config)).toBe(token)
    expect(readAdminToken(config)).toBe(token)
    expect(readFileSync(join(dataDir, 'admin-token'), 'utf8').trim()).toBe(token)
    for (const file of ['master.key', 'admin-token']) {
      expect(statSync(join(dataDir, file)).mode & 0o777).toBe(0o600)
    }
  })

  it('uses configured secrets and checks them', () => {
    const dataDir = freshDir()
    const hex = 'ab'.repeat(32)
    expect(masterKey(loadConfig({ DATA_DIR: dataDir, MASTER_KEY: hex })).toString('hex')).toBe(hex)
    const b64 = Buffer.alloc(32, 7).toString('base64')
    expect(masterKey(loadConfig({ DATA_DIR: dataDir, MASTER_KEY: b64 })).equals(Buffer.alloc(32, 7))).toBe(
      true,
    )
    expect(() => masterKey(loadConfig({ DATA_DIR: dataDir, MASTER_KEY: 'ab'.repeat(16) }))).toThrow(
      ConfigError,
    )
    expect(() => masterKey(loadConfig({ DATA_DIR: dataDir, MASTER_KEY: 'short' }))).toThrow(
      /MASTER_KEY: expected 32 bytes/,
    )
    const configured = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: 'a-long-enough-admin-token' })
    expect(adminToken(configured)).toBe('a-long-enough-admin-token')
    expect(readAdminToken(configured)).toBe('a-long-enough-admin-token')
    expect(() => adminToken(loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: 'short' }))).toThrow(
      /ADMIN_TOKEN: use at least 16/,
    )
  })
})

describe('TRUST_PROXY', () => {
  it('is off when unset, and reads a hop count or the proxies’ addresses', () => {
    expect(loadConfig({}).trustProxy).toBe(false)
    expect(loadConfig({ TRUST_PROXY: '' }).trustProxy).toBe(false)
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false)
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1)
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2)
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8' }).trustProxy).toEqual(['10.0.0.0/8'])
    expect(loadConfig({ TRUST_PROXY: ' 10.0.0.0/8, 127.0.0.1 ,fd00::/8,loopback' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      'fd00::/8',
      'loopback',
    ])
  })

  it('refuses true, which would take the address the client writes itself', () => {
    let caught: unknown
    try {
      loadConfig({ TRUST_PROXY: 'true' })
    } catch (err) {
      caught = err
    }
    expect(caught).toBeInstanceOf(ConfigError)
    expect((caught as Error).message).toMatch(
      /^TRUST_PROXY: .*X-Forwarded-For.*TRUST_PROXY=1.*TRUST_PROXY=10\.0\.0\.0\/8/,
    )
  })

  it.each(['yes', '0.0.0.0/33', '10.0.0.300', '1.2.3.4/x', '::1/129', '10.0.0.1,', '100', '-1', '*'])(
    'refuses %j, naming the variable',
    (value) => {
      expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(/^TRUST_PROXY: /)
    },
  )
})
