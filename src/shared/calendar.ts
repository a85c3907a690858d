/**
 * Whether the date (and time, when given) at the start of an ISO 8601 text names a moment that
 * exists. `Date.parse` rolls an impossible date over (2021-02-30 becomes 2021-03-02) and accepts
 * hour 24; a query's time is refused instead, so that what was asked is what is read.
 */
export function isRealIsoTime(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(text)
  if (!m) return false
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])]
  if (month < 1 || month > 12 || day < 1) return false
  // Day 0 of the next month is the last day of this one.
  if (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return false
  if (m[4] === undefined) return true
  return Number(m[4]) <= 23 && Number(m[5]) <= 59 && (m[6] === undefined || Number(m[6]) <= 59)
}
