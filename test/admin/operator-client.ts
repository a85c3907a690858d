import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { fromBase32, totp } from '../../src/operators/totp.js'
import type { Role } from '../../src/operators/permissions.js'

/**
 * An operator's side of the operator API, for tests: created with the admin token, set up with
 * password and TOTP, signed in with a session cookie and its CSRF token. Test code only.
 */
export const OPERATOR_PASSWORD = 'a long enough test password'

export interface TestOperator {
  id: string
  email: string
  role: Role
  secret: Buffer
}

export interface Session {
  cookie: string
  csrfToken: string
  setCookie: string
}

export interface Answer {
  status: number
  body: any
  headers: Record<string, any>
  raw: string
}

export function operatorClient(app: FastifyInstance, adminToken: string) {
  async function request(
    method: string,
    url: string,
    opts: { session?: Session; csrf?: string | false; token?: string; body?: unknown; host?: string } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = {}
    if (opts.token) headers.authorization = `Bearer ${opts.token}`
    if (opts.session) headers.cookie = opts.session.cookie
    const csrf = opts.csrf === undefined ? opts.session?.csrfToken : opts.csrf
    if (csrf) headers['x-csrf-token'] = csrf
    if (opts.host) headers.host = opts.host
    if (opts.body !== undefined) headers['content-type'] = 'application/json'
    const res = await app.inject({
      method: method as 'GET',
      url,
      headers,
      payload: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    })
    let body: any
    try {
      body = res.body ? JSON.parse(res.body) : undefined
    } catch {
      body = undefined
    }
    return { status: res.statusCode, body, headers: res.headers, raw: res.body }
  }

  const asSystem = async (method: string, url: string, body?: unknown) => {
    const res = await request(method, url, { token: adminToken, body })
    if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${res.raw}`)
    return res.body
  }

  /** A new active operator of a role (its set-up uses the current TOTP step). */
  async function createOperator(
    role: Role,
    email = `${role}-${randomBytes(5).toString('hex')}@example.com`,
  ): Promise<TestOperator> {
    const created = await asSystem('POST', '/admin/operators', { email, role })
    const begun = await request('POST', '/admin/setup/begin', { body: { setupSecret: created.setupSecret } })
    if (begun.status !== 200) throw new Error(`setup/begin: ${begun.status} ${begun.raw}`)
    const secret = fromBase32(begun.body.totpSecret)
    const finished = await request('POST', '/admin/setup/finish', {
      body: { setupSecret: created.setupSecret, password: OPERATOR_PASSWORD, code: totp(secret, Date.now()) },
    })
    if (finished.status !== 200) throw new Error(`setup/finish: ${finished.status} ${finished.raw}`)
    return { id: created.operator.id, email, role, secret }
  }

  /** Signs in with the code of the next time step (the set-up used the current one). */
  async function signIn(op: TestOperator, opts: { host?: string; atMs?: number } = {}): Promise<Session> {
    const res = await request('POST', '/admin/session', {
      body: {
        email: op.email,
        password: OPERATOR_PASSWORD,
        code: totp(op.secret, opts.atMs ?? Date.now() + 30_000),
      },
      ...(opts.host ? { host: opts.host } : {}),
    })
    if (res.status !== 200) throw new Error(`sign-in: ${res.status} ${res.raw}`)
    const setCookie = String(res.headers['set-cookie'])
    return { cookie: setCookie.split(';')[0]!, csrfToken: res.body.csrfToken, setCookie }
  }

  return { request, asSystem, createOperator, signIn }
}
