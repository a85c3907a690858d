/**
 * The finishing touches of the OpenAPI document at /openapi.json, applied once to the document
 * that @fastify/swagger builds from the route schemas: shared schemas keep their own names, every
 * error answer says when it happens and shows an example body, and the rate-limit headers are
 * described where they are sent. Route files keep declaring only what is particular to them.
 */

import { CODE_MEANINGS, errorCodesOf, errorStatusesOf } from './errors.js'
import { describeOperations, OPERATION_IDS } from './operations.js'
import { RATE_LIMIT_EXEMPT_PATHS } from '../http/rate-limit-headers.js'

type Json = Record<string, any>

/** Shared schemas (`app.addSchema`) appear in components under their `$id` (`Transaction`), not `def-N`. */
export const openapiRefResolver = {
  buildLocalReference(json: Json, _baseUri: unknown, _fragment: unknown, i: number): string {
    return typeof json.$id === 'string' ? json.$id : `def-${i}`
  },
}

/**
 * The document as the page at /docs reads it (/docs/json): its first server is the public address's
 * path without a host, which OpenAPI resolves against the address the document was fetched from, so
 * "Try it out" works from whichever address the page was opened at (http://localhost:8080/docs as
 * well as http://127.0.0.1:8080/docs) without crossing origins; the public address follows. The
 * document at /openapi.json, for generators, keeps the public address alone.
 */
export function docsServers(spec: Readonly<Json>, publicBaseUrl: string): Json {
  return {
    ...spec,
    servers: [
      {
        url: new URL(publicBaseUrl).pathname,
        description: 'This service, at the address this page was opened from',
      },
      { url: publicBaseUrl, description: 'The public address (PUBLIC_BASE_URL)' },
    ],
  }
}

/** One example error body per status. */
const ERROR_EXAMPLES: Record<string, Json> = {
  '400': {
    error: 'invalid_amount',
    message: 'sourceReq.amtRequested: has more than 8 decimal places for BTC',
    details: [{ field: 'sourceReq.amtRequested', issue: 'has more than 8 decimal places for BTC' }],
  },
  '401': { error: 'unauthorized', message: 'Send Authorization: Bearer <accessToken>' },
  '403': { error: 'forbidden', message: 'This token may not read wallets of that account' },
  '404': { error: 'not_found', message: 'Transaction not found' },
  '409': { error: 'duplicate_ext_ref_id', message: 'extRefId was already used for a different transaction' },
  '413': { error: 'payload_too_large', message: 'The request body is larger than 64 KiB' },
  '415': { error: 'unsupported_media_type', message: 'Send the body as application/json' },
  '429': {
    error: 'rate_limit_exceeded',
    message: 'Rate limit exceeded: 5 requests per second for this account; retry after 1 second',
  },
  '500': { error: 'internal_error', message: 'Something went wrong on our side; it has been logged' },
  '503': {
    error: 'service_unavailable',
    message: 'The service is temporarily unavailable; try again shortly',
  },
}

const RATE_LIMIT_HEADERS: Json = {
  'X-RateLimit-Limit': {
    description:
      'Requests allowed in the tightest window that applies: an account or endpoint window once the credentials are verified, otherwise the client address window. Sent on every answer but those of /healthz, /readyz and /metrics.',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': { description: 'Requests left in that window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': {
    description: 'Unix time in seconds when that window resets',
    schema: { type: 'integer' },
  },
  'Retry-After': {
    description: 'Only on a 429: whole seconds to wait, at least 1',
    schema: { type: 'integer' },
  },
}

/** The groups of the reference, in reading order. */
const TAGS = [
  {
    name: 'Authentication',
    description:
      'Sign `<API_KEY>&payload=<body>` (HMAC-SHA256 under the API secret, lowercase hex), exchange it for a JWT, and send it as `Authorization: Bearer <token>` on every other call. Reuse a token until shortly before `expiredAt`; a signature works once.',
  },
  {
    name: 'Accounts',
    description: 'The account, its information and its permanent on-chain deposit address.',
  },
  {
    name: 'Wallets',
    description: 'One wallet per currency: `amount` includes reserved funds, `availableBalance` does not.',
  },
  {
    name: 'Lightning Address',
    description:
      'An account claims a username and is paid by any Lightning wallet at its LNURL, and at `username@domain` where PUBLIC_BASE_URL is https on a domain with no port (LNURL-pay, LUD-06/12/16). See docs/lightning-address.md.',
  },
  { name: 'Rates', description: 'BTC exchange rates.' },
  {
    name: 'Transactions',
    description:
      'Every transaction starts `quoted` and executes when confirmed: Lightning and on-chain receives and sends, swaps, USDT payouts over TRON and Ethereum, and VND bank payouts. Its status can be followed as server-sent events.',
  },
  {
    name: 'Webhooks',
    description:
      'One webhook per account. Each delivery is signed: lowercase hex HMAC-SHA256 of the raw body under the webhook secret, in `X-Svcpay-Signature` (POST on every state change) or `X-Svc-Signature` (PUT on final states).',
  },
  {
    name: 'Fiat payouts',
    description:
      'Reference data for VND bank payouts: banks, source-of-funds codes, and the holder’s name of a bank account.',
  },
  {
    name: 'Bank partner',
    description:
      'Called by the bank partner, not by API clients: what happened to a payout, and money that arrived in our account. No token: the body is signed (`X-Partner-Signature`, lowercase hex HMAC-SHA256 of the exact bytes under BANK_PAYOUT_WEBHOOK_SECRET). Without VND=bank-http and that secret they answer 404. See docs/payouts.md.',
  },
  {
    name: 'Sandbox',
    description: 'Only with `RAILS=sandbox`: an outside payer, outside invoices, blocks and test money.',
  },
  { name: 'Operations', description: 'Liveness, readiness and metrics for operators; no token needed.' },
]

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'])

/** The error answers of the operation's codes (errors.ts) that its route does not declare. */
function addErrorAnswers(op: Json, operationId: string | undefined): void {
  if (!operationId) return
  op.responses ??= {}
  for (const status of errorStatusesOf(operationId)) {
    op.responses[status] ??= {
      description: 'Default Response',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
    }
  }
}

/**
 * One error answer of an operation: its description names only the codes the operation answers
 * with this status, the body's `error` is an enum of them, and its example is one of them.
 */
function describeErrorAnswer(response: Json, codes: readonly string[], status: string): void {
  if (codes.length === 0) return
  if (!response.description || response.description === 'Default Response') {
    response.description = codes
      .map((code) => `\`${code}\`: ${CODE_MEANINGS[code as keyof typeof CODE_MEANINGS]}.`)
      .join(' ')
  }
  const media = response.content?.['application/json']
  if (!media) return
  if (media.schema?.$ref === '#/components/schemas/ErrorBody') {
    media.schema.properties = { error: { type: 'string', enum: [...codes] } }
  }
  if (!media.example && !media.examples) {
    const shared = ERROR_EXAMPLES[status]
    media.example =
      shared && codes.includes(shared.error)
        ? shared
        : { error: codes[0], message: capitalized(CODE_MEANINGS[codes[0] as keyof typeof CODE_MEANINGS]) }
  }
}

/**
 * `transformObject` of @fastify/swagger: completes every operation's answers. Error answers that
 * refer to the shared ErrorBody name the operation's own codes (errors.ts) in their
 * description and an enum, and show an example of one of them; every answer of a counted
 * route (all but the operational ones) lists the rate-limit headers.
 */
export function finishOpenapi(documentObject: { openapiObject: unknown } | { swaggerObject: unknown }): Json {
  if (!('openapiObject' in documentObject)) return documentObject.swaggerObject as Json
  const openapiObject = documentObject.openapiObject as Json
  openapiObject.tags ??= TAGS
  openapiObject.components ??= {}
  openapiObject.components.headers = { ...openapiObject.components.headers, ...RATE_LIMIT_HEADERS }
  for (const [path, item] of Object.entries(openapiObject.paths ?? {}) as [string, Json][]) {
    const counted = !RATE_LIMIT_EXEMPT_PATHS.has(path)
    for (const [method, op] of Object.entries(item) as [string, Json][]) {
      if (!HTTP_METHODS.has(method)) continue
      const operationId = op.operationId ?? OPERATION_IDS[`${method.toUpperCase()} ${path}`]
      addErrorAnswers(op, operationId)
      for (const [status, response] of Object.entries(op.responses ?? {}) as [string, Json][]) {
        const isError = !/^[23]/.test(status)
        if (isError) {
          describeErrorAnswer(response, errorCodesOf(operationId, Number(status)), status)
        } else if (response.description === 'Default Response') {
          response.description = 'Success'
        }
        if (counted) {
          response.headers = {
            ...response.headers,
            'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
            'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
            'X-RateLimit-Reset': { $ref: '#/components/headers/X-RateLimit-Reset' },
            ...(status === '429' ? { 'Retry-After': { $ref: '#/components/headers/Retry-After' } } : {}),
          }
        }
      }
    }
  }
  // operationIds, public operations' empty security, the license (src/openapi/operations.ts).
  describeOperations(openapiObject)
  return openapiObject
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}
