import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { Config } from '../config/config.js'
import type { Queryable } from '../db/db.js'
import { applyRateLimitHeaders } from '../http/rate-limit.js'
import { encodeLnurl } from '../lightning/address/lnurl-encoding.js'
import { lightningAddressOf, wellKnownUrl } from '../lightning/address/lnurl.js'
import { isUsernameShape } from '../lightning/address/names.js'
import { addressByUsername } from '../lightning/address/service.js'
import { PAGE_CONTENT_TYPE, createNonce, pageSecurityHeaders } from './headers.js'
import { pickLanguage } from './i18n.js'
import { renderLnAddressPage } from './ln-address-page.js'
import { MESSAGE_PAGE_STATUS, renderMessagePage, type MessagePageKind } from './render.js'
import { pagePathPrefix } from './routes.js'

/**
 * `{INVOICE_PAGE_URL}/ln/{username}`: the hosted page of a Lightning Address, public like the
 * invoice pages and counted the same way, per client address; an unknown name gets the "not
 * found" page. The headers (CSP with a nonce, no sniffing, no framing) are those of every page.
 */
export function lnAddressPageRoutes(
  fastify: FastifyInstance,
  deps: { db: Queryable; config: Pick<Config, 'invoicePageUrl' | 'publicBaseUrl'> },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const prefix = pagePathPrefix(deps.config.invoicePageUrl)
  app.get(
    `${prefix}/ln/:username`,
    { schema: { hide: true, params: Type.Object({ username: Type.String() }) } },
    async (request, reply) => {
      const lang = pickLanguage(request.headers['accept-language'])
      const nonce = createNonce()
      reply.headers({ ...pageSecurityHeaders(nonce), Vary: 'Accept-Language' }).type(PAGE_CONTENT_TYPE)
      const message = (kind: MessagePageKind) =>
        reply.code(MESSAGE_PAGE_STATUS[kind]).send(renderMessagePage(kind, lang, { nonce }))
      const decision = await request.server.rateLimiter.consumeAnonymous(request.ip)
      applyRateLimitHeaders(reply, decision)
      if (!decision.allowed) return message('too_many_requests')
      const { username } = request.params
      const address = isUsernameShape(username) ? await addressByUsername(deps.db, username) : undefined
      if (!address) return message('not_found')
      const html = await renderLnAddressPage(
        {
          username,
          address: lightningAddressOf(deps.config, username),
          lnurl: encodeLnurl(wellKnownUrl(deps.config, username)).toUpperCase(),
        },
        lang,
        nonce,
      )
      return reply.code(200).send(html)
    },
  )
}
