import { describe, expect, it } from 'vitest'
import { amountOutcome, receiveCompletionMsg } from './receive-outcome.js'

describe('a receive completing with what arrived', () => {
  it('is exact, underpaid or overpaid against what it asked for, to the minor unit', () => {
    expect(amountOutcome(100_000n, 100_000n)).toBe('exact')
    expect(amountOutcome(100_000n, 99_999n)).toBe('underpaid')
    expect(amountOutcome(100_000n, 100_001n)).toBe('overpaid')
  })

  it("has msg '' when exact, else underpaid or overpaid", () => {
    expect(receiveCompletionMsg(500_000n, 500_000n)).toBe('')
    expect(receiveCompletionMsg(500_000n, 400_000n)).toBe('underpaid')
    expect(receiveCompletionMsg(100_000n, 40_000n)).toBe('underpaid')
    expect(receiveCompletionMsg(20_000n, 21_234n)).toBe('overpaid')
  })
})
