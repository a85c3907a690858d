import { loadConfig } from '../config/config.js'
import { readAdminToken } from '../config/local-secrets.js'
import { CliError } from './args.js'

/** The body of a refusal of the admin API. */
interface ErrorBody {
  error?: string
  message?: string
}

/**
 * A request to a running server's admin API (so it works while the embedded database is open),
 * found at SVCPAY_URL or http://localhost:$PORT with the admin token from ADMIN_TOKEN or DATA_DIR.
 */
export async function send(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  const config = loadConfig()
  const base = (process.env.SVCPAY_URL || `http://localhost:${config.port}`).replace(/\/$/, '')
  const token = readAdminToken(config)
  if (!token)
    throw new CliError(
      `No admin token: set ADMIN_TOKEN or start the server once with DATA_DIR=${config.dataDir}`,
    )
  try {
    return await fetch(base + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body ? JSON.stringify(body) : undefined,
    })
  } catch {
    throw new CliError(`Cannot reach svcpay at ${base}: is the server running? (set SVCPAY_URL)`)
  }
}

/**
 * A request whose answer is JSON of the shape `T` (the admin API's, as its routes declare it);
 * a refusal is a CliError of its code and message.
 */
export async function call<T>(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const res = await send(method, path, body, headers)
  const text = await res.text()
  const json: unknown = text ? JSON.parse(text) : {}
  if (!res.ok) throw refusal(res, json as ErrorBody, text)
  return json as T
}

/** The CliError of a refused request, from its JSON body when it has one. */
export function refusal(res: Response, json: ErrorBody, text: string): CliError {
  return new CliError(`${json.error ?? res.status}: ${json.message ?? text}`)
}

/** A list answer of the admin API. */
export interface DataList<T> {
  data: T[]
}
