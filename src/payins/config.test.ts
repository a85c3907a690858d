import { describe, expect, it } from 'vitest'
import { ConfigError } from '../config/config.js'
import { vndReceiveConfig } from './config.js'

const ACCOUNT = {
  VND_RECEIVE_BANK_BIN: '970415',
  VND_RECEIVE_ACCOUNT: '113366668888',
  VND_RECEIVE_ACCOUNT_NAME: 'CONG TY SVCPAY',
}

describe('the VND receive configuration', () => {
  it('has a sandbox account by default, on with the sandbox bank and off with bank-http', () => {
    expect(vndReceiveConfig({ vnd: 'sandbox', env: {} })).toEqual({
      enabled: true,
      bankBin: '970436',
      bankName: 'Vietcombank',
      accountNumber: '0071000888999',
      accountName: 'SVCPAY SANDBOX',
      ttlS: 900,
    })
    expect(vndReceiveConfig({ vnd: 'bank-http', env: {} }).enabled).toBe(false)
  })

  it('refuses to start with bank-http receiving and no collecting account', () => {
    expect(() => vndReceiveConfig({ vnd: 'bank-http', env: { VND_RECEIVE: 'true' } })).toThrow(
      /VND_RECEIVE_BANK_BIN is required/,
    )
    const { VND_RECEIVE_ACCOUNT_NAME: _, ...noName } = ACCOUNT
    expect(() => vndReceiveConfig({ vnd: 'bank-http', env: { VND_RECEIVE: 'true', ...noName } })).toThrow(
      ConfigError,
    )
    expect(vndReceiveConfig({ vnd: 'bank-http', env: { VND_RECEIVE: 'true', ...ACCOUNT } })).toMatchObject({
      enabled: true,
      bankBin: '970415',
      accountNumber: '113366668888',
    })
  })

  it.each([
    [{ VND_RECEIVE_BANK_BIN: '999999' }, /not a known bank BIN/],
    [{ VND_RECEIVE_ACCOUNT: '12-34' }, /VND_RECEIVE_ACCOUNT:/],
    [{ VND_RECEIVE_ACCOUNT_NAME: 'Nguyễn' }, /VND_RECEIVE_ACCOUNT_NAME/],
    [{ VND_RECEIVE_TTL_S: '59' }, /VND_RECEIVE_TTL_S/],
    [{ VND_RECEIVE_TTL_S: '1.5' }, /VND_RECEIVE_TTL_S/],
    [{ VND_RECEIVE: 'yes' }, /VND_RECEIVE:/],
  ])('refuses %j', (env, message) => {
    expect(() => vndReceiveConfig({ vnd: 'sandbox', env })).toThrow(message)
  })
})
