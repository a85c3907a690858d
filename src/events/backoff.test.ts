import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

import {
  ATTEMPTS_MAX,
  BACKOFF_BASE_MS,
  BACKOFF_CAP_MS,
  nextAttemptDelayMs,
  nominalDelayMs,
} from './backoff.js'

const HOUR_MS = 60 * 60 * 1000

/** mulberry32: a small seeded generator, so every run of these tests sees the same numbers. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Every wait of one delivery's life, from the first failure until the schedule gives up. */
function schedule(random: () => number): number[] {
  const delays: number[] = []
  for (let attempt = 1; ; attempt++) {
    const delay = nextAttemptDelayMs(attempt, random)
    if (delay === null) return delays
    delays.push(delay)
  }
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0)

describe('nominalDelayMs', () => {
  it('starts at 5 s, doubles, and stops at the two-hour cap', () => {
    expect(nominalDelayMs(1)).toBe(5_000)
    expect(nominalDelayMs(2)).toBe(10_000)
    expect(nominalDelayMs(3)).toBe(20_000)
    expect(nominalDelayMs(11)).toBe(5_120_000)
    expect(nominalDelayMs(12)).toBe(BACKOFF_CAP_MS)
    expect(nominalDelayMs(1_000)).toBe(BACKOFF_CAP_MS)
  })
})

describe('nextAttemptDelayMs', () => {
  it('allows ATTEMPTS_MAX attempts in all, then returns null', () => {
    expect(ATTEMPTS_MAX).toBe(27)
    expect(nextAttemptDelayMs(ATTEMPTS_MAX - 1, () => 0.5)).not.toBeNull()
    expect(nextAttemptDelayMs(ATTEMPTS_MAX, () => 0.5)).toBeNull()
    expect(nextAttemptDelayMs(ATTEMPTS_MAX + 5, () => 0.5)).toBeNull()
    expect(schedule(Math.random)).toHaveLength(ATTEMPTS_MAX - 1)
  })

  it('keeps every wait within [nominal / 2, nominal] and never above the cap', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: ATTEMPTS_MAX - 1 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, share) => {
          const delay = nextAttemptDelayMs(attempt, () => share)
          expect(delay).not.toBeNull()
          expect(Number.isInteger(delay)).toBe(true)
          expect(delay).toBeGreaterThanOrEqual(nominalDelayMs(attempt) / 2)
          expect(delay).toBeLessThanOrEqual(nominalDelayMs(attempt))
          expect(delay).toBeLessThanOrEqual(BACKOFF_CAP_MS)
        },
      ),
    )
  })

  it('gives the first retry between 2.5 and 5 seconds', () => {
    expect(nextAttemptDelayMs(1, () => 0)).toBe(BACKOFF_BASE_MS / 2)
    expect(nextAttemptDelayMs(1, () => 0.999999)).toBe(BACKOFF_BASE_MS - 1)
  })

  it('spans about 24 hours in total for seeded random sequences', () => {
    for (const seed of [1, 2, 42, 2024, 0xdeadbeef]) {
      const totalMs = sum(schedule(seededRandom(seed)))
      // The mean is 24.6 h; the spread of the sum of 26 uniform shares is about an hour.
      expect(totalMs).toBeGreaterThan(21 * HOUR_MS)
      expect(totalMs).toBeLessThan(28 * HOUR_MS)
    }
  })

  it('stays within the documented extremes: 16.4 h at the least, 32.8 h at the most', () => {
    const shortestMs = sum(schedule(() => 0))
    const longestMs = sum(schedule(() => 1 - Number.EPSILON))
    expect(shortestMs).toBe(59_117_500)
    expect(shortestMs / HOUR_MS).toBeCloseTo(16.42, 2)
    expect(longestMs).toBeLessThanOrEqual(118_235_000)
    expect(longestMs).toBeGreaterThan(118_235_000 - ATTEMPTS_MAX)
    expect(longestMs / HOUR_MS).toBeCloseTo(32.84, 2)
  })

  it('actually spreads retries across the jitter window', () => {
    const random = seededRandom(7)
    const samples = Array.from({ length: 2_000 }, () => nextAttemptDelayMs(20, random) ?? Number.NaN)
    const low = Math.min(...samples)
    const high = Math.max(...samples)
    expect(low).toBeLessThan(BACKOFF_CAP_MS / 2 + 0.02 * BACKOFF_CAP_MS)
    expect(high).toBeGreaterThan(BACKOFF_CAP_MS - 0.02 * BACKOFF_CAP_MS)
    expect(new Set(samples).size).toBeGreaterThan(1_900)
  })

  it('rejects attempt numbers that are not positive integers, and a broken random source', () => {
    expect(() => nextAttemptDelayMs(0)).toThrow()
    expect(() => nextAttemptDelayMs(-1)).toThrow()
    expect(() => nextAttemptDelayMs(1.5)).toThrow()
    expect(() => nextAttemptDelayMs(1, () => 1)).toThrow()
    expect(() => nextAttemptDelayMs(1, () => Number.NaN)).toThrow()
  })
})
