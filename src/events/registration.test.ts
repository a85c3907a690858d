import { describe, expect, it } from 'vitest'

import { ApiError } from '../shared/errors.js'
import { checkedCallback, checkedSecret, SECRET_LENGTH_MAX, SECRET_LENGTH_MIN } from './registration.js'

/** A resolver over a fixed zone, as the tests' stand-in for DNS. */
const zone = (names: Record<string, string[]>) => async (name: string) =>
  (names[name] ?? []).map((address) => ({ address, family: (address.includes(':') ? 6 : 4) as 4 | 6 }))

async function refusal(run: () => Promise<unknown> | unknown) {
  try {
    await run()
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError)
    return { code: (err as ApiError).code, details: (err as ApiError).details }
  }
  throw new Error('expected a refusal')
}

describe('the registration checks, alone', () => {
  it('bounds the secret on both sides', async () => {
    expect(checkedSecret('s'.repeat(SECRET_LENGTH_MIN))).toHaveLength(SECRET_LENGTH_MIN)
    expect(checkedSecret('s'.repeat(SECRET_LENGTH_MAX))).toHaveLength(SECRET_LENGTH_MAX)
    expect(await refusal(() => checkedSecret('s'.repeat(SECRET_LENGTH_MIN - 1)))).toEqual({
      code: 'invalid_request',
      details: [{ field: 'secret', issue: `must be at least ${SECRET_LENGTH_MIN} characters` }],
    })
    expect(await refusal(() => checkedSecret('s'.repeat(SECRET_LENGTH_MAX + 1)))).toEqual({
      code: 'invalid_request',
      details: [{ field: 'secret', issue: `must be at most ${SECRET_LENGTH_MAX} characters` }],
    })
  })

  it('refuses a name that points into a private range unless private receivers are allowed', async () => {
    const resolveHost = zone({ 'inside.example': ['10.1.2.3'], 'outside.example': ['93.184.215.14'] })
    const strict = { allowHttp: false, allowPrivate: false, resolveHost }
    expect(await checkedCallback(strict, 'https://outside.example/hook')).toBe('https://outside.example/hook')
    const refused = await refusal(() => checkedCallback(strict, 'https://inside.example/hook'))
    expect(refused.code).toBe('invalid_request')
    expect(refused.details?.[0]?.field).toBe('callback')
    expect(await checkedCallback({ ...strict, allowPrivate: true }, 'https://inside.example/hook')).toBe(
      'https://inside.example/hook',
    )
  })

  it('refuses when any one of the addresses is refused, IPv6 included', async () => {
    const resolveHost = zone({ 'mixed.example': ['93.184.215.14', 'fd00::1'] })
    const refused = await refusal(() =>
      checkedCallback({ allowHttp: false, allowPrivate: false, resolveHost }, 'https://mixed.example/'),
    )
    expect(refused.details?.[0]?.field).toBe('callback')
  })

  it('accepts a name that does not resolve now; delivery checks it again', async () => {
    const resolveHost = async () => {
      throw Object.assign(new Error('queryA ENOTFOUND'), { code: 'ENOTFOUND' })
    }
    expect(
      await checkedCallback(
        { allowHttp: false, allowPrivate: false, resolveHost },
        'https://later.example/x',
      ),
    ).toBe('https://later.example/x')
  })
})
