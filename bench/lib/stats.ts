/**
 * The arithmetic that lets a figure be judged on a shared, noisy machine: per-operation rates,
 * normalisation by a control measured in the same run, and the spread of alternating rounds.
 * Pure functions (unit-tested in test/bench-stats.test.ts).
 */

/** `(after - before) / ops`, rounded to `digits`; undefined when a side is missing or nothing was done. */
export function perOp(
  before: number | undefined,
  after: number | undefined,
  ops: number,
  digits = 3,
): number | undefined {
  if (before === undefined || after === undefined || !(ops > 0)) return undefined
  return roundTo((after - before) / ops, digits)
}

/**
 * A figure divided by its control from the same run: e.g. the server's CPU per swap divided by the
 * load client's CPU per HTTP request, or PostgreSQL's CPU per swap divided by its CPU per pgbench
 * transaction. What slows every process on the machine (neighbours, frequency, caches) moves both
 * alike, so the quotient moves less than either. Undefined without a positive control.
 */
export function normalise(
  value: number | undefined,
  control: number | undefined,
  digits = 3,
): number | undefined {
  if (value === undefined || control === undefined || !(control > 0)) return undefined
  return roundTo(value / control, digits)
}

export interface Spread {
  values: number[]
  mean: number
  min: number
  max: number
  /** (max - min) / mean, as a fraction: 0.08 is ±4% around the mean. */
  relSpread: number
}

/** Mean and min–max of one figure over rounds; undefined without values. */
export function spreadOf(values: Array<number | undefined>): Spread | undefined {
  const v = values.filter((x): x is number => x !== undefined && Number.isFinite(x))
  if (v.length === 0) return undefined
  const mean = v.reduce((a, b) => a + b, 0) / v.length
  const min = Math.min(...v)
  const max = Math.max(...v)
  return { values: v, mean, min, max, relSpread: mean === 0 ? 0 : (max - min) / Math.abs(mean) }
}

export interface Comparison {
  before: Spread
  after: Spread
  /** mean(after) / mean(before). */
  ratio: number
  /** after / before of each round's pair (round i's after against round i's before), and their range. */
  pairRatios: number[]
  ratioMin: number
  ratioMax: number
  /** The two min–max ranges do not overlap: the change is larger than the run-to-run drift seen here. */
  outsideSpread: boolean
}

/**
 * Before against after over alternating rounds. Round i's before and after ran next to each other,
 * so their ratio shares that moment's load; the range of those pair ratios is the ratio's range.
 */
export function compare(
  before: Array<number | undefined>,
  after: Array<number | undefined>,
): Comparison | undefined {
  const b = spreadOf(before)
  const a = spreadOf(after)
  if (!b || !a || b.mean === 0) return undefined
  const pairRatios: number[] = []
  for (let i = 0; i < Math.min(before.length, after.length); i++) {
    const x = before[i]
    const y = after[i]
    if (x !== undefined && y !== undefined && x !== 0 && Number.isFinite(x) && Number.isFinite(y))
      pairRatios.push(y / x)
  }
  const ratio = a.mean / b.mean
  return {
    before: b,
    after: a,
    ratio,
    pairRatios,
    ratioMin: pairRatios.length ? Math.min(...pairRatios) : ratio,
    ratioMax: pairRatios.length ? Math.max(...pairRatios) : ratio,
    outsideSpread: a.min > b.max || a.max < b.min,
  }
}

/**
 * CPU spent by a set of processes between two readings (pid -> CPU ms so far): what each process of
 * the second reading spent since the first, a process new in the second counted whole (it started
 * in between). A process that ended in between took its time with it and is not counted.
 */
export function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0)
  return total
}

export const roundTo = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits
