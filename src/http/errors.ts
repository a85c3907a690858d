import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Duplex } from 'node:stream'
import { ApiError, type ErrorDetail } from '../shared/errors.js'
import { InvariantError } from '../shared/assert.js'
import { isDbUnavailableError } from '../db/db.js'

/**
 * Every non-2xx answer has the contract's body `{ error, message, details? }` and never a stack
 * trace. Expected failures arrive as `ApiError`; Fastify's own errors are mapped by their code.
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | ApiError | Error, request, reply) => {
    const apiError = toApiError(err)
    if (apiError.status >= 500) {
      request.log.error({ err: redact(err) }, 'request failed')
    }
    void reply.status(apiError.status).send(apiError.toBody())
  })

  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send(new ApiError('not_found', 'No route answers this method and path').toBody())
  })
}

/**
 * Fastify's `frameworkErrors`: a URL the router cannot take apart (bad percent-encoding, a path
 * parameter over the router's length limit) is answered in the contract's shape too, not Fastify's.
 */
export function frameworkErrors(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const apiError =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new ApiError('invalid_request', 'A path parameter of the request URL is too long')
      : toApiError(err)
  void reply.status(apiError.status).send(apiError.toBody())
}

/**
 * Fastify's `clientErrorHandler`: what the HTTP parser refuses before there is a request (headers
 * over the size limit, broken framing, a request that never finishes) gets the contract's body as
 * well. The connection is closed afterwards, as Node does, since its framing cannot be trusted.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Duplex): void {
  // A reset connection has nobody left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const apiError =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError('invalid_request', 'The request headers are too large')
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError('invalid_request', 'The request did not arrive in time')
        : new ApiError('invalid_request', 'The request is malformed')
  if (socket.writable) {
    const body = JSON.stringify(apiError.toBody())
    socket.write(
      `HTTP/1.1 ${apiError.status} Bad Request\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy(err)
}

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err
  const e = err as FastifyError & {
    validation?: Array<{ instancePath: string; message?: string; params?: any }>
  }
  if (e?.validation) {
    const context = (e as any).validationContext ?? 'body'
    const details: ErrorDetail[] = e.validation.slice(0, 20).map((v) => ({
      field: fieldName(context, v.instancePath, v.params),
      issue: v.message ?? 'is invalid',
    }))
    return new ApiError(
      'invalid_request',
      `Invalid request: ${details.map((d) => `${d.field} ${d.issue}`).join('; ')}`,
      details,
    )
  }
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', 'The request body is larger than 64 KiB')
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('unsupported_media_type', 'Send the body as application/json')
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('invalid_json', 'The body is not valid JSON')
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return new ApiError('invalid_request', 'The request URL is malformed')
  }
  if (e?.statusCode === 413) return new ApiError('payload_too_large', 'The request is too large')
  if (e?.statusCode === 431) return new ApiError('invalid_request', 'The request headers are too large')
  if (e?.statusCode === 400 && !(err instanceof InvariantError)) {
    return new ApiError('invalid_request', 'The request is malformed')
  }
  if (isDbUnavailableError(err)) {
    return new ApiError('service_unavailable', 'The service is temporarily unavailable; try again shortly')
  }
  return new ApiError('internal_error', 'Something went wrong on our side; it has been logged')
}

function fieldName(context: string, instancePath: string, params: any): string {
  const path = instancePath
    .split('/')
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
  if (params?.missingProperty) path.push(params.missingProperty)
  if (params?.additionalProperty) path.push(params.additionalProperty)
  // A path may hold keys the client chose; error texts never echo input, so those are masked.
  return maskedFieldName(context, path)
}

function maskedFieldName(context: string, path: string[]): string {
  const prefix = context === 'body' ? '' : context === 'querystring' ? 'query.' : `${context}.`
  return prefix + (path.map(safeKey).join('.') || (context === 'body' ? 'body' : context))
}

const KEY_SHOWN = /^[A-Za-z0-9_-]{1,40}$/

/**
 * A key of a field path as it may appear in an error text: the schema's own names (and array
 * indexes) pass; anything else a client could have chosen is shown as `*`, never echoed.
 */
export function safeKey(key: string): string {
  return KEY_SHOWN.test(key) ? key : '*'
}

/** Log errors without anything a request may have carried in them. */
function redact(err: unknown): Record<string, unknown> {
  const e = err as Error & { code?: string }
  return { type: e?.name, code: e?.code, message: e?.message, stack: e?.stack }
}
