import { describe, expect, it } from 'vitest'
import { observeRail, withAttemptLog, type AttemptLog } from './attempts.js'
import { RailFailure } from './rail.js'

/** What an observed rail notes while a transaction is advanced, and that it changes nothing else. */
function rail() {
  return {
    name: 'test-rail',
    calls: 0,
    async answer(value: number) {
      this.calls++
      return value * 2
    },
    async refuse(): Promise<never> {
      throw new RailFailure('route_not_found', 'no route', false)
    },
    async timeOut(): Promise<never> {
      throw new RailFailure('node_timeout', 'no answer', true)
    },
    async misread(): Promise<never> {
      throw new SyntaxError('Unexpected token < in JSON')
    },
    plain(value: string) {
      return value.toUpperCase()
    },
  }
}

describe('observeRail', () => {
  it('notes each call to a rail while a transaction is advanced, answers and failures alike', async () => {
    const target = rail()
    const observed = observeRail('lightning', target)
    const log: AttemptLog = { calls: [] }
    await withAttemptLog(log, async () => {
      expect(await observed.answer(21)).toBe(42)
      await expect(observed.refuse()).rejects.toThrow(RailFailure)
      await expect(observed.timeOut()).rejects.toThrow('no answer')
      await expect(observed.misread()).rejects.toThrow(SyntaxError)
      expect(observed.plain('x')).toBe('X')
    })
    expect(log.calls).toEqual([
      { rail: 'lightning', ok: true },
      { rail: 'lightning', ok: false, code: 'route_not_found', retryable: false },
      { rail: 'lightning', ok: false, code: 'node_timeout', retryable: true },
      { rail: 'lightning', ok: false, code: 'unexpected_error', retryable: true },
    ])
    // The rail itself is unchanged: its own state, its name, the same method each time.
    expect([target.calls, observed.name, observed.answer === observed.answer]).toEqual([1, 'test-rail', true])
  })

  it('notes nothing outside the worker', async () => {
    const log: AttemptLog = { calls: [] }
    const observed = observeRail('bank', rail())
    await withAttemptLog(log, async () => undefined)
    expect(await observed.answer(1)).toBe(2)
    expect(log.calls).toEqual([])
  })
})
