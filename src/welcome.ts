import type { Container } from './container.js'
import { sql } from './db/sql.js'

/**
 * On the first start of a fresh installation, create a demo account and print how to use it: the
 * credentials are shown this once (the secret is stored encrypted and never shown again).
 */
export async function firstRunWelcome(c: Container): Promise<void> {
  const claimed = await c.db.query(
    sql`INSERT INTO settings (name, value) VALUES ('demo_account', '') ON CONFLICT DO NOTHING`,
  )
  const base = c.config.publicBaseUrl
  if (claimed.rowCount === 0) {
    process.stdout.write(`\nsvcpay is running at ${base}  (API reference: ${base}/docs)\n\n`)
    return
  }
  const account = await c.accounts.create({ displayName: 'Demo account' })
  const key = await c.auth.createKey(account.id)
  await c.db.query(sql`UPDATE settings SET value = ${account.id} WHERE name = 'demo_account'`)
  const body = '{"nonce":"1"}'
  process.stdout.write(`
svcpay is running at ${base}  (API reference: ${base}/docs)

A demo account was created. Its secret is shown only now; keep it.
  accountId:  ${account.id}
  API key:    ${key.apiKey}
  API secret: ${key.apiSecret}

Get an access token (each signature works once: change the body to sign again):
  BODY='${body}'
  SIG=$(printf '%s' "${key.apiKey}&payload=$BODY" | openssl dgst -sha256 -hmac '${key.apiSecret}' | sed 's/^.* //')
  curl -s -X POST ${base}/api/v2/authentication/token-signature \\
    -H 'Content-Type: application/json' -H 'X-Api-Key: ${key.apiKey}' -H "X-Api-Signature: $SIG" -d "$BODY"

Then, with TOKEN set to the accessToken:
  curl -s ${base}/api/v2/account/${account.id}/wallet/ -H "Authorization: Bearer $TOKEN"

Operator commands: npm run svcpay -- --help
`)
}
