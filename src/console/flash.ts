import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { readCookie, SESSION_COOKIE } from '../operators/guard.js'
import type { Db } from '../db/db.js'
import { sql } from '../db/sql.js'
import { CONSOLE_BASE, type Section } from './nav.js'

/**
 * Post/Redirect/Get for the console's forms. A form that succeeds answers 303 See Other to
 * `/admin/console/done/:flashId`, a GET page showing what was done; reloading that page, or going
 * back to it, never posts the form again. The result page is kept server-side as a "flash": one row
 * of console_flashes, written in the form's own database transaction (so a change that rolls back
 * leaves no result), shown once and deleted by the GET that shows it.
 *
 * A result may hold a secret shown once (a new API key's secret, an operator's set-up secret), so
 * the row is sealed with AES-256-GCM under a key derived from the operator's credential (the
 * session cookie, or the admin token), which the database never holds; it is bound to that
 * credential (only the same session can take it), its id is random and authenticated with it, and
 * it lives FLASH_TTL_MS at most. At most FLASHES_PER_OWNER wait per credential; older ones go.
 */
export const FLASH_TTL_MS = 10 * 60_000
export const FLASHES_PER_OWNER = 20
const FLASH_BYTES_MAX = 256 * 1024
const FLASH_ID = /^[A-Za-z0-9_-]{24}$/

export interface Flash {
  title: string
  /** The rendered body, escaped as it was when the form was answered. */
  body: string
  section?: Section
}

export interface FlashStore {
  /** Keeps a result for this credential; returns the id of its page. */
  put(credential: string, flash: Flash): Promise<string>
  /** The result once, for the same credential; undefined if taken, expired, foreign or unknown. */
  take(credential: string | undefined, id: string): Promise<Flash | undefined>
}

declare module 'fastify' {
  interface FastifyInstance {
    consoleFlashes: FlashStore
  }
}

/** The credential the guard admitted this request with: the session cookie, or the admin token. */
export function operatorCredential(request: FastifyRequest): string | undefined {
  const actor = request.operator
  if (actor?.via === 'session') return readCookie(request.headers.cookie, SESSION_COOKIE)
  if (actor?.via === 'token') return /^Bearer (.{1,512})$/.exec(request.headers.authorization ?? '')?.[1]
  return undefined
}

const ownerOf = (credential: string) =>
  createHash('sha256').update('svcpay console flash owner v1\0').update(credential).digest('base64url')
const keyOf = (credential: string) =>
  createHmac('sha256', credential).update('svcpay console flash key v1').digest()

export function createFlashStore(db: Db, now: () => number = Date.now): FlashStore {
  return {
    async put(credential, flash) {
      if (credential.length < 16) throw new Error('a console result needs the credential it is bound to')
      const plain = Buffer.from(JSON.stringify(flash), 'utf8')
      if (plain.length > FLASH_BYTES_MAX) throw new Error('a console result page is too large to keep')
      const id = randomBytes(18).toString('base64url')
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', keyOf(credential), iv)
      cipher.setAAD(Buffer.from(id))
      const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()])
      const owner = ownerOf(credential)
      const at = now()
      await db.query(sql`DELETE FROM console_flashes WHERE expires_at <= ${at}`)
      await db.query(
        sql`DELETE FROM console_flashes WHERE id IN (SELECT id FROM console_flashes WHERE owner_hash = ${owner}
           ORDER BY created_at DESC, id DESC OFFSET ${FLASHES_PER_OWNER - 1})`,
      )
      await db.query(
        sql`INSERT INTO console_flashes (id, owner_hash, sealed, created_at, expires_at)
            VALUES (${id}, ${owner}, ${sealed.toString('base64url')}, ${at}, ${at + FLASH_TTL_MS})`,
      )
      return id
    },

    async take(credential, id) {
      if (!credential || !FLASH_ID.test(id)) return undefined
      const { rows } = await db.query<{ sealed: string; expires_at: string }>(
        sql`DELETE FROM console_flashes WHERE id = ${id} AND owner_hash = ${ownerOf(credential)}
            RETURNING sealed, expires_at`,
      )
      const row = rows[0]
      if (!row || Number(row.expires_at) <= now()) return undefined
      try {
        const sealed = Buffer.from(row.sealed, 'base64url')
        const decipher = createDecipheriv('aes-256-gcm', keyOf(credential), sealed.subarray(0, 12))
        decipher.setAAD(Buffer.from(id))
        decipher.setAuthTag(sealed.subarray(sealed.length - 16))
        const plain = Buffer.concat([
          decipher.update(sealed.subarray(12, sealed.length - 16)),
          decipher.final(),
        ])
        return JSON.parse(plain.toString('utf8')) as Flash
      } catch {
        return undefined
      }
    },
  }
}

/** The path a successful form's 303 leads to, keeping a `?lang=` the form was posted with. */
export function resultPath(id: string, lang: string | undefined): string {
  return `${CONSOLE_BASE}/done/${id}${lang === 'en' || lang === 'vi' ? `?lang=${lang}` : ''}`
}

/** Where a sign-out's 303 leads: a page without a session, saying which sessions ended. */
export function signedOutPath(everywhere: boolean, lang: string | undefined): string {
  const query = [everywhere ? 'everywhere=1' : '', lang === 'en' || lang === 'vi' ? `lang=${lang}` : '']
    .filter(Boolean)
    .join('&')
  return `${CONSOLE_BASE}/signed-out${query ? `?${query}` : ''}`
}
