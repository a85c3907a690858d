import { createHash } from 'node:crypto'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Config } from '../config/config.js'
import type { Queryable } from '../db/db.js'
import type { Notifier } from '../events/notifier.js'
import { liveStreams } from '../events/live-streams.js'
import { applyRateLimitHeaders, rateLimitErrorBody } from '../http/rate-limit.js'
import type { RatesService } from '../rates/service.js'
import { ApiError } from '../shared/errors.js'
import { openSse, type SsePump } from '../http/sse.js'
import {
  PAGE_CONTENT_TYPE,
  PAGE_CSS_CONTENT_TYPE,
  PAGE_SCRIPT_CONTENT_TYPE,
  createNonce,
  pageSecurityHeaders,
} from './headers.js'
import { pickLanguage, type Lang } from './i18n.js'
import { PAGE_SCRIPT } from './page-script.js'
import { isFinalPageState, pageStatusEvent, publicPageStatus, type PageStatus } from './page-status.js'
import { MESSAGE_PAGE_STATUS, renderInvoicePage, renderMessagePage, type MessagePageKind } from './render.js'
import { PAGE_CSS } from './styles.js'
import {
  buildInvoicePageView,
  fiatValue,
  findPage,
  isPageIdShape,
  pageStatusOf,
  readPageSnapshot,
  type PageSnapshot,
} from './view.js'

/**
 * The hosted invoice page, public and read-only: `{INVOICE_PAGE_URL}/{pageId}` (the HTML page),
 * `{INVOICE_PAGE_URL}/{pageId}/events` (its live status as server-sent events) and the page's
 * script and stylesheet under `{INVOICE_PAGE_URL}/assets/`. The routes are mounted at the path of
 * INVOICE_PAGE_URL (`/pay` by default), so a proxy that sends that URL's host to this service
 * needs no rewriting. Anyone with the link may read the page, so every request counts against its
 * client address's request limit and a client address may hold only so many streams open.
 */

export interface InvoicePageDeps {
  db: Queryable
  rates: RatesService
  notifier: Notifier
  config: Pick<
    Config,
    | 'invoicePageUrl'
    | 'onchainConfirmations'
    | 'pageFiatCcy'
    | 'pageStreamsPerAddressMax'
    | 'streamHeartbeatMs'
  >
}

/**
 * While a payment waits for confirmations the stream re-reads the count this often: the deposit
 * watcher updates it without a state change, so no notification announces it.
 */
const CONFIRMATIONS_POLL_MS = 5_000
/** The assets change only with a new release; their URLs carry a version, so they may be cached for a year. */
const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable'

interface Asset {
  body: string
  contentType: string
  etag: string
}

function asset(body: string, contentType: string): Asset {
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 16)
  return { body, contentType, etag: `"${hash}"` }
}

const SCRIPT_ASSET = asset(PAGE_SCRIPT, PAGE_SCRIPT_CONTENT_TYPE)
const CSS_ASSET = asset(PAGE_CSS, PAGE_CSS_CONTENT_TYPE)

/** The path the pages are served under: INVOICE_PAGE_URL's path without its trailing slash ('' for the root). */
export function pagePathPrefix(invoicePageUrl: string): string {
  return new URL(invoicePageUrl).pathname.replace(/\/+$/, '')
}

export function invoicePageRoutes(fastify: FastifyInstance, deps: InvoicePageDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const prefix = pagePathPrefix(deps.config.invoicePageUrl)
  // The version in the query string changes with the content, so a long cache never serves an old script.
  const scriptUrl = `${prefix}/assets/page.js?v=${SCRIPT_ASSET.etag.slice(1, -1)}`
  const stylesheetUrl = `${prefix}/assets/page.css?v=${CSS_ASSET.etag.slice(1, -1)}`
  const need = deps.config.onchainConfirmations
  const streams = liveStreams(fastify, deps.notifier, {
    perHolderMax: deps.config.pageStreamsPerAddressMax,
    holderFull: `At most ${deps.config.pageStreamsPerAddressMax} payment page streams may be open at once from one address`,
    processFull: 'Too many live pages are open; reload shortly',
  })

  const sendMessage = (reply: FastifyReply, kind: MessagePageKind, lang: Lang): FastifyReply =>
    reply
      .code(MESSAGE_PAGE_STATUS[kind])
      .headers({ ...pageSecurityHeaders(createNonce()), Vary: 'Accept-Language' })
      .type(PAGE_CONTENT_TYPE)
      .send(renderMessagePage(kind, lang, { stylesheetUrl }))

  /** Counts the request against its client address; a page answers a refusal in the payer's language. */
  const limitPage = async (request: FastifyRequest, reply: FastifyReply) => {
    const decision = await request.server.rateLimiter.consumeAnonymous(request.ip)
    applyRateLimitHeaders(reply, decision)
    if (!decision.allowed) return sendMessage(reply, 'too_many_requests', langOf(request))
  }
  const limitOther = async (request: FastifyRequest, reply: FastifyReply) => {
    const decision = await request.server.rateLimiter.consumeAnonymous(request.ip)
    applyRateLimitHeaders(reply, decision)
    if (!decision.allowed) throw new ApiError('rate_limit_exceeded', rateLimitErrorBody(decision).message)
  }

  const serveAsset = (path: string, a: Asset) =>
    app.get(path, { preHandler: limitOther, schema: { hide: true } }, async (request, reply) => {
      reply.headers({
        'Cache-Control': ASSET_CACHE_CONTROL,
        ETag: a.etag,
        'X-Content-Type-Options': 'nosniff',
      })
      if (request.headers['if-none-match'] === a.etag) return reply.code(304).send()
      return reply.type(a.contentType).send(a.body)
    })
  serveAsset(`${prefix}/assets/page.js`, SCRIPT_ASSET)
  serveAsset(`${prefix}/assets/page.css`, CSS_ASSET)

  // Any text is a page id to look up (one of another shape is simply not found), so this schema
  // types the parameter without refusing anything: a payer always gets a page, never a JSON error.
  const params = Type.Object({ pageId: Type.String() })

  app.get(
    `${prefix}/:pageId`,
    { preHandler: limitPage, schema: { hide: true, params } },
    async (request, reply) => {
      const { pageId } = request.params
      const lang = langOf(request)
      const record = await findPage(deps.db, pageId)
      if (!record) return sendMessage(reply, 'not_found', lang)
      if (record.state === 'expired') return sendMessage(reply, 'expired', lang)
      // A bitcoin amount is also shown in PAGE_FIAT_CCY; an amount of đồng is what it is.
      const fiat =
        record.kind === 'vnd_receive'
          ? undefined
          : await fiatValue(deps.rates, deps.config.pageFiatCcy, record.srcAmount)
      const view = buildInvoicePageView(pageId, record, { confirmationsNeeded: need, fiat })
      const nonce = createNonce()
      const html = await renderInvoicePage(view, lang, {
        nonce,
        streamUrl: `${prefix}/${pageId}/events`,
        scriptUrl,
      })
      return reply
        .code(200)
        .headers({ ...pageSecurityHeaders(nonce), Vary: 'Accept-Language' })
        .type(PAGE_CONTENT_TYPE)
        .send(html)
    },
  )

  app.get(
    `${prefix}/:pageId/events`,
    // A HEAD request would take over the connection like a GET; there is nothing to describe.
    { preHandler: limitOther, exposeHeadRoute: false, schema: { hide: true, params } },
    async (request, reply) => {
      const { pageId } = request.params
      const record = isPageIdShape(pageId) ? await findPage(deps.db, pageId) : undefined
      if (!record) throw new ApiError('not_found', 'Payment page not found')
      const read = () => readPageSnapshot(deps.db, record.txnId, need)

      const first = pageStatusOf(record, need)
      if (isFinalPageState(first.state)) {
        // Nothing will change any more: say so and close, without holding a subscription.
        const stream = openSse(reply, {
          headers: PAGE_STREAM_HEADERS,
          heartbeatMs: deps.config.streamHeartbeatMs,
          read: async () => {},
          onEnd: () => {},
        })
        stream.write(pageStatusEvent(first))
        stream.end()
        return
      }

      await streams.open(request.ip, record.txnId, (onEnd) =>
        sendPageStream(reply, {
          read,
          heartbeatMs: deps.config.streamHeartbeatMs,
          confirmationsPollMs: Math.min(CONFIRMATIONS_POLL_MS, deps.config.streamHeartbeatMs),
          onEnd,
        }),
      )
    },
  )
}

function langOf(request: FastifyRequest): Lang {
  return pickLanguage(request.headers['accept-language'])
}

/** The page stream's headers: never cached, never sniffed. */
const PAGE_STREAM_HEADERS = { 'cache-control': 'no-store, no-transform', 'x-content-type-options': 'nosniff' }

interface PageStreamOptions {
  read: () => Promise<PageSnapshot | undefined>
  heartbeatMs: number
  confirmationsPollMs: number
  /** Runs once when the stream ends for any reason: release the subscription and the slot here. */
  onEnd: () => void
  now?: () => number
}

/**
 * Writes one page's status as `event: status` messages (`pageStatusEvent`, nothing else), each
 * time it changes, and closes after a final state. A notification only says "this transaction
 * changed"; the status is read from the database every time, so a lost or doubled notification
 * is harmless and the keep-alive beat re-reads as well.
 *
 * A receive still awaiting payment past its expiry is not announced as awaiting: the page has
 * already shown it expired by its own clock, and the receive may still be paid by a payment that
 * was on its way (the node's grace period). Its real end, paid or expired, follows.
 */
function sendPageStream(reply: FastifyReply, opts: PageStreamOptions): SsePump {
  const now = opts.now ?? Date.now
  let lastSent: string | undefined
  let confirmationsPoll: ReturnType<typeof setInterval> | undefined

  const send = (stream: SsePump, status: PageStatus): void => {
    const event = pageStatusEvent(publicPageStatus(status))
    if (event === lastSent) return
    lastSent = event
    stream.write(event)
    // Confirmations change without a notification; poll for them only while they matter.
    if (status.state === 'seen') confirmationsPoll ??= setInterval(stream.pump, opts.confirmationsPollMs)
    else if (confirmationsPoll) {
      clearInterval(confirmationsPoll)
      confirmationsPoll = undefined
    }
    if (isFinalPageState(status.state)) stream.end()
  }

  return openSse(reply, {
    headers: PAGE_STREAM_HEADERS,
    heartbeatMs: opts.heartbeatMs,
    async read(stream) {
      const snapshot = await opts.read()
      if (stream.ended) return
      if (!snapshot) return stream.end()
      const { status, expiresAtMs } = snapshot
      if (status.state === 'awaiting_payment' && now() >= expiresAtMs) return
      send(stream, status)
    },
    onEnd: () => {
      clearInterval(confirmationsPoll)
      opts.onEnd()
    },
  })
}
