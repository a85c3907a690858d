/**
 * Checks JSON request bodies against the parts of LND's REST (swagger 2.0) definitions that svcpay
 * uses, committed as test/fixtures/lnd-v<version>-swagger.json. The rules are those of LND's REST
 * gateway: grpc-gateway decodes a body with protojson, and LND sets no `DiscardUnknown`
 * (lnrpc/rpc_utils.go RESTJsonUnmarshalOpts), so a field the message does not have is refused with
 * InvalidArgument; 64-bit integers are decimal strings, `bytes` are base64, enums are their names.
 * Test code only.
 */
import { readFileSync } from 'node:fs'

export const LND_SWAGGER_VERSION = 'v0.21.2-beta'

interface Schema {
  type?: string
  format?: string
  $ref?: string
  properties?: Record<string, Schema>
  items?: Schema
  enum?: string[]
  additionalProperties?: Schema | boolean
}

interface Operation {
  parameters?: Array<{
    name: string
    in: string
    required?: boolean
    type?: string
    format?: string
    schema?: Schema
  }>
}

export interface LndSwagger {
  paths: Record<string, Record<string, Operation>>
  definitions: Record<string, Schema>
}

export function loadLndSwagger(): LndSwagger {
  const url = new URL(`../fixtures/lnd-${LND_SWAGGER_VERSION}-swagger.json`, import.meta.url)
  return JSON.parse(readFileSync(url, 'utf8')) as LndSwagger
}

/** The swagger path template a concrete path matches, with its path parameters. */
export function matchPath(
  swagger: LndSwagger,
  method: string,
  path: string,
): { template: string; params: Record<string, string>; operation: Operation } | undefined {
  const bare = path.split('?')[0]!
  for (const [template, ops] of Object.entries(swagger.paths)) {
    const operation = ops[method.toLowerCase()]
    if (!operation) continue
    const names: string[] = []
    const re = new RegExp(
      '^' +
        template.replace(/\{([^}]+)\}/g, (_m, name: string) => {
          names.push(name)
          return '([^/]+)'
        }) +
        '$',
    )
    const m = re.exec(bare)
    if (!m) continue
    const params: Record<string, string> = {}
    names.forEach((n, i) => (params[n] = decodeURIComponent(m[i + 1]!)))
    return { template, params, operation }
  }
  return undefined
}

/** The body schema of an operation, if it takes one. */
export function bodySchema(operation: Operation): Schema | undefined {
  return operation.parameters?.find((p) => p.in === 'body')?.schema
}

const BASE64_RE = /^(?:[A-Za-z0-9+/_-]{4})*(?:[A-Za-z0-9+/_-]{2}(?:==)?|[A-Za-z0-9+/_-]{3}=?)?$/

/**
 * Problems of `value` against `schema`, one sentence each (empty when it conforms). `at` names the
 * place, e.g. `body.fee_limit_msat`.
 */
export function schemaProblems(swagger: LndSwagger, schema: Schema, value: unknown, at = 'body'): string[] {
  if (schema.$ref) {
    const name = schema.$ref.split('/').pop()!
    const def = swagger.definitions[name]
    if (!def) return [`${at}: the fixture lacks definition ${name}`]
    return schemaProblems(swagger, def, value, at)
  }
  if (schema.enum) {
    return typeof value === 'string' && schema.enum.includes(value)
      ? []
      : [`${at}: ${JSON.stringify(value)} is not one of ${schema.enum.join(', ')}`]
  }
  switch (schema.type) {
    case 'string':
      if (typeof value !== 'string') return [`${at}: expected a string, got ${JSON.stringify(value)}`]
      if ((schema.format === 'int64' || schema.format === 'uint64') && !/^-?\d+$/.test(value))
        return [`${at}: expected a decimal integer string, got ${JSON.stringify(value)}`]
      if (schema.format === 'byte' && !BASE64_RE.test(value))
        return [`${at}: expected base64, got ${JSON.stringify(value)}`]
      return []
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value)
        ? []
        : [`${at}: expected an integer, got ${JSON.stringify(value)}`]
    case 'number':
      return typeof value === 'number' ? [] : [`${at}: expected a number, got ${JSON.stringify(value)}`]
    case 'boolean':
      return typeof value === 'boolean' ? [] : [`${at}: expected a boolean, got ${JSON.stringify(value)}`]
    case 'array': {
      if (!Array.isArray(value)) return [`${at}: expected an array`]
      return value.flatMap((v, i) => schemaProblems(swagger, schema.items ?? {}, v, `${at}[${i}]`))
    }
    case 'object':
    case undefined: {
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        return [`${at}: expected an object, got ${JSON.stringify(value)}`]
      const problems: string[] = []
      for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
        const prop = schema.properties?.[key]
        if (prop) problems.push(...schemaProblems(swagger, prop, v, `${at}.${key}`))
        else if (typeof schema.additionalProperties === 'object')
          problems.push(...schemaProblems(swagger, schema.additionalProperties, v, `${at}.${key}`))
        else if (schema.additionalProperties !== true) problems.push(`${at}: unknown field "${key}"`)
      }
      return problems
    }
    default:
      return [`${at}: the fixture has an unknown type ${schema.type}`]
  }
}
