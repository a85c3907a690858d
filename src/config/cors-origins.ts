/** At most this many origins in CORS_ORIGINS. */
export const CORS_ORIGINS_MAX = 100

/**
 * CORS_ORIGINS: a comma-separated list of origins (`https://shop.example.com`,
 * `http://127.0.0.1:5173`), each written back as a browser sends it in `Origin` (lower-case host,
 * no default port, no trailing slash) so that matching is exact. A wildcard, a path, a query or
 * user info is refused: each is a sign of a list that means something else than it says.
 */
export function parseCorsOrigins(text: string | undefined): string[] | Error {
  const out: string[] = []
  for (const item of (text ?? '').split(',')) {
    const given = item.trim()
    if (!given) continue
    let u: URL
    try {
      u = new URL(given)
    } catch {
      return new Error(`expected origins such as https://shop.example.com, got ${JSON.stringify(given)}`)
    }
    if (
      given.includes('*') ||
      (u.protocol !== 'http:' && u.protocol !== 'https:') ||
      u.username ||
      u.password ||
      u.search ||
      u.hash ||
      u.pathname !== '/'
    ) {
      return new Error(
        `expected origins (scheme://host[:port], no wildcard, path or query), got ${JSON.stringify(given)}`,
      )
    }
    if (!out.includes(u.origin)) out.push(u.origin)
  }
  if (out.length > CORS_ORIGINS_MAX) return new Error(`at most ${CORS_ORIGINS_MAX} origins`)
  return out
}
