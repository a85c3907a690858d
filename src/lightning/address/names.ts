/**
 * Lightning Address usernames (LUD-16): the part before `@` may hold only `a-z0-9-_.`. Upper case
 * is refused rather than lowered, so that the name an account claims is exactly the name it will
 * be paid at. Names an operator or a payer could mistake for the service itself are reserved.
 */

/** LUD-16's characters; at most 64, the length of an e-mail address's local part. */
export const USERNAME_PATTERN = '^[a-z0-9._-]{1,64}$'
const USERNAME = new RegExp(USERNAME_PATTERN)

/** Names no account may claim. */
export const RESERVED_USERNAMES: ReadonlySet<string> = new Set([
  'abuse',
  'admin',
  'administrator',
  'api',
  'billing',
  'help',
  'hostmaster',
  'info',
  'mail',
  'noreply',
  'no-reply',
  'operator',
  'pay',
  'postmaster',
  'root',
  'security',
  'support',
  'svcpay',
  'system',
  'webmaster',
  'www',
])

/** Why a username cannot be claimed, or undefined when it can. */
export function usernameIssue(username: string): string | undefined {
  if (!USERNAME.test(username))
    return 'must be 1 to 64 characters of a-z, 0-9, "-", "_" and "." (LUD-16; lower case only)'
  // `.` and `..` are dot segments every URL parser resolves away (`/.well-known/lnurlp/..` is
  // `/.well-known/`), and wallets read the name as an e-mail local part (RFC 5322 dot-atom: no dot
  // at either end, none doubled), so such a name could be claimed but never paid.
  if (username.startsWith('.') || username.endsWith('.') || username.includes('..'))
    return 'must not begin or end with "." or hold ".." (wallets read it as an e-mail local part)'
  if (RESERVED_USERNAMES.has(username)) return 'is reserved'
  return undefined
}

/** True when `username` could name an address here (the LNURL endpoints answer others alike: unknown). */
export const isUsernameShape = (username: string) => USERNAME.test(username)
