import type { FastifyInstance } from 'fastify'

/** Forms are small: a search, a sign-in, a button with its CSRF token. */
const FORM_BODY_LIMIT = 16 * 1024

/**
 * Parses the console's HTML form posts (application/x-www-form-urlencoded) into a plain object of
 * strings; a repeated name keeps its last value. Only in the console's scope: the rest of the API
 * speaks JSON alone.
 */
export function installFormBody(app: FastifyInstance): void {
  app.addContentTypeParser(
    /^application\/x-www-form-urlencoded\s*(;.*)?$/i,
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (_request, body, done) => {
      const out: Record<string, string> = Object.create(null)
      for (const [k, v] of new URLSearchParams(body as string)) out[k] = v
      done(null, out)
    },
  )
}
