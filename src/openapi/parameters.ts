/**
 * Parameters of /openapi.json as generators should type them, where the route's validation schema
 * cannot say it. Query values arrive as text and the routes check them themselves (the list's
 * `limit=007` is 7, `limit=` the default, `1e1` refused): their validation schemas take strings, and
 * changing those would change what the service accepts. The document instead says what a client
 * should send: integers for page sizes and numbers, the values a filter takes, comma-separated lists
 * as arrays (`style: form, explode: false` is `txnStatuses=completed,failed`), and the token
 * exchange's headers as required. Every value comes from the constant its route checks against;
 * test/openapi-parameters.test.ts sends each documented value to the service.
 */

import { TXN_STATES } from '../shared/txn-states.js'
import {
  LIST_METHODS,
  LIST_TIMES,
  LIST_VALUES_MAX,
  PAGE_MAX,
  PAGE_SIZE_DEFAULT,
  PAGE_SIZE_MAX,
} from '../transactions/list.js'
import {
  DELIVERY_PAGE_MAX,
  DELIVERY_PAGE_SIZE_DEFAULT,
  DELIVERY_PAGE_SIZE_MAX,
  DELIVERY_STATUSES,
} from '../events/delivery-records.js'

type Json = Record<string, any>

/** What replaces a parameter's entry: its schema, and other fields of the Parameter Object. */
interface ParameterDoc {
  schema?: Json
  required?: boolean
  style?: string
  explode?: boolean
}

const integer = (min: number, max: number, fallback: number): Json => ({
  type: 'integer',
  minimum: min,
  maximum: max,
  default: fallback,
})

const commaList = (values: readonly string[]): ParameterDoc => ({
  style: 'form',
  explode: false,
  schema: { type: 'array', items: { type: 'string', enum: [...values] }, maxItems: LIST_VALUES_MAX },
})

/** `METHOD /path` -> `in:name` -> what the document says of that parameter. */
const PARAMETER_DOCS: Readonly<Record<string, Readonly<Record<string, ParameterDoc>>>> = {
  'POST /api/v2/authentication/token-signature': {
    'header:x-api-key': { required: true },
    'header:x-api-signature': { required: true },
  },
  'GET /api/v2/transaction': {
    'query:time': { schema: { type: 'string', enum: LIST_TIMES, default: '30d' } },
    'query:txnStatuses': commaList(TXN_STATES),
    'query:srcMethods': commaList(LIST_METHODS),
    'query:destMethods': commaList(LIST_METHODS),
    'query:excludedSrcMethods': commaList(LIST_METHODS),
    'query:excludedDestMethods': commaList(LIST_METHODS),
    'query:limit': { schema: integer(1, PAGE_SIZE_MAX, PAGE_SIZE_DEFAULT) },
    'query:page': { schema: integer(1, PAGE_MAX, 1) },
  },
  'GET /api/v2/webhook/{webhookId}/deliveries': {
    'query:limit': { schema: integer(1, DELIVERY_PAGE_SIZE_MAX, DELIVERY_PAGE_SIZE_DEFAULT) },
    'query:page': { schema: integer(1, DELIVERY_PAGE_MAX, 1) },
    'query:status': { schema: { type: 'string', enum: [...DELIVERY_STATUSES] } },
  },
}

/** Applies PARAMETER_DOCS to one operation; a description of the route's own stays. */
export function describeParameters(key: string, op: Json): void {
  const docs = PARAMETER_DOCS[key]
  if (!docs) return
  for (const parameter of (op.parameters ?? []) as Json[]) {
    const doc = docs[`${parameter.in}:${parameter.name}`]
    if (!doc) continue
    const description = parameter.schema?.description
    Object.assign(parameter, doc)
    if (doc.schema && description) parameter.schema = { ...doc.schema, description }
  }
}
